package relay

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/tickets"
)

// lockedRand is a seeded, concurrency-safe Config.Rand: the test's draws are the same on every
// run, so its statistical bounds cannot flake.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (l *lockedRand) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// units is a ticket amount in units of ledger.PricePerHop (0.01 token).
func units(t *testing.T, a uint256.Int) int {
	t.Helper()
	var q, r uint256.Int
	q.DivMod(&a, &ledger.PricePerHop, &r)
	if !r.IsZero() || !q.IsUint64() || q.Uint64() > 100 {
		t.Fatalf("ticket amount %s is no small multiple of 0.01", a.Dec())
	}
	return int(q.Uint64())
}

// TestPaddingHidesPosition sends 400 messages A → R1 → R2 → B and looks at the amounts as the
// relayers see them (PROTOCOL.md §4.5, "What a relayer learns from an amount"): the first
// hop's ticket takes the PadMax+1 values 0.02 … 0.02 + PadMax × 0.01 uniformly; every amount
// but the two extremes reaches R1 (first) and R2 (second) alike, so a relayer is certain of its
// position only for 1 in PadMax+1 packets; each relayer nets exactly 0.01 per packet; and B
// receives the padding, storing the tickets worth more than 0.
func TestPaddingHidesPosition(t *testing.T) {
	const msgs = 400
	nodes, chans := paidNet(t, func(name string, cfg *Config) {
		if name == "A" {
			cfg.Rand = &lockedRand{r: rand.NewChaCha8([32]byte{14})}
		}
	})
	a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
	plenty := tickets.AmountFor(100_000)
	chans.Open(a.addr, r1.addr, plenty)
	chans.Open(r1.addr, r2.addr, plenty)
	chans.Open(r2.addr, b.addr, plenty)
	for i := range msgs {
		if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "padded"); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	eventually(t, 60*time.Second, "every message delivered and every ticket stored", func() bool {
		if len(b.deliveries()) != msgs || len(b.payments.acceptedTickets()) != msgs {
			return false
		}
		for _, n := range []*testNode{r1, r2, b} {
			if st, err := n.ledger.Statistics(); err != nil || st.Pending != 0 {
				return false
			}
		}
		ts1, _ := r1.ledger.Tickets()
		ts2, _ := r2.ledger.Tickets()
		return len(ts1) == msgs && len(ts2) == msgs
	})

	const p = tickets.PadMax
	first, second := map[int]int{}, map[int]int{} // amount in units → packets
	ts1, _ := r1.ledger.Tickets()
	ts2, _ := r2.ledger.Tickets()
	for _, at := range ts1 {
		first[units(t, at.Ticket.Amount)]++
	}
	for _, at := range ts2 {
		second[units(t, at.Ticket.Amount)]++
	}
	toB, storedB := map[int]int{}, map[int]int{}
	for _, tk := range b.payments.acceptedTickets() {
		toB[units(t, tk.Amount)]++
	}
	bts, _ := b.ledger.Tickets()
	for _, at := range bts {
		if !opens(at.Response, at.Ticket.Challenge) || at.Source != r2.addr {
			t.Fatalf("B's ticket %d cannot be redeemed: its response does not open it, or it is not R2's", at.Ticket.Index)
		}
		storedB[units(t, at.Ticket.Amount)]++
	}

	// Uniform over 2 … 2+PadMax: a chi-square far in the tail fails (p < 10^-6).
	want := float64(msgs) / (p + 1)
	var chi2 float64
	for u := 2; u <= 2+p; u++ {
		chi2 += (float64(first[u]) - want) * (float64(first[u]) - want) / want
	}
	if len(first) != p+1 || chi2 > 5*p+20 {
		t.Fatalf("first-hop amounts %v (chi-square %.1f): want the %d values 2 … %d uniformly", first, chi2, p+1, 2+p)
	}
	// Each relayer nets 0.01: R2's amounts are R1's less one unit, B's R2's less one.
	for u := 0; u <= 2+p; u++ {
		if second[u] != first[u+1] || toB[u] != second[u+1] {
			t.Fatalf("R1 %v, R2 %v, to B %v: each hop must pass on its amount less 0.01", first, second, toB)
		}
		if u > 0 && storedB[u] != toB[u] {
			t.Fatalf("B stored %v of the tickets %v it received: want every one worth more than 0", storedB, toB)
		}
	}
	if storedB[0] != 0 {
		t.Fatalf("B stored %d tickets worth 0", storedB[0])
	}
	// A relayer is certain of its position only at the extremes: 2+PadMax is only ever first,
	// 1 only ever second, each about 1 in PadMax+1 of that position's packets (within 4.5 σ).
	sigma := math.Sqrt(msgs * (1.0 / (p + 1)) * (1 - 1.0/(p+1)))
	for _, c := range []struct {
		what string
		n    int
	}{{"certain to be first", first[2+p]}, {"certain to be last", second[1]}} {
		if math.Abs(float64(c.n)-want) > 4.5*sigma {
			t.Fatalf("%s for %d of %d packets, want about %.0f", c.what, c.n, msgs, want)
		}
	}
	if second[2+p] != 0 || first[1] != 0 {
		t.Fatalf("R1 %v, R2 %v: an extreme amount reached the other position", first, second)
	}
	// Every other amount reaches both: the relayer's posterior of being first is about 1/2.
	for u := 2; u <= 1+p; u++ {
		post := float64(first[u]) / float64(first[u]+second[u])
		if post < 0.25 || post > 0.75 {
			t.Fatalf("amount %d: %d packets at R1, %d at R2 (P(first) %.2f): want about 1/2", u, first[u], second[u], post)
		}
	}
}
