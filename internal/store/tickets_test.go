package store

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/tickets"
)

func signedTestTicket(t *testing.T, epoch uint32, index uint64, amount uint256.Int) AckedTicket {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("store source")))
	if err != nil {
		t.Fatal(err)
	}
	src := crypto.PubkeyToAddress(key.PublicKey)
	tk := tickets.Ticket{
		ChannelID: tickets.ChannelID(src, common.Address{0xd5}),
		Amount:    amount,
		Index:     index,
		Epoch:     epoch,
		WinProb:   tickets.MaxWinProb,
		Challenge: [20]byte{1, 2, 3},
	}
	if err := tk.Sign(key, 1337, common.Address{0xcc}); err != nil {
		t.Fatal(err)
	}
	return AckedTicket{Source: src, Ticket: tk, Response: [32]byte{byte(index)}}
}

func reopen(t *testing.T, db *DB, dir string) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// reopenAt is reopen with the clock at now.
func reopenAt(t *testing.T, db *DB, dir string, now time.Time) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := OpenWith(dir, Options{Now: func() time.Time { return now }, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestReserveTicketIndexesNeverGoBack(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch := [32]byte{7}
	first, err := db.ReserveTicketIndexes(ch, 1, 0, 16)
	if err != nil || first != 1 {
		t.Fatalf("first reservation = %d, %v; want 1", first, err)
	}
	second, err := db.ReserveTicketIndexes(ch, 1, 0, 16)
	if err != nil || second != 17 {
		t.Fatalf("second reservation = %d, %v; want 17", second, err)
	}
	// Another epoch starts again at 1; min raises the start.
	if got, _ := db.ReserveTicketIndexes(ch, 2, 0, 4); got != 1 {
		t.Fatalf("new epoch starts at %d", got)
	}
	if got, _ := db.ReserveTicketIndexes(ch, 2, 100, 4); got != 100 {
		t.Fatalf("min 100 gave %d", got)
	}
	// "Crash": reopen without telling the store which indexes were used (with a clock at 1970,
	// whose index floor is 0: the reservations alone keep the indexes apart).
	db = reopenAt(t, db, dir, time.Unix(0, 0))
	got, err := db.ReserveTicketIndexes(ch, 1, 0, 16)
	if err != nil {
		t.Fatal(err)
	}
	if got <= 32 {
		t.Fatalf("after reopen the next index is %d, not above every issued index (32)", got)
	}
	if got, _ := db.ReserveTicketIndexes(ch, 2, 0, 1); got != 104 {
		t.Fatalf("epoch 2 after reopen: %d, want 104", got)
	}
	if _, err := db.ReserveTicketIndexes(ch, 1, 0, 0); err == nil {
		t.Fatal("reserving 0 indexes succeeded")
	}
}

func TestAcknowledgedTicketsSurviveReopenAndSettle(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	price := tickets.AmountFor(1)
	a3 := signedTestTicket(t, 1, 3, price)
	a1 := signedTestTicket(t, 1, 1, price)
	a2 := signedTestTicket(t, 1, 2, tickets.AmountFor(2))
	if err := db.SaveAcknowledgedTickets([]AckedTicket{a3, a1}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveAcknowledgedTickets([]AckedTicket{a2}); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, dir)

	all, err := db.AcknowledgedTickets()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("%d tickets after reopen, want 3", len(all))
	}
	for i, want := range []uint64{1, 2, 3} {
		if all[i].Ticket.Index != want {
			t.Fatalf("ticket %d has index %d, want %d (index order)", i, all[i].Ticket.Index, want)
		}
	}
	if all[0] != a1 || all[1] != a2 {
		t.Fatalf("tickets changed through the store: %+v", all[0])
	}
	of, err := db.AcknowledgedTicketsOf(a1.Ticket.ChannelID)
	if err != nil || len(of) != 3 {
		t.Fatalf("per channel: %d, %v", len(of), err)
	}
	if of, _ := db.AcknowledgedTicketsOf([32]byte{9}); len(of) != 0 {
		t.Fatalf("other channel has %d tickets", len(of))
	}

	ch := a1.Ticket.ChannelID
	if err := db.SettleTicket(ch, 1, 1, OutcomeRedeemed); err != nil {
		t.Fatal(err)
	}
	if err := db.SettleTicket(ch, 1, 1, OutcomeRedeemed); err != nil { // twice: no-op
		t.Fatal(err)
	}
	if err := db.SettleTicket(ch, 1, 2, OutcomeRedeemed); err != nil {
		t.Fatal(err)
	}
	if err := db.SettleTicket(ch, 1, 3, OutcomeLosing); err != nil {
		t.Fatal(err)
	}
	if err := db.AddTicketCounters(TicketCounterDelta{Neglected: 2, Rejected: 3, RejectedValue: price}); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, dir)
	c, err := db.TicketCounters()
	if err != nil {
		t.Fatal(err)
	}
	wantRedeemed := tickets.AmountFor(3)
	if c.Redeemed != 2 || c.RedeemedValue != wantRedeemed || c.Losing != 1 || c.Neglected != 2 ||
		c.Rejected != 3 || c.RejectedValue != price {
		t.Fatalf("counters = %+v", c)
	}
	if left, _ := db.AcknowledgedTickets(); len(left) != 0 {
		t.Fatalf("%d tickets left after settling all", len(left))
	}
}

// unredeemed asserts the unredeemed counters against a scan of the stored tickets.
func unredeemed(t *testing.T, db *DB, wantN uint64, wantValue uint256.Int) {
	t.Helper()
	c, err := db.TicketCounters()
	if err != nil {
		t.Fatal(err)
	}
	if c.Unredeemed != wantN || c.UnredeemedValue != wantValue {
		t.Fatalf("unredeemed counters = %d, %s; want %d, %s", c.Unredeemed, c.UnredeemedValue.Dec(), wantN, wantValue.Dec())
	}
	all, err := db.AcknowledgedTickets()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint256.Int
	for _, a := range all {
		sum.Add(&sum, &a.Ticket.Amount)
	}
	if uint64(len(all)) != c.Unredeemed || sum != c.UnredeemedValue {
		t.Fatalf("counters say %d tickets worth %s, the store holds %d worth %s", c.Unredeemed, c.UnredeemedValue.Dec(), len(all), sum.Dec())
	}
}

func TestUnredeemedCountersFollowTheTickets(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	unredeemed(t, db, 0, uint256.Int{})
	one, two := tickets.AmountFor(1), tickets.AmountFor(2)
	a1, a2 := signedTestTicket(t, 1, 1, one), signedTestTicket(t, 1, 2, two)
	if err := db.SaveAcknowledgedTickets([]AckedTicket{a1, a2}); err != nil {
		t.Fatal(err)
	}
	unredeemed(t, db, 2, tickets.AmountFor(3))

	// The same index again replaces the ticket: counted once, with the new amount.
	a2again := signedTestTicket(t, 1, 2, one)
	if err := db.SaveAcknowledgedTickets([]AckedTicket{a2again}); err != nil {
		t.Fatal(err)
	}
	unredeemed(t, db, 2, tickets.AmountFor(2))

	if err := db.SettleTicket(a1.Ticket.ChannelID, 1, 1, OutcomeLosing); err != nil {
		t.Fatal(err)
	}
	if err := db.SettleTicket(a1.Ticket.ChannelID, 1, 1, OutcomeLosing); err != nil { // gone: no-op
		t.Fatal(err)
	}
	unredeemed(t, db, 1, one)
	db = reopen(t, db, dir)
	unredeemed(t, db, 1, one)
}

func TestUnredeemedCountersAreAddedToAnOlderStore(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	two := tickets.AmountFor(2)
	if err := db.SaveAcknowledgedTickets([]AckedTicket{signedTestTicket(t, 1, 5, two), signedTestTicket(t, 1, 6, two)}); err != nil {
		t.Fatal(err)
	}
	// A store written before the counters existed has the tickets but no counters.
	if err := db.update(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketTicketCounters)
		if err := cb.Delete(counterUnredeemed); err != nil {
			return err
		}
		return cb.Delete(counterUnredeemedValue)
	}); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.TicketCounters(); c.Unredeemed != 0 {
		t.Fatalf("counters not removed: %+v", c)
	}
	db = reopen(t, db, dir)
	unredeemed(t, db, 2, tickets.AmountFor(4))
}

// TestTicketCountersSurviveReopen: every counter read before the store is closed (or the process
// dies: each change is its own synced transaction) reads the same after it is reopened.
func TestTicketCountersSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var acked []AckedTicket
	for i := uint64(1); i <= 5; i++ {
		acked = append(acked, signedTestTicket(t, 1, i, tickets.AmountFor(int(i))))
	}
	if err := db.SaveAcknowledgedTickets(acked); err != nil {
		t.Fatal(err)
	}
	for i, o := range []Outcome{OutcomeRedeemed, OutcomeRedeemed, OutcomeLosing, OutcomeNeglected} {
		if err := db.SettleTicket(acked[i].Ticket.ChannelID, 1, acked[i].Ticket.Index, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddTicketCounters(TicketCounterDelta{Neglected: 3, Rejected: 2, RejectedValue: tickets.AmountFor(7),
		Losing: 2, LosingValue: tickets.AmountFor(9)}); err != nil {
		t.Fatal(err)
	}
	before, err := db.TicketCounters()
	if err != nil {
		t.Fatal(err)
	}
	// Every stored ticket counts as won (1+…+5); losing ones come from the store (the third,
	// 0.03) and from the counters added (2, worth 0.09).
	want := TicketCounters{Unredeemed: 1, UnredeemedValue: tickets.AmountFor(5), Redeemed: 2, RedeemedValue: tickets.AmountFor(3),
		Won: 5, WonValue: tickets.AmountFor(15), Losing: 3, LosingValue: tickets.AmountFor(12),
		Neglected: 4, Rejected: 2, RejectedValue: tickets.AmountFor(7)}
	if before != want {
		t.Fatalf("counters %+v, want %+v", before, want)
	}
	db = reopen(t, db, dir)
	if after, err := db.TicketCounters(); err != nil || after != before {
		t.Fatalf("counters after reopening %+v (%v), before %+v", after, err, before)
	}
}

// TestUnsettleRedeemed: tickets settled as redeemed come back as unredeemed when a
// reorganisation undoes their redemption (those above the chain's restored index only), with the
// counters given back; PrunePaid forgets them after a while.
func TestUnsettleRedeemed(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var acked []AckedTicket
	for i := uint64(1); i <= 4; i++ {
		acked = append(acked, signedTestTicket(t, 1, i, tickets.AmountFor(int(i))))
	}
	if err := db.SaveAcknowledgedTickets(acked); err != nil {
		t.Fatal(err)
	}
	ch := acked[0].Ticket.ChannelID
	var list []Settlement
	for i := uint64(1); i <= 4; i++ {
		list = append(list, Settlement{ch, 1, i, OutcomeRedeemed})
	}
	if err := db.SettleTickets(list); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, dir)                 // kept across a restart
	n, err := db.UnsettleRedeemed(ch, 1, 2) // the chain's index went back to 2
	if err != nil || n != 2 {
		t.Fatalf("put back %d tickets, %v; want 2", n, err)
	}
	back, _ := db.AcknowledgedTicketsOf(ch)
	c, _ := db.TicketCounters()
	if len(back) != 2 || back[0].Ticket.Index != 3 || back[1].Ticket.Index != 4 || c.Redeemed != 2 ||
		c.RedeemedValue != tickets.AmountFor(3) || c.Unredeemed != 2 || c.UnredeemedValue != tickets.AmountFor(7) {
		t.Fatalf("after the rollback: %d tickets back, counters %+v", len(back), c)
	}
	if n, err := db.UnsettleRedeemed(ch, 1, 2); err != nil || n != 0 {
		t.Fatalf("a second rollback put back %d, %v", n, err)
	}
	if err := db.PrunePaid(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := db.UnsettleRedeemed(ch, 1, 0); err != nil || n != 0 {
		t.Fatalf("after pruning, %d put back, %v", n, err)
	}
}
