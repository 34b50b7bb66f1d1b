package ledger

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

type ledgerEnv struct {
	chans      *channelstest.Map
	dir        string
	db         *store.DB
	self       *ecdsa.PrivateKey
	selfAddr   common.Address
	source     *ecdsa.PrivateKey
	sourceAddr common.Address
	l          *Ledger
}

func newLedgerEnv(t *testing.T) *ledgerEnv {
	t.Helper()
	e := &ledgerEnv{chans: channelstest.New(), dir: t.TempDir()}
	e.self, e.selfAddr = newKeyPair(t)
	e.source, e.sourceAddr = newKeyPair(t)
	e.open(t)
	t.Cleanup(func() { e.db.Close() })
	return e
}

// open (re)opens the store and a fresh Ledger over it, as after a restart.
func (e *ledgerEnv) open(t *testing.T) {
	t.Helper()
	if e.db != nil {
		e.db.Close()
	}
	var err error
	if e.db, err = store.Open(e.dir); err != nil {
		t.Fatal(err)
	}
	e.l, err = New(Config{Key: e.self, ChainID: testChainID, Contract: testContract, Channels: e.chans, Store: e.db})
	if err != nil {
		t.Fatal(err)
	}
}

// responseFor is the proof-of-relay response of the test ticket with index i.
func responseFor(i uint64) [32]byte {
	var r [32]byte
	r[0], r[31] = 1, byte(i)
	return r
}

// incoming signs a ticket from source to self whose challenge responseFor(index) opens.
func (e *ledgerEnv) incoming(t *testing.T, index uint64, amount uint256.Int) tickets.Ticket {
	t.Helper()
	ch, _ := e.chans.Channel(e.sourceAddr, e.selfAddr)
	c, err := por.ChallengeOf(por.Scalar(responseFor(index)))
	if err != nil {
		t.Fatal(err)
	}
	tk := tickets.Ticket{ChannelID: ch.ID, Amount: amount, Index: index, Epoch: ch.Epoch, WinProb: tickets.MaxWinProb,
		Challenge: c}
	if err := tk.Sign(e.source, testChainID, testContract); err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestLedgerOutgoingIndexNeverGoesBack(t *testing.T) {
	e := newLedgerEnv(t)
	dst := common.Address{0xd5}
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(1<<20)) // a crash counts every reserved index as spent
	issue := func() uint64 {
		t.Helper()
		tk, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := tk.Signer(testChainID, testContract); err != nil || s != e.selfAddr {
			t.Fatalf("issued ticket signed by %s, %v", s, err)
		}
		return tk.Index
	}
	var last uint64
	for i := 1; i <= 3; i++ {
		if got := issue(); got != uint64(i) {
			t.Fatalf("ticket %d has index %d", i, got)
		}
		last = uint64(i)
	}
	e.open(t) // crash and restart: nothing told the store which indexes were used
	got := issue()
	if got <= last {
		t.Fatalf("after restart index %d, not above %d", got, last)
	}
	// The chain has seen a higher index (e.g. a lost data directory): go above it. (A restart
	// starts above the store's index floor, docs/STORE.md: far above 100,000.)
	e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) { s.TicketIndex = got + 100_000 })
	if next := issue(); next != got+100_001 {
		t.Fatalf("index above the chain's %d: %d", got+100_000, next)
	}
	// A new epoch starts afresh: at the store's index floor since the restart (at 1 in a new
	// store), not above the old epoch's indexes.
	e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) { s.Epoch = 2; s.TicketIndex = 0 })
	if got := issue(); got != e.db.IndexFloor() {
		t.Fatalf("new epoch starts at %d, want the index floor %d", got, e.db.IndexFloor())
	}
	// Depleted, closed and missing channels issue nothing.
	e.chans.Open(e.selfAddr, dst, uint256.Int{})
	if _, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1}); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("depleted: %v", err)
	}
	if _, err := e.l.IssueTicket(t.Context(), dst, &uint256.Int{}, por.Challenge{1}); err != nil {
		t.Fatalf("a 0 ticket over a depleted open channel: %v", err)
	}
	e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) { s.Status = channels.Closed })
	if _, err := e.l.IssueTicket(t.Context(), dst, &uint256.Int{}, por.Challenge{1}); !errors.Is(err, ErrChannelNotOpen) {
		t.Fatalf("closed: %v", err)
	}
	if _, err := e.l.IssueTicket(t.Context(), common.Address{0xee}, &uint256.Int{}, por.Challenge{1}); !errors.Is(err, ErrChannelNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestLedgerBalanceCountsWhatIsOwed(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(3))
	t1 := e.incoming(t, 1, tickets.AmountFor(2))
	if err := e.l.AcceptTicket(e.sourceAddr, &t1, false); err != nil {
		t.Fatal(err)
	}
	t2 := e.incoming(t, 2, tickets.AmountFor(2))
	if err := e.l.AcceptTicket(e.sourceAddr, &t2, false); !errors.Is(err, ErrTicketBalance) {
		t.Fatalf("ticket over what is left: %v", err)
	}
	e.l.Neglect(e.sourceAddr, &t1) // never acknowledged: no longer owed
	if err := e.l.AcceptTicket(e.sourceAddr, &t2, false); err != nil {
		t.Fatalf("after neglecting the first: %v", err)
	}
	if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: t2, Response: responseFor(2)}}); err != nil {
		t.Fatal(err)
	}
	// After a restart the acknowledged ticket is still owed and its index still used.
	e.open(t)
	t3 := e.incoming(t, 3, tickets.AmountFor(2))
	if err := e.l.AcceptTicket(e.sourceAddr, &t3, false); !errors.Is(err, ErrTicketBalance) {
		t.Fatalf("owed amount forgotten after restart: %v", err)
	}
	t2again := e.incoming(t, 2, tickets.AmountFor(1))
	if err := e.l.AcceptTicket(e.sourceAddr, &t2again, false); !errors.Is(err, ErrTicketIndex) {
		t.Fatalf("index reused after restart: %v", err)
	}
	// Once the chain redeemed index 2 the balance is free again (the chain's balance is
	// what is left after the payment).
	e.chans.Set(e.sourceAddr, e.selfAddr, func(s *channels.Channel) { s.TicketIndex = 2; s.Balance = toBig(tickets.AmountFor(2)) })
	if err := e.l.AcceptTicket(e.sourceAddr, &t3, false); err != nil {
		t.Fatalf("after redemption: %v", err)
	}
	st, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	if st.Rejected != 2 || st.Pending != 1 || st.Unredeemed != 1 {
		t.Fatalf("statistics %+v", st)
	}
}

type fakeRedeemer struct {
	calls []uint64
	fail  map[uint64]error // consumed on use
}

// RedeemBatch implements Redeemer as the chain would: a ticket listed in fail gets that verdict
// (ErrAlreadyRedeemed, ErrTicketVoid) or, for any other error, stops the batch unknown.
func (f *fakeRedeemer) RedeemBatch(_ context.Context, batch []AckedTicket) ([]RedeemResult, error) {
	var out []RedeemResult
	for _, a := range batch {
		i := a.Ticket.Index
		f.calls = append(f.calls, i)
		err, failing := f.fail[i]
		delete(f.fail, i)
		if failing && !errors.Is(err, ErrAlreadyRedeemed) && !errors.Is(err, ErrTicketVoid) {
			return out, err
		}
		out = append(out, RedeemResult{Tx: common.Hash{byte(i)}, Err: err})
	}
	return out, nil
}

func toBig(x uint256.Int) *big.Int { return x.ToBig() }

func TestLedgerRedeem(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	var acks []AckedTicket
	for i := uint64(1); i <= 4; i++ {
		tk := e.incoming(t, i, PricePerHop)
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatal(err)
		}
		acks = append(acks, AckedTicket{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)})
	}
	// Acknowledged out of order; redemption still goes in index order.
	if err := e.l.Acknowledge(t.Context(), []AckedTicket{acks[2], acks[0], acks[3], acks[1]}); err != nil {
		t.Fatal(err)
	}
	e.open(t) // acknowledged tickets survive a restart

	r := &fakeRedeemer{fail: map[uint64]error{3: errors.New("provider down"), 4: ErrAlreadyRedeemed}}
	// Index 1 was redeemed on chain by a run that crashed before marking it.
	e.chans.Set(e.sourceAddr, e.selfAddr, func(s *channels.Channel) { s.TicketIndex = 1 })
	rep, err := e.l.Redeem(t.Context(), r, nil, "test")
	if err == nil {
		t.Fatal("failure of index 3 not reported")
	}
	if rep.Redeemed != 2 || len(r.calls) != 2 || r.calls[0] != 2 || r.calls[1] != 3 {
		t.Fatalf("first run: report %+v, calls %v", rep, r.calls)
	}
	left, _ := e.l.TicketsFrom(e.sourceAddr)
	if len(left) != 2 || left[0].Ticket.Index != 3 {
		t.Fatalf("left after a failure: %d tickets", len(left))
	}
	rep, err = e.l.Redeem(t.Context(), r, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Redeemed != 2 || len(r.calls) != 4 || r.calls[2] != 3 || r.calls[3] != 4 {
		t.Fatalf("second run: report %+v, calls %v", rep, r.calls)
	}
	if left, _ := e.l.Tickets(); len(left) != 0 {
		t.Fatalf("%d tickets left", len(left))
	}
	// Nothing is redeemed twice.
	if rep, err := e.l.Redeem(t.Context(), r, nil, "test"); err != nil || rep.Redeemed != 0 || len(r.calls) != 4 {
		t.Fatalf("third run: %+v, %v, calls %v", rep, err, r.calls)
	}
	st, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	want := tickets.AmountFor(4)
	if st.Redeemed != 4 || st.RedeemedValue != want || st.Unredeemed != 0 || st.WinProportion != 1 {
		t.Fatalf("statistics %+v", st)
	}
}

func TestLedgerRedeemVoidTickets(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	tk := e.incoming(t, 1, PricePerHop)
	if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
		t.Fatal(err)
	}
	if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk}}); err != nil {
		t.Fatal(err)
	}
	e.chans.Set(e.sourceAddr, e.selfAddr, func(s *channels.Channel) { s.Epoch = 2 }) // closed and reopened
	r := &fakeRedeemer{}
	rep, err := e.l.Redeem(t.Context(), r, nil, "test")
	if err != nil || rep.Neglected != 1 || len(r.calls) != 0 {
		t.Fatalf("report %+v, %v, calls %v", rep, err, r.calls)
	}
	if st, _ := e.l.Statistics(); st.Neglected != 1 || st.Unredeemed != 0 {
		t.Fatalf("statistics %+v", st)
	}
}

// TestLedgerIndexPrefetch: with small reservation blocks, reserved ahead in the background,
// indexes still only grow, never repeat, and stay above everything issued after a restart.
func TestLedgerIndexPrefetch(t *testing.T) {
	e := newLedgerEnv(t)
	var err error
	e.l, err = New(Config{Key: e.self, ChainID: testChainID, Contract: testContract, Channels: e.chans,
		Store: e.db, IndexBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	dst := common.Address{0xd6}
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(1<<20))
	var last uint64
	for i := range 200 {
		tk, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
		if err != nil {
			t.Fatal(err)
		}
		if tk.Index <= last {
			t.Fatalf("ticket %d: index %d after %d", i, tk.Index, last)
		}
		last = tk.Index
		if i == 100 { // the chain moves ahead while a block may be reserved in the background
			e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) { s.TicketIndex = last + 10 })
		}
	}
	if last > 200+10+4*4 { // skips only what reservations left unused
		t.Fatalf("last index %d: too many skipped", last)
	}
	e.l.fetches.Wait()
	e.open(t)
	tk, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Index <= last {
		t.Fatalf("after restart index %d, not above %d", tk.Index, last)
	}
}

// TestLedgerRedeemChecksResponse: an acknowledged ticket whose response does not open its
// challenge (a sender that committed to the wrong acknowledgement) is settled as void without a
// transaction; the next one is redeemed.
func TestLedgerRedeemChecksResponse(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	var acks []AckedTicket
	for i := uint64(1); i <= 2; i++ {
		tk := e.incoming(t, i, PricePerHop)
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatal(err)
		}
		acks = append(acks, AckedTicket{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)})
	}
	acks[0].Response = responseFor(7)
	if err := e.l.Acknowledge(t.Context(), acks); err != nil {
		t.Fatal(err)
	}
	r := &fakeRedeemer{}
	rep, err := e.l.Redeem(t.Context(), r, nil, "test")
	if err != nil || rep.Neglected != 1 || rep.Redeemed != 1 || len(r.calls) != 1 || r.calls[0] != 2 {
		t.Fatalf("report %+v, %v, calls %v", rep, err, r.calls)
	}
}

// TestLedgerSignsNoMoreThanTheChannelHolds: the tickets a sender signs and the chain has not
// passed count against the channel's balance, as the next hop counts them; the count follows
// the chain's ticket index and survives a clean restart, and after a crash it never shrinks.
func TestLedgerSignsNoMoreThanTheChannelHolds(t *testing.T) {
	e := newLedgerEnv(t)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.l.Run(ctx) }()
	dst := common.Address{0xd7}
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(10)) // ten tickets of PricePerHop
	issue := func() (tickets.Ticket, error) {
		return e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
	}
	available := func(want uint256.Int) {
		t.Helper()
		if got, ok := e.l.Available(dst); !ok || got != want {
			t.Fatalf("available %s (%v), want %s", got.Dec(), ok, want.Dec())
		}
	}
	var issued []tickets.Ticket
	for range 10 {
		tk, err := issue()
		if err != nil {
			t.Fatal(err)
		}
		issued = append(issued, tk)
	}
	if _, err := issue(); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("ticket 11 on a channel that holds 10: %v", err)
	}
	available(uint256.Int{})

	// The next hop redeems the fourth ticket: the chain pays it and passes the three before it.
	e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) {
		s.TicketIndex = issued[3].Index
		s.Balance = toBig(tickets.AmountFor(9))
	})
	available(tickets.AmountFor(3)) // 9 held, tickets 5 to 10 owed
	for range 2 {
		if _, err := issue(); err != nil {
			t.Fatal(err)
		}
	}
	available(tickets.AmountFor(1))

	// A clean stop stores the exact count.
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := issue(); !errors.Is(err, ErrStopped) { // after the record: it would be missing from it
		t.Fatalf("a ticket after the ledger stopped: %v", err)
	}
	e.open(t)
	available(tickets.AmountFor(1))
	if _, err := issue(); err != nil {
		t.Fatal(err)
	}
	if _, err := issue(); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("after a clean restart the channel is full, yet: %v", err)
	}

	// A crash (no clean stop): IssuedSlack tickets may have been signed since the last record.
	e.open(t)
	if got, _ := e.l.Available(dst); !got.IsZero() {
		t.Fatalf("after a crash %s available on a full channel", got.Dec())
	}
	// The chain passing everything frees the channel again.
	e.chans.Set(e.selfAddr, dst, func(s *channels.Channel) { s.TicketIndex = 1 << 62 }) // above the store's index floor
	available(tickets.AmountFor(9))
}

func TestIssuedRunsStayBoundedAndConservative(t *testing.T) {
	var s issued
	one, two := tickets.AmountFor(1), tickets.AmountFor(2)
	var exact uint256.Int
	const n = 3 * maxIssuedRuns
	for i := uint64(1); i <= n; i++ {
		a := &one
		if i%2 == 0 {
			a = &two
		}
		s.record(i, a)
		exact.Add(&exact, a)
		if i == maxIssuedRuns && s.sum != exact {
			t.Fatalf("owed %s after %d tickets of alternating amounts, want exactly %s", s.sum.Dec(), i, exact.Dec())
		}
	}
	if len(s.runs) > maxIssuedRuns {
		t.Fatalf("%d runs, at most %d", len(s.runs), maxIssuedRuns)
	}
	if s.sum.Lt(&exact) {
		t.Fatalf("owed %s, less than the %s signed", s.sum.Dec(), exact.Dec())
	}
	s.prune(n)
	if !s.sum.IsZero() || len(s.runs) != 0 {
		t.Fatalf("after the chain passed everything: %s in %d runs", s.sum.Dec(), len(s.runs))
	}
	// Exact while amounts repeat: runs of one amount, pruned in the middle of a run.
	for i := uint64(n + 1); i <= n+100; i++ {
		s.record(i, &one)
	}
	s.prune(n + 50)
	if want := tickets.AmountFor(50); s.sum != want || len(s.runs) != 1 || s.runs[0].First != n+51 {
		t.Fatalf("owed %s in %+v, want %s from %d", s.sum.Dec(), s.runs, want.Dec(), n+51)
	}
}

// TestLedgerCrashNeverUnderstatesWhatIsOwed: after a crash the ledger counts at least what was
// really signed (the last stored record plus IssuedSlack's worth of tickets at MaxTicketValue),
// and not much more: padded tickets, up to MaxTicketValue each, hold back no more than
// IssuedSlack (7.68 tokens) of the channel, so a default 10-token channel still pays.
func TestLedgerCrashNeverUnderstatesWhatIsOwed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		amount func(i int) uint256.Int
	}{
		{"largest amount", func(int) uint256.Int { return MaxTicketValue }},
		{"padded amounts", func(i int) uint256.Int { return tickets.PaddedAmount(1+i%3, (i*5)%(tickets.PadMax+1)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLedgerEnv(t)
			dst := common.Address{0xd8}
			balance := tickets.AmountFor(100_000)
			e.chans.Open(e.selfAddr, dst, balance)
			var signed uint256.Int
			for i := range 600 {
				a := tc.amount(i)
				if _, err := e.l.IssueTicket(t.Context(), dst, &a, por.Challenge{1}); err != nil {
					t.Fatalf("ticket %d: %v", i, err)
				}
				signed.Add(&signed, &a)
			}
			e.open(t) // SIGKILL: no clean stop, background records as far as they got
			got, ok := e.l.Available(dst)
			if !ok {
				t.Fatal("channel unknown after restart")
			}
			var owed, hi uint256.Int
			owed.Sub(&balance, &got)
			hi.Add(&signed, &IssuedSlack)
			hi.Add(&hi, &MaxTicketValue)
			if owed.Lt(&signed) || hi.Lt(&owed) {
				t.Fatalf("after a crash %s counted as owed, want between %s (signed) and %s", owed.Dec(), signed.Dec(), hi.Dec())
			}
		})
	}
}

func TestIssuedRestoreCountsTheSlackAtTheTop(t *testing.T) {
	one, worst := tickets.AmountFor(1), MaxTicketValue
	rec := store.IssuedTickets{Through: 10, Runs: []store.IssuedRun{{First: 1, Last: 10, Amount: one}}}
	ten := tickets.AmountFor(10)
	var s issued
	// IssuedSlack is 76.8 tickets at the largest amount: 77 of them, at the top of 11..2048.
	s.restore(rec, 2049, &IssuedSlack, &worst)
	var want uint256.Int
	want.Mul(&worst, uint256.NewInt(77))
	want.Add(&want, &ten)
	if s.sum != want || len(s.runs) != 2 || s.runs[1].First != 2049-77 || s.runs[1].Last != 2048 {
		t.Fatalf("restored %s in %+v, want %s with the slack at 1972..2048", s.sum.Dec(), s.runs, want.Dec())
	}
	// Fewer indexes than that were reserved: each counts at the largest amount.
	s.restore(rec, 14, &IssuedSlack, &worst)
	want.Mul(&worst, uint256.NewInt(3))
	want.Add(&want, &ten)
	if s.sum != want || s.runs[1].First != 11 || s.runs[1].Last != 13 {
		t.Fatalf("restored %s in %+v, want %s with the slack at 11..13", s.sum.Dec(), s.runs, want.Dec())
	}
	// The chain passes part of the slack: what is left still covers every index above.
	s.restore(rec, 2049, &IssuedSlack, &worst)
	s.prune(2000)
	want.Mul(&worst, uint256.NewInt(48))
	if s.sum != want {
		t.Fatalf("after the chain passed 2000: %s, want 48 tickets at the largest amount (%s)", s.sum.Dec(), want.Dec())
	}
	rec.Through = store.IssuedComplete // a clean stop: nothing unknown
	s.restore(rec, 2049, &IssuedSlack, &worst)
	if s.sum != ten {
		t.Fatalf("restored after a clean stop: %s, want %s", s.sum.Dec(), ten.Dec())
	}
}

// TestLedgerSignsNothingAboveTheLargestAmount: the crash accounting assumes no ticket is worth
// more than MaxTicketValue, so the ledger refuses to sign one, before using an index.
func TestLedgerSignsNothingAboveTheLargestAmount(t *testing.T) {
	e := newLedgerEnv(t)
	dst := common.Address{0xd9}
	e.chans.Open(e.selfAddr, dst, oneToken)
	var over uint256.Int
	over.AddUint64(&MaxTicketValue, 1)
	if _, err := e.l.IssueTicket(t.Context(), dst, &over, por.Challenge{1}); !errors.Is(err, ErrTicketAmount) {
		t.Fatalf("IssueTicket above MaxTicketValue: %v, want ErrTicketAmount", err)
	}
	tk, err := e.l.IssueTicket(t.Context(), dst, &MaxTicketValue, por.Challenge{1})
	if err != nil || tk.Index != 1 {
		t.Fatalf("IssueTicket at MaxTicketValue: index %d, %v; want index 1", tk.Index, err)
	}
	if want := tickets.PaddedAmount(packet.MaxHops-1, tickets.PadMax); MaxTicketValue != want {
		t.Fatalf("MaxTicketValue %s, want %s", MaxTicketValue.Dec(), want.Dec())
	}
}

// TestLedgerRecipientTakesThePadding: as the recipient (final) the ledger accepts a ticket of
// any amount the channel covers, counts one worth more than 0 as pending until Acknowledge
// stores it, and a relayer's ticket worth more than MaxTicketValue is refused.
func TestLedgerRecipientTakesThePadding(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(10))
	zero := e.incoming(t, 1, uint256.Int{})
	pad := e.incoming(t, 2, tickets.AmountFor(tickets.PadMax))
	if err := e.l.AcceptTicket(e.sourceAddr, &zero, true); err != nil {
		t.Fatalf("recipient's ticket worth 0: %v", err)
	}
	if err := e.l.AcceptTicket(e.sourceAddr, &pad, true); err != nil {
		t.Fatalf("recipient's padded ticket: %v", err)
	}
	if st, _ := e.l.Statistics(); st.Pending != 1 {
		t.Fatalf("pending %d, want 1: the padded ticket until it is stored, not the one worth 0", st.Pending)
	}
	over := e.incoming(t, 3, tickets.AmountFor(4)) // 0.07 of the 0.10 is owed already
	if err := e.l.AcceptTicket(e.sourceAddr, &over, true); !errors.Is(err, ErrTicketBalance) {
		t.Fatalf("recipient's ticket over the balance: %v, want ErrTicketBalance", err)
	}
	if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: pad, Response: responseFor(2)}}); err != nil {
		t.Fatal(err)
	}
	st, err := e.l.Statistics()
	if err != nil || st.Pending != 0 || st.Unredeemed != 1 || st.UnredeemedValue != pad.Amount {
		t.Fatalf("after storing: %+v, %v", st, err)
	}
	var tooMuch uint256.Int
	tooMuch.AddUint64(&MaxTicketValue, 1)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	relayed := e.incoming(t, 4, tooMuch)
	if err := e.l.AcceptTicket(e.sourceAddr, &relayed, false); !errors.Is(err, ErrTicketAmount) {
		t.Fatalf("relayer's ticket above MaxTicketValue: %v, want ErrTicketAmount", err)
	}
}
