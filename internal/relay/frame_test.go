package relay

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/tickets"
)

// TestMsgFrameOneSize: a msg frame is MsgFrameLen bytes with a ticket and without one (then its
// ticket slot is all zero and decodes as no ticket); any other length is refused.
func TestMsgFrameOneSize(t *testing.T) {
	if MsgFrameLen != 1520 || PaidMsgFrameLen != MsgFrameLen || AckFrameLen != 49 {
		t.Fatalf("frame lengths msg %d paid %d ack %d, want 1520, 1520, 49 (docs/PROTOCOL.md §5.4)", MsgFrameLen, PaidMsgFrameLen, AckFrameLen)
	}
	pkt := bytes.Repeat([]byte{0xab}, packet.PacketSize)
	key, _ := newKeyPair(t)
	tk := tickets.Ticket{Index: 7, Epoch: 1, WinProb: tickets.MaxWinProb}
	tk.Amount.SetUint64(tickets.PricePerRelayer)
	tk.Challenge[0] = 1
	if err := tk.Sign(key, testChainID, testContract); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		t    *tickets.Ticket
	}{{"no ticket", nil}, {"ticket", &tk}} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := appendMsgFrame(nil, pkt, tc.t)
			if err != nil {
				t.Fatal(err)
			}
			if len(f) != MsgFrameLen {
				t.Fatalf("frame of %d bytes, want %d", len(f), MsgFrameLen)
			}
			gotPkt, gotTk, err := decodeMsgFrame(f)
			if err != nil || !bytes.Equal(gotPkt, pkt) {
				t.Fatalf("decode: %v", err)
			}
			if tc.t == nil {
				if gotTk != nil || !allZero(f[ticketOffset:]) {
					t.Fatalf("a frame without a ticket decodes a ticket slot %x", gotTk)
				}
				return
			}
			var back tickets.Ticket
			if err := back.UnmarshalBinary(gotTk); err != nil || back != tk {
				t.Fatalf("ticket does not round-trip: %v", err)
			}
		})
	}
	good, _ := appendMsgFrame(nil, pkt, nil)
	for _, n := range []int{0, 1, ticketOffset, MsgFrameLen - 1, MsgFrameLen + 1} {
		b := make([]byte, n)
		copy(b, good)
		if _, _, err := decodeMsgFrame(b); !errors.Is(err, ErrFrameSize) {
			t.Errorf("a %d-byte msg frame: %v, want ErrFrameSize", n, err)
		}
	}
	if _, err := appendMsgFrame(nil, pkt[1:], nil); !errors.Is(err, ErrFrameSize) {
		t.Fatalf("a short packet framed: %v", err)
	}
}

// TestShortMsgFrameDropped: the 1,352-byte frame without a ticket slot (the layout before one
// size) is dropped as a bad frame size, even when it carries a good packet; the full frame of
// the same packet is relayed.
func TestShortMsgFrameDropped(t *testing.T) {
	nodes := newNet(t, netOptions{edit: func(_ string, c *Config) { c.NoMixDelay = true }}, "A", "R1", "B")
	a, r1, b := nodes["A"], nodes["R1"], nodes["B"]
	if _, err := a.relay.Send(t.Context(), ids(r1, b), "one"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == 1 })
	a.transport.mu.Lock()
	frame := a.transport.sent[0]
	a.transport.mu.Unlock()
	if len(frame) != MsgFrameLen || !allZero(frame[ticketOffset:]) {
		t.Fatalf("unpaid frame of %d bytes, want %d with an all-zero ticket slot", len(frame), MsgFrameLen)
	}

	if _, err := a.relay.Send(t.Context(), ids(r1, b), "two"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "second delivery", func() bool { return len(b.deliveries()) == 2 })
	a.transport.mu.Lock()
	short := a.transport.sent[1][:ticketOffset]
	a.transport.mu.Unlock()
	before := dropped(r1, reasonFrameSize)
	// The same packet again, in the short frame: dropped for its size (not as a replay).
	if err := a.host.Send(t.Context(), r1.id(), p2p.ProtocolMsg, short); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "short frame dropped", func() bool { return dropped(r1, reasonFrameSize) == before+1 })
	if dropped(r1, reasonReplay) != 0 || counter(r1.relay.m.forwarded) != 2 {
		t.Fatalf("the short frame reached the packet stage: replay drops %v, forwarded %v", dropped(r1, reasonReplay), counter(r1.relay.m.forwarded))
	}
}
