package relay

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/tickets"
)

// TestTurnsInOrder: places taken in one order pass in that order, whatever order their holders
// arrive in.
func TestTurnsInOrder(t *testing.T) {
	var tr turns
	tr.init()
	const n = 50
	var mu sync.Mutex
	var passed []uint64
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- { // the last places start first
		wg.Go(func() {
			tr.wait(uint64(i))
			mu.Lock()
			passed = append(passed, uint64(i))
			mu.Unlock()
			tr.done(uint64(i))
		})
	}
	wg.Wait()
	for i, p := range passed {
		if p != uint64(i) {
			t.Fatalf("place %d passed %dth", p, i)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("done of a place whose turn it is not did not panic")
		}
	}()
	tr.done(n + 1)
}

// TestOneLinkKeepsTicketOrder: a burst of paid messages over one link (A → R1 → R2 → B), sent from
// several goroutines and worked on by several workers at each relayer, arrives whole: every
// ticket is accepted in index order by the next hop (nothing dropped for its index), every
// packet forwarded and delivered, every ticket stored. With the split Payments (signatures
// verified and made in parallel) and without.
func TestOneLinkKeepsTicketOrder(t *testing.T) {
	for _, unsplit := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsplit=%v", unsplit), func(t *testing.T) {
			chans := channelstest.New()
			nodes := newNet(t, netOptions{channels: chans, unsplit: unsplit, edit: func(_ string, c *Config) {
				c.NoMixDelay = true
				c.Workers = 4
			}}, "A", "R1", "R2", "B")
			a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
			many := tickets.AmountFor(1 << 30)
			chans.Open(a.addr, r1.addr, many)
			chans.Open(r1.addr, r2.addr, many)
			chans.Open(r2.addr, b.addr, many)
			const senders, each = 4, 25
			var wg sync.WaitGroup
			for range senders {
				wg.Go(func() {
					for range each {
						if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "burst"); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			const n = senders * each
			eventually(t, 30*time.Second, "every delivery", func() bool { return len(b.deliveries()) == n })
			for _, r := range []*testNode{r1, r2} {
				eventually(t, 30*time.Second, r.name+"'s tickets stored", func() bool {
					ts, err := r.ledger.Tickets()
					return err == nil && len(ts) == n
				})
				if got := counter(r.relay.m.forwarded); got != n {
					t.Errorf("%s forwarded %v of %d", r.name, got, n)
				}
				if got := dropped(r, reasonTicketIndex); got != 0 {
					t.Errorf("%s dropped %v packets for their ticket's index", r.name, got)
				}
			}
		})
	}
}
