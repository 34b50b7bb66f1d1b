package relay

import (
	"testing"
	"time"
)

// TestDropCover: a drop travels, is paid and acknowledged like a message (the relayers hold
// their tickets, the sender sees its acknowledgement), and its recipient discards it: nothing is
// delivered, the drop is counted, and the recipient keeps what the last ticket is worth.
func TestDropCover(t *testing.T) {
	nodes, _ := paidNet(t, nil)
	a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
	const drops = 8
	for i := range drops {
		sent, err := a.relay.SendDrop(t.Context(), ids(r1, r2, b))
		if err != nil {
			t.Fatal(err)
		}
		waitAck(t, a, sent.Ack)
		eventually(t, 10*time.Second, "the drop's end", func() bool { return counter(b.relay.m.drops) == float64(i+1) })
	}
	for _, n := range []*testNode{r1, r2} {
		eventually(t, 10*time.Second, n.name+"'s tickets", func() bool {
			ts, err := n.ledger.Tickets()
			return err == nil && len(ts) == drops
		})
	}
	if got := b.deliveries(); len(got) != 0 {
		t.Fatalf("B delivered %d drops: %+v", len(got), got)
	}
	if got := b.payments.acceptedTickets(); len(got) != drops {
		t.Fatalf("B accepted %d of the drops' tickets, want %d", len(got), drops)
	}
	if got := counter(b.relay.m.delivered); got != 0 {
		t.Fatalf("B counted %v deliveries", got)
	}
}
