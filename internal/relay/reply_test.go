package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/tickets"
)

// replyNet starts a replier R, relayers H0..H(relayers-1) and a block creator C, with channels
// R→H0, H0→H1, …, and the last relayer → C of one token each (paid), or none (unpaid). It
// returns the nodes and the return path's relayers in order.
func replyNet(t *testing.T, relayers int, paid bool, edit func(string, *Config)) (map[string]*testNode, []*testNode) {
	t.Helper()
	names := []string{"R"}
	for i := range relayers {
		names = append(names, fmt.Sprintf("H%d", i))
	}
	names = append(names, "C")
	opts := netOptions{edit: func(name string, cfg *Config) {
		cfg.NoMixDelay = true
		if edit != nil {
			edit(name, cfg)
		}
	}}
	if paid {
		opts.channels = channelstest.New()
	}
	nodes := newNet(t, opts, names...)
	if paid {
		for i := 1; i < len(names); i++ {
			opts.channels.Open(nodes[names[i-1]].addr, nodes[names[i]].addr, oneToken)
		}
	}
	hops := make([]*testNode, relayers)
	for i := range hops {
		hops[i] = nodes[names[i+1]]
	}
	return nodes, hops
}

// decodeBlock decodes what NewReplyBlock returned, as a replier does.
func decodeBlock(t *testing.T, block []byte) packet.ReplyBlock {
	t.Helper()
	var b packet.ReplyBlock
	if err := b.UnmarshalBinary(block); err != nil {
		t.Fatal(err)
	}
	return b
}

func keyring(n *testNode) *MemoryReplyKeyring { return n.relay.cfg.ReplyKeyring.(*MemoryReplyKeyring) }

// TestReply: C makes a reply block over two (three) relayers, R replies with it, and C receives
// the text byte for byte, marked as a reply. R pays the first hop what the block asks (its
// relayers and C's padding), which is what SendReply says it cost; every relayer holds one
// acknowledged ticket worth 0.01 less than the one before; C keeps the padding as a forward
// recipient does; C's keys are gone once the reply came.
func TestReply(t *testing.T) {
	texts := map[int]string{
		2: "a reply, in UTF-8: réponse, 答复, and bytes \x00\xff\x01",
		3: strings.Repeat("r", packet.MaxReplySize),
	}
	for relayers, text := range texts {
		t.Run(fmt.Sprintf("%d relayers", relayers), func(t *testing.T) {
			nodes, hops := replyNet(t, relayers, true, nil)
			rep, c := nodes["R"], nodes["C"]
			block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
			if err != nil {
				t.Fatal(err)
			}
			b := decodeBlock(t, block)
			pad := int(b.Amount) - relayers
			if len(block) != packet.ReplyBlockSize || b.FirstHop != hops[0].relay.key.PublicKey().Bytes() ||
				pad < 0 || pad > tickets.PadMax || keyring(c).Len() != 1 {
				t.Fatalf("block of %d bytes asks for %d units, first hop %x; C keeps %d keys", len(block), b.Amount, b.FirstHop, keyring(c).Len())
			}

			before := time.Now().Truncate(time.Millisecond)
			sent, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte(text)})
			if err != nil {
				t.Fatal(err)
			}
			want := tickets.AmountFor(int(b.Amount))
			if sent.Cost != want {
				t.Fatalf("the reply cost %s, the block asks for %s", sent.Cost.Dec(), want.Dec())
			}
			eventually(t, 10*time.Second, "the reply at C", func() bool { return len(c.deliveries()) == 1 })
			got := c.deliveries()[0]
			if got.Text != text || !got.Reply || !got.Relayed || got.SentAt.Before(before) || got.ReceivedAt.Before(got.SentAt) {
				t.Fatalf("C got %+v", got)
			}
			waitAck(t, rep, sent.Ack)

			// The replier's ticket, then each relayer's: 0.01 less at every hop.
			issued := rep.issuedTickets()
			if len(issued) != 1 || issued[0].Amount != want || issued[0].Challenge != [20]byte(b.Challenge) {
				t.Fatalf("R issued %+v, want one ticket of %s with the block's challenge", issued, want.Dec())
			}
			from := rep
			for i, h := range hops {
				eventually(t, 10*time.Second, h.name+"'s acknowledged ticket", func() bool {
					ts, err := h.ledger.Tickets()
					st, serr := h.ledger.Statistics()
					return err == nil && serr == nil && len(ts) == 1 && st.Pending == 0
				})
				ts, _ := h.ledger.Tickets()
				amount := tickets.AmountFor(int(b.Amount) - i)
				if ts[0].Source != from.addr || ts[0].Ticket.Amount != amount || !opens(ts[0].Response, ts[0].Ticket.Challenge) {
					t.Fatalf("%s holds %+v, want %s from %s with a response that opens it", h.name, ts[0], amount.Dec(), from.name)
				}
				from = h
			}
			// C's ticket is the padding: stored when more than 0, as at a forward recipient.
			accepted := c.payments.acceptedTickets()
			if padAmount := tickets.AmountFor(pad); len(accepted) != 1 || accepted[0].Amount != padAmount {
				t.Fatalf("C accepted %+v, want one ticket of %s", accepted, padAmount.Dec())
			}
			if pad > 0 {
				eventually(t, 10*time.Second, "C stores its padding", func() bool { ts, _ := c.ledger.Tickets(); return len(ts) == 1 })
				ts, _ := c.ledger.Tickets()
				if ts[0].Source != from.addr || !opens(ts[0].Response, ts[0].Ticket.Challenge) {
					t.Fatalf("C's ticket %+v", ts[0])
				}
			}
			if ts, _ := rep.ledger.Tickets(); len(ts) != 0 || keyring(c).Len() != 0 {
				t.Fatalf("R stored %d tickets; C still keeps %d keys", len(ts), keyring(c).Len())
			}
			if counter(c.relay.m.replyBlocks) != 1 || counter(c.relay.m.replies) != 1 || counter(rep.relay.m.repliesSent) != 1 {
				t.Fatal("reply counters")
			}
			for _, n := range append([]*testNode{rep}, hops...) {
				if len(n.deliveries()) != 0 {
					t.Fatalf("%s delivered the reply", n.name)
				}
			}
		})
	}
}

// TestReplyUnpaid: on an unpaid network a reply carries no ticket and arrives; a drop sent with
// a block is counted at C and not delivered.
func TestReplyUnpaid(t *testing.T) {
	nodes, hops := replyNet(t, 2, false, nil)
	rep, c := nodes["R"], nodes["C"]
	for _, msg := range []packet.Message{{Text: []byte("unpaid reply")}, {Drop: true}} {
		block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
		if err != nil {
			t.Fatal(err)
		}
		sent, err := rep.relay.SendReply(t.Context(), block, msg)
		if err != nil {
			t.Fatal(err)
		}
		if !sent.Cost.IsZero() {
			t.Fatalf("an unpaid reply cost %s", sent.Cost.Dec())
		}
		waitAck(t, rep, sent.Ack)
	}
	eventually(t, 10*time.Second, "the reply and the drop at C", func() bool {
		return len(c.deliveries()) == 1 && counter(c.relay.m.drops) == 1
	})
	if got := c.deliveries()[0]; got.Text != "unpaid reply" || !got.Reply || got.Relayed {
		t.Fatalf("C got %+v", got)
	}
}

// TestReplyBlockUsedTwice: a block makes one reply. While the replier remembers its first reply
// (AckTimeout), a second SendReply is refused before anything is sent or paid
// (ErrReplyBlockUsed). Once it has forgotten it, the second reply is sent with its ticket, and
// the first hop refuses the packet as a replay (its header, so its replay tag, is the first
// one's) before it reads the ticket: nothing is delivered or relayed, the first hop accepts no
// second ticket and never acknowledges, and the replier's loss is that one refused ticket.
func TestReplyBlockUsedTwice(t *testing.T) {
	const ackTimeout = 2 * time.Second
	nodes, hops := replyNet(t, 2, true, func(name string, cfg *Config) {
		if name == "R" {
			cfg.AckTimeout = ackTimeout
		}
	})
	rep, h0, h1, c := nodes["R"], hops[0], hops[1], nodes["C"]
	block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
	if err != nil {
		t.Fatal(err)
	}
	first, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("first")})
	if err != nil {
		t.Fatal(err)
	}
	// At once, while R remembers the first reply (for ackTimeout).
	if _, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("second")}); !errors.Is(err, ErrReplyBlockUsed) {
		t.Fatalf("second reply at once: %v, want ErrReplyBlockUsed", err)
	}
	if rep.sentFrames() != 1 || len(rep.issuedTickets()) != 1 {
		t.Fatalf("the refused reply left: %d frames, %d tickets", rep.sentFrames(), len(rep.issuedTickets()))
	}
	eventually(t, 10*time.Second, "the first reply", func() bool { return len(c.deliveries()) == 1 })
	eventually(t, 10*time.Second, "H0's acknowledgement", func() bool { return counter(rep.relay.m.acksReceived) == 1 })

	eventually(t, 10*time.Second, "R forgets its first reply", func() bool {
		e, _, _ := rep.relay.pend.waitSent(first.Ack)
		return e == nil
	})
	second, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("second")})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- rep.relay.WaitAck(context.Background(), second.Ack) }()
	if second.Cost != first.Cost || second.Ack != first.Ack {
		t.Fatalf("second reply: cost %s, first %s", second.Cost.Dec(), first.Cost.Dec())
	}
	eventually(t, 10*time.Second, "H0 refuses the replay", func() bool { return dropped(h0, reasonReplay) == 1 })
	select {
	case err := <-waited:
		if !errors.Is(err, ErrAckTimeout) && !errors.Is(err, ErrUnknownAck) { // ErrUnknownAck: the entry expired before WaitAck looked
			t.Fatalf("WaitAck of the second reply: %v, want ErrAckTimeout", err)
		}
	case <-time.After(10*time.Second + ackTimeout):
		t.Fatal("WaitAck of the second reply did not return")
	}
	if got := counter(rep.relay.m.acksReceived); got != 1 {
		t.Fatalf("R received %v acknowledgements, want the first reply's only", got)
	}
	if got := len(h0.payments.acceptedTickets()); got != 1 {
		t.Fatalf("H0 accepted %d tickets, want the first reply's only", got)
	}
	if st, _ := h0.ledger.Statistics(); st.Pending != 0 || st.Rejected != 0 {
		t.Fatalf("H0's statistics %+v: the second ticket is neither pending nor rejected", st)
	}
	if len(rep.issuedTickets()) != 2 || counter(h1.relay.m.received) != 1 || len(c.deliveries()) != 1 {
		t.Fatalf("R issued %d tickets, H1 received %v packets, C delivered %d", len(rep.issuedTickets()),
			counter(h1.relay.m.received), len(c.deliveries()))
	}
}

// TestReplyUnknownBlock: a reply whose keys C no longer has (its reply came, or a restart
// emptied a memory keyring) is acknowledged and its ticket kept, as any packet whose header is
// valid, then dropped and counted; the relayers are paid.
func TestReplyUnknownBlock(t *testing.T) {
	nodes, hops := replyNet(t, 2, true, nil)
	rep, c := nodes["R"], nodes["C"]
	block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
	if err != nil {
		t.Fatal(err)
	}
	k := keyring(c)
	k.mu.Lock()
	clear(k.keys)
	k.mu.Unlock()
	sent, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("to nobody")})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "C drops the reply", func() bool { return dropped(c, reasonReplyUnknown) == 1 })
	waitAck(t, rep, sent.Ack)
	for _, h := range hops {
		eventually(t, 10*time.Second, h.name+" paid", func() bool { ts, _ := h.ledger.Tickets(); return len(ts) == 1 })
	}
	if len(c.deliveries()) != 0 || counter(c.relay.m.replies) != 0 {
		t.Fatal("a reply without keys was delivered")
	}
}

// TestReplyAltered: a bit of a packet's payload flipped between the sender and its first hop
// passes the relayers (they authenticate headers only) and is refused by the recipient, for a
// reply (OpenReply fails) as for a forward message (its end-to-end tag fails). The recipient
// acknowledges it all the same, so the relayers are paid and the last of them cannot tell.
func TestReplyAltered(t *testing.T) {
	flip := func(frame []byte) { frame[1+packet.HeaderSize+100] ^= 0x10 }
	t.Run("reply", func(t *testing.T) {
		nodes, hops := replyNet(t, 2, true, nil)
		rep, c := nodes["R"], nodes["C"]
		block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
		if err != nil {
			t.Fatal(err)
		}
		rep.transport.mu.Lock()
		rep.transport.alter = flip
		rep.transport.mu.Unlock()
		sent, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("tampered on the way")})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "C drops the reply", func() bool { return dropped(c, reasonReplyPayload) == 1 })
		waitAck(t, rep, sent.Ack)
		for _, h := range hops {
			eventually(t, 10*time.Second, h.name+" paid", func() bool { ts, _ := h.ledger.Tickets(); return len(ts) == 1 })
		}
		if len(c.deliveries()) != 0 || keyring(c).Len() != 0 {
			t.Fatalf("C delivered %d; keeps %d keys", len(c.deliveries()), keyring(c).Len())
		}
	})
	t.Run("forward", func(t *testing.T) {
		nodes, _ := paidNet(t, nil)
		a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
		a.transport.mu.Lock()
		a.transport.alter = flip
		a.transport.mu.Unlock()
		sent, err := a.relay.Send(t.Context(), ids(r1, r2, b), "tampered on the way")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "B drops the message", func() bool { return dropped(b, reasonPayload) == 1 })
		waitAck(t, a, sent.Ack)
		for _, h := range []*testNode{r1, r2} {
			eventually(t, 10*time.Second, h.name+" paid", func() bool { ts, _ := h.ledger.Tickets(); return len(ts) == 1 })
		}
		if len(b.deliveries()) != 0 {
			t.Fatal("an altered message was delivered")
		}
	})
}

// TestReplyRefusedBeforeSending: garbage, blocks a paid replier must not use, expired blocks
// (the creator's clock behind or ahead by 25 minutes), a block whose first hop is the replier,
// and a text too long are refused with nothing sent or paid; so are bad return paths at the
// creator, with nothing kept.
func TestReplyRefusedBeforeSending(t *testing.T) {
	nodes, hops := replyNet(t, 2, true, nil)
	rep, c := nodes["R"], nodes["C"]
	block, err := c.relay.NewReplyBlock(t.Context(), ids(hops...))
	if err != nil {
		t.Fatal(err)
	}
	const amountAt = 1 + 4 + packet.PublicKeySize + 20 + 32 // the block's amount byte
	edit := func(f func(b []byte)) []byte { b := bytes.Clone(block); f(b); return b }
	random := make([]byte, packet.ReplyBlockSize)
	for i := range random {
		random[i] = byte(i*131 + 7)
	}
	random[0] = packet.ReplyBlockVersion
	bad := map[string][]byte{
		"nil": nil, "text": []byte("not a block"), "random": random, "short": block[:packet.ReplyBlockSize-1],
		"version 2":      edit(func(b []byte) { b[0] = 2 }),
		"no ticket":      edit(func(b []byte) { b[amountAt] = 0 }),
		"over the most":  edit(func(b []byte) { b[amountAt] = maxReplyAmount + 1 }),
		"zero challenge": edit(func(b []byte) { clear(b[1+4+packet.PublicKeySize : amountAt-32]) }),
	}
	for name, b := range bad {
		if _, err := rep.relay.SendReply(t.Context(), b, packet.Message{Text: []byte("x")}); !errors.Is(err, ErrBadReplyBlock) {
			t.Errorf("%s: %v, want ErrBadReplyBlock", name, err)
		}
	}
	if _, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: make([]byte, packet.MaxReplySize+1)}); !errors.Is(err, packet.ErrReplyTooLarge) {
		t.Errorf("long reply: %v", err)
	}
	self, err := c.relay.NewReplyBlock(t.Context(), ids(rep, hops[1]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.relay.SendReply(t.Context(), self, packet.Message{}); !errors.Is(err, ErrBadRoute) {
		t.Errorf("the replier as first hop: %v, want ErrBadRoute", err)
	}

	for _, skew := range []time.Duration{-25 * time.Minute, 25 * time.Minute} {
		old := replyNetClock(t, skew)
		if _, err := rep.relay.SendReply(t.Context(), old, packet.Message{Text: []byte("late")}); !errors.Is(err, ErrReplyBlockExpired) {
			t.Errorf("block made %v off: %v, want ErrReplyBlockExpired", skew, err)
		}
	}
	if rep.sentFrames() != 0 || len(rep.issuedTickets()) != 0 || counter(hops[0].relay.m.received) != 0 {
		t.Fatalf("refused replies left %d frames, %d tickets", rep.sentFrames(), len(rep.issuedTickets()))
	}

	kept := keyring(c).Len()
	for name, route := range map[string][]*testNode{
		"none": nil, "four relayers": {hops[0], hops[1], rep, hops[0]}, "itself": {hops[0], c},
		"twice in a row": {hops[0], hops[0]},
	} {
		if _, err := c.relay.NewReplyBlock(t.Context(), ids(route...)); !errors.Is(err, ErrBadRoute) {
			t.Errorf("return path %s: %v, want ErrBadRoute", name, err)
		}
	}
	if keyring(c).Len() != kept {
		t.Fatal("a refused block left keys")
	}
}

// replyNetClock makes a reply block on a creator whose clock is off by skew, over a relayer
// with a channel to it, and returns it.
func replyNetClock(t *testing.T, skew time.Duration) []byte {
	t.Helper()
	nodes, hops := replyNet(t, 1, false, func(name string, cfg *Config) {
		if name == "C" {
			cfg.Clock = offsetClock{d: skew}
		}
	})
	block, err := nodes["C"].relay.NewReplyBlock(t.Context(), ids(hops...))
	if err != nil {
		t.Fatal(err)
	}
	return block
}

// TestMemoryReplyKeyring: Take returns the keys once; Put refuses an id it holds and forgets
// the keys of blocks no hop accepts any more.
func TestMemoryReplyKeyring(t *testing.T) {
	k := NewMemoryReplyKeyring()
	keys := []byte("keys")
	if err := k.Put([16]byte{1}, 100, keys); err != nil {
		t.Fatal(err)
	}
	keys[0] = 'K' // Put kept its own copy
	if err := k.Put([16]byte{1}, 100, []byte("other")); !errors.Is(err, errReplyIDTaken) {
		t.Fatalf("second Put of an id: %v", err)
	}
	if err := k.Put([16]byte{2}, 100, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, ok, err := k.Take([16]byte{1})
	if err != nil || !ok || string(got) != "keys" {
		t.Fatalf("Take: %q %v %v", got, ok, err)
	}
	if _, ok, _ := k.Take([16]byte{1}); ok {
		t.Fatal("Take returned the keys twice")
	}
	if err := k.Put([16]byte{3}, 100+packet.EpochSkew, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if k.Len() != 2 {
		t.Fatalf("%d keys at one epoch within the window", k.Len())
	}
	if err := k.Put([16]byte{4}, 101+packet.EpochSkew, []byte("four")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := k.Take([16]byte{2}); ok || k.Len() != 2 {
		t.Fatalf("expired keys kept (%d held)", k.Len())
	}
}

// TestVolatileReplyBlock: a volatile block's keys stay out of the keyring (in memory only) and
// its reply is opened all the same, once.
func TestVolatileReplyBlock(t *testing.T) {
	nodes, hops := replyNet(t, 2, true, nil)
	rep, c := nodes["R"], nodes["C"]
	block, err := c.relay.NewVolatileReplyBlock(t.Context(), ids(hops...))
	if err != nil {
		t.Fatal(err)
	}
	if keyring(c).Len() != 0 || c.relay.volatile.Len() != 1 {
		t.Fatalf("the keyring holds %d keys, memory %d; want 0 and 1", keyring(c).Len(), c.relay.volatile.Len())
	}
	if _, err := rep.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("volatile")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the reply at C", func() bool { return len(c.deliveries()) == 1 })
	if got := c.deliveries()[0]; got.Text != "volatile" || !got.Reply || c.relay.volatile.Len() != 0 {
		t.Fatalf("C got %+v and keeps %d volatile keys", got, c.relay.volatile.Len())
	}
}
