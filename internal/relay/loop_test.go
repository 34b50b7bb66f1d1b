package relay

import (
	"errors"
	"testing"
	"time"
)

// TestSendLoop: a packet over relayers back to its sender (loop cover traffic) is relayed and
// paid like any other and reaches the sender; the sender as its own first hop or as the whole
// route stays refused.
func TestSendLoop(t *testing.T) {
	nodes, chans := paidNet(t, nil)
	a, r1, r2 := nodes["A"], nodes["R1"], nodes["R2"]
	chans.Open(r2.addr, a.addr, oneToken)
	challenge, err := ackOf(a.relay.Send(t.Context(), ids(r1, r2, a), "loop"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the loop back at its sender", func() bool { return len(a.deliveries()) == 1 })
	if got := a.deliveries()[0].Text; got != "loop" {
		t.Fatalf("delivered %q", got)
	}
	waitAck(t, a, challenge)
	for _, n := range []*testNode{r1, r2} {
		eventually(t, 10*time.Second, n.name+" paid", func() bool {
			ts, err := n.ledger.Tickets()
			return err == nil && len(ts) == 1
		})
	}
	for _, route := range [][]*testNode{{a}, {a, r1}, {r1, a, r2}} {
		if _, err := a.relay.Send(t.Context(), ids(route...), "x"); !errors.Is(err, ErrBadRoute) {
			t.Errorf("route %v: %v, want ErrBadRoute", len(route), err)
		}
	}
}
