package relay

import (
	"bytes"
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/p2p"
)

// nopTransport accepts every frame and sends nothing.
type nopTransport struct{}

func (nopTransport) Send(context.Context, peer.ID, p2p.Protocol, []byte) error { return nil }
func (nopTransport) Handle(p2p.Protocol, p2p.Handler) error                    { return nil }

// FuzzDecodeFrame feeds arbitrary bytes to the msg and ack decoders and to the whole receive
// path of a node: nothing panics, a frame that decodes re-encodes to itself, and no garbage
// reaches Deliver.
func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{FrameVersion})
	f.Add(append([]byte{FrameVersion}, make([]byte, ticketOffset-1)...)) // the short frame of old: refused
	f.Add(append([]byte{FrameVersion}, make([]byte, MsgFrameLen-1)...))
	f.Add(append(append([]byte{FrameVersion}, make([]byte, MsgFrameLen-2)...), 1)) // a ticket slot not all zero
	f.Add(append([]byte{FrameVersion}, make([]byte, AckFrameLen-1)...))
	f.Add(append([]byte{2}, make([]byte, AckFrameLen-1)...))

	key, err := crypto.GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	delivered := 0
	r, err := New(Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), NoMixDelay: true,
		Deliver: func(Received) { delivered++ }, Payments: nil})
	if err != nil {
		f.Fatal(err)
	}
	from, _ := newKeyPair(f)
	fromID, err := identity.PeerIDFromPubKey(crypto.CompressPubkey(&from.PublicKey))
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		if pkt, tk, err := decodeMsgFrame(b); err == nil {
			re := append([]byte{FrameVersion}, pkt...)
			if tk == nil {
				tk = noTicket[:]
			}
			re = append(re, tk...)
			if !bytes.Equal(re, b) || len(b) != MsgFrameLen {
				t.Fatalf("msg frame does not re-encode")
			}
		}
		if id, ack, err := decodeAckFrame(b); err == nil {
			re := ackFrame(id, ack)
			if !bytes.Equal(re[:], b) {
				t.Fatalf("ack frame does not re-encode")
			}
		}
		r.handleMsg(t.Context(), fromID, b)
		r.handleAck(fromID, b)
		if delivered != 0 {
			t.Fatalf("garbage delivered")
		}
	})
}
