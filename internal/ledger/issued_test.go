package ledger

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// padded is the i-th of a sequence of padded ticket amounts, as relayers issue them.
func padded(i int) uint256.Int { return tickets.PaddedAmount(1+i%3, (i*5)%(tickets.PadMax+1)) }

// TestIssuedRunsKeepGapsOut: past maxIssuedRuns, runs merge only with neighbours whose indexes
// follow on, so a gap of indexes never signed (a restart's index floor) is not counted as
// tickets; the count stays at least what was signed.
func TestIssuedRunsKeepGapsOut(t *testing.T) {
	var s issued
	var exact, most uint256.Int
	index := uint64(1)
	for i := range 5 * maxIssuedRuns {
		if i%1000 == 999 { // a restart: the next index is a billion above
			index += 1 << 30
		}
		a := padded(i)
		s.record(index, &a)
		exact.Add(&exact, &a)
		index++
	}
	if len(s.runs) > maxIssuedRuns {
		t.Fatalf("%d runs, at most %d", len(s.runs), maxIssuedRuns)
	}
	if s.sum.Lt(&exact) {
		t.Fatalf("owed %s, less than the %s signed", s.sum.Dec(), exact.Dec())
	}
	// Each ticket counts at most at the largest padded amount: no index of a gap counts.
	most.Mul(&MaxTicketValue, uint256.NewInt(5*maxIssuedRuns))
	if most.Lt(&s.sum) {
		t.Fatalf("owed %s for %d tickets, more than %s (each at the largest amount): a gap was counted", s.sum.Dec(), 5*maxIssuedRuns, most.Dec())
	}
	var check uint256.Int
	for i := range s.runs {
		v := runValue(&s.runs[i])
		check.Add(&check, &v)
		if i > 0 && s.runs[i].First <= s.runs[i-1].Last {
			t.Fatalf("runs %d and %d overlap: %+v %+v", i-1, i, s.runs[i-1], s.runs[i])
		}
	}
	if check != s.sum {
		t.Fatalf("sum %s, runs add up to %s", s.sum.Dec(), check.Dec())
	}
}

// TestIssuedRunsAllApart: when no two runs follow on, the closest two merge (the least value
// counted for indexes never signed), and the count stays conservative and bounded.
func TestIssuedRunsAllApart(t *testing.T) {
	var s issued
	one := tickets.AmountFor(1)
	var exact uint256.Int
	for i := uint64(0); i < 2*maxIssuedRuns; i++ {
		gap := uint64(1000)
		if i%7 == 0 {
			gap = 2 // the closest neighbours
		}
		s.record(1+i*1000+gap, &one)
		exact.Add(&exact, &one)
	}
	if len(s.runs) > maxIssuedRuns {
		t.Fatalf("%d runs, at most %d", len(s.runs), maxIssuedRuns)
	}
	if s.sum.Lt(&exact) {
		t.Fatalf("owed %s, less than the %s signed", s.sum.Dec(), exact.Dec())
	}
	// 1,024 merges of neighbours 998 apart or closer: at most 1,000 indexes each.
	var most uint256.Int
	most.Mul(&one, uint256.NewInt(2*maxIssuedRuns+maxIssuedRuns*1000))
	if most.Lt(&s.sum) {
		t.Fatalf("owed %s, more than %s", s.sum.Dec(), most.Dec())
	}
}

// TestRestartAfterManyTicketsStillPays is the regression of session 11: a relayer that had
// signed more than maxIssuedRuns padded tickets on a channel and restarted (its store raising the
// index floor to the clock) refused every later ticket with ErrNotEnoughBalance, because the
// merged last run spanned the floor's jump, counted as billions of tickets.
func TestRestartAfterManyTicketsStillPays(t *testing.T) {
	e := newLedgerEnv(t)
	dst := common.Address{0xda}
	balance := tickets.AmountFor(100_000) // 1,000 tokens
	e.chans.Open(e.selfAddr, dst, balance)
	var signed uint256.Int
	issue := func(i int) {
		t.Helper()
		a := padded(i)
		if _, err := e.l.IssueTicket(t.Context(), dst, &a, por.Challenge{1}); err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		signed.Add(&signed, &a)
	}
	for i := range 2 * maxIssuedRuns {
		issue(i)
	}
	for restart := range 3 { // each an hour later: the floor jumps 3.7 billion indexes
		e.db.Close()
		var err error
		later := time.Now().Add(time.Duration(restart+1) * time.Hour)
		if e.db, err = store.OpenWith(e.dir, store.Options{Now: func() time.Time { return later }}); err != nil {
			t.Fatal(err)
		}
		if e.l, err = New(Config{Key: e.self, ChainID: testChainID, Contract: testContract, Channels: e.chans, Store: e.db}); err != nil {
			t.Fatal(err)
		}
		for i := range maxIssuedRuns / 2 {
			issue(i)
		}
	}
	got, ok := e.l.Available(dst)
	if !ok {
		t.Fatal("channel unknown after restart")
	}
	var owed, hi uint256.Int
	owed.Sub(&balance, &got)
	// At most: every ticket at the largest amount, plus a crash's slack per restart.
	hi.Mul(&MaxTicketValue, uint256.NewInt(3*maxIssuedRuns+3*maxIssuedRuns/2))
	if owed.Lt(&signed) || hi.Lt(&owed) {
		t.Fatalf("after 3 restarts %s counted as owed, want between %s (signed) and %s", owed.Dec(), signed.Dec(), hi.Dec())
	}
}
