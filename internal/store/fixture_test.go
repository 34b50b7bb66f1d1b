package store

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/packet"
)

// The format fixtures (docs/STORE.md): testdata/v1.db is a store written by the code of format
// version 1 (the stores without a meta bucket, before format versions existed), with every
// bucket holding representative records. fillFixture wrote it, through the store's own
// methods, at the commit that added it ("store: the v1 format fixture"); checkFixture reads
// every record back. Regenerate a fixture only at the commit of its version:
//
//	go test ./internal/store -run TestWriteFixture -write-fixture
var writeFixture = flag.Bool("write-fixture", false, "write testdata/v1.db from fillFixture (only at the commit of format version 1)")

// fixtureNow is the clock of the fixture's time-dependent records (replay tags, reply keys,
// messages).
var fixtureNow = time.UnixMilli(1_790_000_000_123)

var (
	fixtureChanA = channels.Channel{
		ID: [32]byte{0xa1}, Source: common.Address{0x51}, Destination: common.Address{0xd1},
		Balance: big.NewInt(5_000_000_000_000_000_000), TicketIndex: 7, Epoch: 2, Status: channels.Open,
	}
	fixtureChanB = channels.Channel{
		ID: [32]byte{0xb2}, Source: common.Address{0xd1}, Destination: common.Address{0x52},
		Balance: new(big.Int).Lsh(big.NewInt(1), 200), TicketIndex: 0, Epoch: 1, Status: channels.PendingToClose,
		ClosureTime: time.Unix(1_790_000_600, 0),
	}
	fixtureAnn = channels.Announcement{
		Account: common.Address{0x51}, PublicKey: bytes.Repeat([]byte{0x02}, 33),
		Multiaddrs: []string{"/ip4/192.0.2.1/tcp/9091"},
	}
	fixtureCursor = ChainCursor{
		ChainID: 1337, Contract: common.Address{0xcc}, Next: 120,
		Hash: common.Hash{0x11, 0x9}, Genesis: common.Hash{0x6e},
	}
	// The outgoing channel whose indexes the fixture reserved, and the epoch.
	fixtureOut      = [32]byte{0x0c}
	fixtureOutEpoch = uint32(3)
	fixtureIssued   = IssuedTickets{Through: 40, Runs: []IssuedRun{
		{First: 30, Last: 33, Amount: *uint256.NewInt(1_000)},
		{First: 34, Last: 34, Amount: *uint256.NewInt(2_500)},
	}}
	fixtureReplayTags = [][32]byte{{0x7a, 1}, {0x7a, 2}, {0x7a, 3}}
	fixtureReplyKeyID = [16]byte{0x4b, 1}
	fixtureInboxIDs   = [][16]byte{{0x1b, 1}, {0x1b, 2}, {0x1b, 3}}
	fixtureOutbox     = []OutboxMessage{{
		ID: [16]byte{0x0b, 1}, Recipient: "16Uiu2HAmFixtureRecipient", Body: []byte("queued body"), Replies: 2,
		Created: fixtureNow, Updated: fixtureNow, State: OutboxQueued, Fragments: 3, Acked: []byte{0b101},
		Blocks: [][]byte{bytes.Repeat([]byte{0xb1}, 40), bytes.Repeat([]byte{0xb2}, 40)},
	}, {
		ID: [16]byte{0x0b, 2}, Recipient: "16Uiu2HAmFixtureOther", Body: []byte("failed body"),
		InReplyTo: [16]byte{0x1b, 1}, ReplyTo: 1, Created: fixtureNow.Add(-time.Minute), Updated: fixtureNow,
		State: OutboxFailed, Reason: "no path", Attempts: 4, Fragments: 1,
	}}
)

// fixtureAcked are the acknowledged tickets the fixture saved; the first is then settled as
// redeemed.
func fixtureAcked(t *testing.T) []AckedTicket {
	return []AckedTicket{
		signedTestTicket(t, 2, 8, *uint256.NewInt(100)),
		signedTestTicket(t, 2, 9, *uint256.NewInt(200)),
		signedTestTicket(t, 2, 11, *uint256.NewInt(300)),
	}
}

func fixtureInbox() []InboxMessage {
	return []InboxMessage{
		{ID: fixtureInboxIDs[0], Received: fixtureNow, SentAt: 1_789_999_999_000, Body: []byte("first"),
			ReplyBlocks: [][]byte{bytes.Repeat([]byte{0xc1}, 50), bytes.Repeat([]byte{0xc2}, 50)}},
		{ID: fixtureInboxIDs[1], Received: fixtureNow.Add(time.Second), SentAt: 1_790_000_000_000,
			Body: []byte("an answer"), Reply: true, InReplyTo: [16]byte{0x0b, 1}},
		{ID: fixtureInboxIDs[2], Received: fixtureNow.Add(2 * time.Second), Body: []byte("read and deleted")},
	}
}

// fillFixture writes every kind of record the store keeps into db.
func fillFixture(t *testing.T, db *DB) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.SetAlias("alice", "16Uiu2HAmAlice"))
	must(db.SetAlias("bob", "16Uiu2HAmBob"))
	must(db.PutSettings(map[string][]byte{"coverRate": []byte(`0.5`), "autoRedeem": []byte(`true`)}))

	// Two committed ranges, so that the undo journal holds a checkpoint with a replaced record.
	first := fixtureCursor
	first.Next, first.Hash = 100, common.Hash{0x10, 0x0}
	oldA := fixtureChanA
	oldA.TicketIndex = 3
	must(db.CommitChainRange(first, []channels.Channel{oldA}, nil, 64))
	must(db.CommitChainRange(fixtureCursor, []channels.Channel{fixtureChanA, fixtureChanB}, []channels.Announcement{fixtureAnn}, 64))

	acked := fixtureAcked(t)
	must(db.SaveAcknowledgedTickets(acked))
	must(db.SettleTicket(acked[0].Ticket.ChannelID, 2, 8, OutcomeRedeemed))
	var lv, rv uint256.Int
	lv.SetUint64(70)
	rv.SetUint64(90)
	must(db.AddTicketCounters(TicketCounterDelta{Neglected: 1, Rejected: 2, RejectedValue: rv, Losing: 3, LosingValue: lv}))

	if first, err := db.ReserveTicketIndexes(fixtureOut, fixtureOutEpoch, 30, 16); err != nil || first != 30 {
		t.Fatalf("reserve: %d, %v", first, err)
	}
	must(db.SaveIssuedTickets(fixtureOut, fixtureOutEpoch, fixtureIssued))

	r, err := db.ReplayTags(func() time.Time { return fixtureNow })
	must(err)
	for _, tag := range fixtureReplayTags {
		if ok, err := r.CheckAndAdd(fixtureEpoch(), tag); !ok || err != nil {
			t.Fatalf("replay tag: %v, %v", ok, err)
		}
	}
	must(r.Flush())

	must(db.ReplyKeys().Put(fixtureReplyKeyID, fixtureEpoch(), bytes.Repeat([]byte{0x4c}, 128)))
	must(db.ReplyKeys().Put([16]byte{0x4b, 2}, fixtureEpoch(), []byte{1, 2, 3}))

	for _, m := range fixtureInbox() {
		if _, _, err := db.PutInbox(m); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := db.DeleteInbox(3); !ok || err != nil {
		t.Fatalf("delete inbox 3: %v, %v", ok, err)
	}
	for _, m := range fixtureOutbox {
		must(db.PutOutbox(m))
	}
}

func fixtureEpoch() uint32 { return packet.Epoch(fixtureNow) }

// checkFixture reads back every record fillFixture wrote.
func checkFixture(t *testing.T, db *DB) {
	t.Helper()
	if got, err := db.Aliases(); err != nil || !slices.Equal(got, [][2]string{{"alice", "16Uiu2HAmAlice"}, {"bob", "16Uiu2HAmBob"}}) {
		t.Errorf("aliases: %v, %v", got, err)
	}
	if got, err := db.Settings(); err != nil || string(got["coverRate"]) != "0.5" || string(got["autoRedeem"]) != "true" {
		t.Errorf("settings: %q, %v", got, err)
	}

	cur, chans, anns, err := db.LoadChainState()
	if err != nil || cur != fixtureCursor || len(chans) != 2 || len(anns) != 1 {
		t.Fatalf("chain state: %+v, %d channels, %d announcements, %v", cur, len(chans), len(anns), err)
	}
	slices.SortFunc(chans, func(a, b channels.Channel) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	for i, want := range []channels.Channel{fixtureChanA, fixtureChanB} {
		got := chans[i]
		if got.ID != want.ID || got.Source != want.Source || got.Destination != want.Destination ||
			got.Balance.Cmp(want.Balance) != 0 || got.TicketIndex != want.TicketIndex || got.Epoch != want.Epoch ||
			got.Status != want.Status || !got.ClosureTime.Equal(want.ClosureTime) {
			t.Errorf("channel %d: %+v, want %+v", i, got, want)
		}
	}
	if a := anns[0]; a.Account != fixtureAnn.Account || !bytes.Equal(a.PublicKey, fixtureAnn.PublicKey) || !slices.Equal(a.Multiaddrs, fixtureAnn.Multiaddrs) {
		t.Errorf("announcement: %+v", a)
	}
	if cps, err := db.ChainJournal(); err != nil || len(cps) != 2 || cps[0].Block != 119 || cps[1].Block != 99 {
		t.Errorf("chain journal: %+v, %v", cps, err)
	}

	acked := fixtureAcked(t)
	got, err := db.AcknowledgedTickets()
	if err != nil || len(got) != 2 || got[0] != acked[1] || got[1] != acked[2] {
		t.Errorf("acknowledged tickets: %+v, %v", got, err)
	}
	c, err := db.TicketCounters()
	if err != nil || c.Unredeemed != 2 || c.UnredeemedValue.Uint64() != 500 || c.Redeemed != 1 || c.RedeemedValue.Uint64() != 100 ||
		c.Won != 3 || c.WonValue.Uint64() != 600 || c.Losing != 3 || c.LosingValue.Uint64() != 70 ||
		c.Neglected != 1 || c.Rejected != 2 || c.RejectedValue.Uint64() != 90 {
		t.Errorf("ticket counters: %+v, %v", c, err)
	}
	paid := 0
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTicketsPaid).ForEach(func(k, v []byte) error {
			if !bytes.Equal(k, ackedKey(acked[0].Ticket.ChannelID, 2, 8)) || len(v) != ackedValueLen+8 {
				t.Errorf("paid ticket %x of %d bytes", k, len(v))
			}
			paid++
			return nil
		})
	}); err != nil || paid != 1 {
		t.Errorf("paid tickets: %d, %v", paid, err)
	}

	rec, found, next, err := db.IssuedTicketsOf(fixtureOut, fixtureOutEpoch)
	if err != nil || !found || next != 46 || rec.Through != fixtureIssued.Through || !slices.Equal(rec.Runs, fixtureIssued.Runs) {
		t.Errorf("issued tickets: %+v found %v next %d, %v", rec, found, next, err)
	}

	r, err := db.ReplayTags(func() time.Time { return fixtureNow })
	if err != nil || r.Len() != len(fixtureReplayTags) {
		t.Fatalf("replay tags: %v, %v", r, err)
	}
	for _, tag := range fixtureReplayTags {
		if fresh, err := r.CheckAndAdd(fixtureEpoch(), tag); fresh || err != nil {
			t.Errorf("stored replay tag %x: fresh %v, %v", tag[:2], fresh, err)
		}
	}

	keys := db.ReplyKeys()
	if n, err := keys.Len(); n != 2 || err != nil {
		t.Errorf("reply keys: %d, %v", n, err)
	}
	if k, ok, err := keys.Take(fixtureReplyKeyID); !ok || err != nil || !bytes.Equal(k, bytes.Repeat([]byte{0x4c}, 128)) {
		t.Errorf("reply keys: %x, %v, %v", k, ok, err)
	}

	msgs, total, err := db.ListInbox(0, 10)
	want := fixtureInbox()[:2]
	if err != nil || total != 2 || len(msgs) != 2 {
		t.Fatalf("inbox: %d of %d, %v", len(msgs), total, err)
	}
	for i := range want {
		want[i].Seq = uint64(i + 1)
		m := msgs[i]
		if m.Seq != want[i].Seq || m.ID != want[i].ID || !m.Received.Equal(want[i].Received) || m.SentAt != want[i].SentAt ||
			!bytes.Equal(m.Body, want[i].Body) || m.Reply != want[i].Reply || m.InReplyTo != want[i].InReplyTo ||
			!slices.EqualFunc(m.ReplyBlocks, want[i].ReplyBlocks, bytes.Equal) {
			t.Errorf("inbox message %d: %+v", i, m)
		}
	}
	if seen, err := db.SeenInbox(fixtureInboxIDs[2]); !seen || err != nil {
		t.Errorf("deleted inbox message not remembered: %v, %v", seen, err)
	}
	if seq, dup, err := db.PutInbox(InboxMessage{ID: [16]byte{0x1b, 4}, Received: fixtureNow}); seq != 4 || dup || err != nil {
		t.Errorf("next inbox seq: %d, %v, %v (want 4: never reused)", seq, dup, err)
	}

	for _, want := range fixtureOutbox {
		m, ok, err := db.GetOutbox(want.ID)
		if !ok || err != nil || m.Recipient != want.Recipient || !bytes.Equal(m.Body, want.Body) || m.Replies != want.Replies ||
			m.InReplyTo != want.InReplyTo || m.ReplyTo != want.ReplyTo || !m.Created.Equal(want.Created) ||
			!m.Updated.Equal(want.Updated) || m.State != want.State || m.Reason != want.Reason ||
			m.Attempts != want.Attempts || m.Fragments != want.Fragments || !bytes.Equal(m.Acked, want.Acked) ||
			!slices.EqualFunc(m.Blocks, want.Blocks, bytes.Equal) {
			t.Errorf("outbox %x: %+v, %v, %v", want.ID[:2], m, ok, err)
		}
	}
	if pending, size, err := db.OutboxUsage(); pending != 1 || size != int64(len("queued body")) || err != nil {
		t.Errorf("outbox usage: %d, %d, %v", pending, size, err)
	}
}

// openFixture opens a copy of testdata/name in a temporary directory.
func openFixture(t *testing.T, name string) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, filepath.Join("testdata", name), filepath.Join(dir, FileName))
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteFixture writes testdata/v1.db when run with -write-fixture; otherwise it checks that
// fillFixture and checkFixture agree on a fresh store.
func TestWriteFixture(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fillFixture(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if *writeFixture {
		copyFile(t, filepath.Join(dir, FileName), filepath.Join("testdata", "v1.db"))
		return
	}
	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkFixture(t, db)
}

// TestFixtureV1ReadsBack: every record of the store written by format version 1 reads back
// (TestFixtureV1Migrates checks the migration itself).
func TestFixtureV1ReadsBack(t *testing.T) {
	db, _ := openFixture(t, "v1.db")
	checkFixture(t, db)
}

// quietLog discards what Open logs.
var quietLog = slog.New(slog.DiscardHandler)
