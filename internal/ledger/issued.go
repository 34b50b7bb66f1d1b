package ledger

import (
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/store"
)

// maxIssuedRuns bounds the runs an outgoing channel keeps (48 bytes each, in memory and in its
// stored record). The sender's padding (tickets.PadMax) makes consecutive amounts differ most of
// the time, so a run is about one ticket until the bound; past it, compact merges neighbouring
// runs whose indexes follow on (the merged run counts every ticket at the larger amount, which
// overstates what is owed, refusing early, but never understates it). Runs apart, such as those
// on either side of a restart (whose index floor skips up to 1,024 indexes a millisecond, docs/STORE.md),
// are merged only when no two runs follow on, the closest first: a run counts every index it
// spans, so merging across a restart's gap would count millions of tickets never signed.
const maxIssuedRuns = 1024

// issued is what this node owes on one outgoing channel epoch: the tickets it signed that the
// chain has not passed yet, as runs of indexes, and their sum. Guarded by the outChannel's mu.
type issued struct {
	runs []store.IssuedRun
	sum  uint256.Int
}

// restore sets the state from a stored record. Tickets may have been signed after the record
// was written, before a crash, with indexes above rec.Through and below next (the channel's next
// unreserved index), worth at most slack together and at most worst each: they count as the
// fewest tickets at worst that reach slack (all the indexes of that range when there are fewer),
// at the top of the range, so that the chain's index passes them last and, when it passes some,
// the ones left still cover the unknown tickets above it.
func (s *issued) restore(rec store.IssuedTickets, next uint64, slack, worst *uint256.Int) {
	s.runs, s.sum = nil, uint256.Int{}
	for _, r := range rec.Runs {
		s.add(r)
	}
	if rec.Through != store.IssuedComplete && next > rec.Through+1 && !worst.IsZero() {
		var q, r uint256.Int
		q.DivMod(slack, worst, &r)
		if !r.IsZero() {
			q.AddUint64(&q, 1)
		}
		unknown := next - 1 - rec.Through
		if q.IsUint64() {
			unknown = min(unknown, q.Uint64())
		}
		s.add(store.IssuedRun{First: next - unknown, Last: next - 1, Amount: *worst})
	}
}

func runValue(r *store.IssuedRun) uint256.Int {
	var v uint256.Int
	v.SetUint64(r.Last - r.First + 1)
	v.Mul(&v, &r.Amount)
	return v
}

func (s *issued) add(r store.IssuedRun) {
	v := runValue(&r)
	s.sum.Add(&s.sum, &v)
	s.runs = append(s.runs, r)
}

// record counts a ticket with index (above every earlier one) and amount.
func (s *issued) record(index uint64, amount *uint256.Int) {
	if amount.IsZero() {
		return
	}
	if n := len(s.runs); n > 0 {
		if last := &s.runs[n-1]; last.Amount == *amount && last.Last+1 == index {
			last.Last = index
			s.sum.Add(&s.sum, amount)
			return
		}
	}
	if len(s.runs) >= maxIssuedRuns {
		s.compact()
	}
	s.add(store.IssuedRun{First: index, Last: index, Amount: *amount})
}

// compact makes room for a run: it merges each pair of neighbouring runs whose indexes follow
// on (one pass, so about half the runs go), or, when no two follow on, the two neighbours whose
// merge counts the least value for indexes never signed.
func (s *issued) compact() {
	out, merged := s.runs[:0], false
	for i := 0; i < len(s.runs); i++ {
		r := s.runs[i]
		if i+1 < len(s.runs) && r.Last+1 == s.runs[i+1].First {
			r = s.merge(r, s.runs[i+1])
			merged = true
			i++
		}
		out = append(out, r) // len(out) ≤ i: runs not yet read are not overwritten
	}
	s.runs = out
	if merged || len(s.runs) < 2 {
		return
	}
	best, cost := 0, uint256.Int{}
	for i := 0; i+1 < len(s.runs); i++ {
		if c := mergeCost(&s.runs[i], &s.runs[i+1]); i == 0 || c.Lt(&cost) {
			best, cost = i, c
		}
	}
	s.runs[best] = s.merge(s.runs[best], s.runs[best+1])
	s.runs = append(s.runs[:best+1], s.runs[best+2:]...)
}

// merge is the run from a.First to b.Last at the larger amount, with the sum moved to it.
func (s *issued) merge(a, b store.IssuedRun) store.IssuedRun {
	va, vb := runValue(&a), runValue(&b)
	m := store.IssuedRun{First: a.First, Last: b.Last, Amount: a.Amount}
	if m.Amount.Lt(&b.Amount) {
		m.Amount = b.Amount
	}
	vm := runValue(&m)
	s.sum.Sub(&s.sum, &va)
	s.sum.Sub(&s.sum, &vb)
	s.sum.Add(&s.sum, &vm)
	return m
}

// mergeCost is what merging neighbours a and b adds to the sum (saturating).
func mergeCost(a, b *store.IssuedRun) uint256.Int {
	m := store.IssuedRun{First: a.First, Last: b.Last, Amount: a.Amount}
	if m.Amount.Lt(&b.Amount) {
		m.Amount = b.Amount
	}
	vm, va, vb := runValue(&m), runValue(a), runValue(b)
	var c uint256.Int
	if _, under := c.SubOverflow(&vm, &va); under {
		return uint256.Int{}
	}
	c.Sub(&c, &vb)
	return c
}

// prune forgets the tickets with index ≤ passed: the chain has redeemed one of them or a later
// one, so they are paid (and out of the channel's balance) or void.
func (s *issued) prune(passed uint64) {
	n := 0
	for ; n < len(s.runs) && s.runs[n].Last <= passed; n++ {
		v := runValue(&s.runs[n])
		s.sum.Sub(&s.sum, &v)
	}
	s.runs = s.runs[n:]
	if len(s.runs) > 0 && s.runs[0].First <= passed {
		r := &s.runs[0]
		var v uint256.Int
		v.SetUint64(passed - r.First + 1)
		v.Mul(&v, &r.Amount)
		s.sum.Sub(&s.sum, &v)
		r.First = passed + 1
	}
}

// available is what balance leaves for a new ticket.
func (s *issued) available(balance *uint256.Int) uint256.Int {
	var a uint256.Int
	if _, under := a.SubOverflow(balance, &s.sum); under {
		a.Clear()
	}
	return a
}

// snapshot is the record to store, given that no ticket signed later has an index ≤ through
// (store.IssuedComplete: none will be signed).
func (s *issued) snapshot(through uint64) store.IssuedTickets {
	if n := len(s.runs); n > 0 && through != store.IssuedComplete {
		through = max(through, s.runs[n-1].Last)
	}
	return store.IssuedTickets{Through: through, Runs: append([]store.IssuedRun(nil), s.runs...)}
}
