package relay

import (
	"testing"
	"time"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/tickets"
)

// TestLayeredLastHop: in a layered network (Config.Layered) A → R1 → R2 → B works without a
// channel from R2 to B: A's first tickets carry no padding (0.02 to R1, 0.01 to R2), R2 hands B
// the packet without a ticket, B delivers it as relayed, and R2's own ticket is acknowledged
// by B's acknowledgement. On free routes R2 drops the same packets (no channel to B).
func TestLayeredLastHop(t *testing.T) {
	const msgs = 20
	for _, layered := range []bool{true, false} {
		chans := channelstest.New()
		nodes := newNet(t, netOptions{channels: chans, edit: func(_ string, cfg *Config) {
			cfg.NoMixDelay = true
			cfg.Layered = func() bool { return layered }
		}}, "A", "R1", "R2", "B")
		a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
		plenty := tickets.AmountFor(100_000)
		chans.Open(a.addr, r1.addr, plenty)
		chans.Open(r1.addr, r2.addr, plenty)
		for i := range msgs {
			if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "through the layers"); err != nil {
				t.Fatalf("layered %v, message %d: %v", layered, i+1, err)
			}
		}
		if !layered {
			eventually(t, 10*time.Second, "R2 drops every packet for want of a channel to B", func() bool {
				return dropped(r2, reasonNoBalance) == msgs
			})
			if len(b.deliveries()) != 0 {
				t.Fatal("free routes delivered without a channel into B")
			}
			continue
		}
		eventually(t, 10*time.Second, "every message delivered and R2's tickets acknowledged", func() bool {
			ts, _ := r2.ledger.Tickets()
			return len(b.deliveries()) == msgs && len(ts) == msgs
		})
		for _, d := range b.deliveries() {
			if !d.Relayed {
				t.Fatal("a delivery through the layers is not marked relayed (no re-emission)")
			}
		}
		if n := len(b.payments.acceptedTickets()); n != 0 {
			t.Fatalf("B accepted %d tickets, want none", n)
		}
		ts1, _ := r1.ledger.Tickets()
		ts2, _ := r2.ledger.Tickets()
		for i := range ts1 {
			if units(t, ts1[i].Ticket.Amount) != 2 || units(t, ts2[i].Ticket.Amount) != 1 {
				t.Fatalf("tickets of %d and %d hundredths: want 2 and 1 (no padding)", units(t, ts1[i].Ticket.Amount), units(t, ts2[i].Ticket.Amount))
			}
		}
		if dropped(r2, reasonNoBalance) != 0 {
			t.Fatal("R2 dropped packets")
		}
		// A reply block B makes over R1, R2 asks for no padding; A's reply reaches B without a
		// channel from R2 into B.
		block, err := b.relay.NewReplyBlock(t.Context(), ids(r1, r2))
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeBlock(t, block).Amount; got != 2 {
			t.Fatalf("the block asks for %d hundredths, want 2 (no padding)", got)
		}
		if _, err := a.relay.SendReply(t.Context(), block, packet.Message{Text: []byte("back")}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the reply at B", func() bool {
			d := b.deliveries()
			return len(d) == msgs+1 && d[msgs].Reply && d[msgs].Text == "back"
		})
	}
}
