package store

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/channels"
)

func testChannel(src, dst byte, balance int64, status channels.Status) channels.Channel {
	s, d := common.Address{19: src}, common.Address{19: dst}
	return channels.Channel{
		ID: channels.IDOf(s, d), Source: s, Destination: d, Balance: big.NewInt(balance),
		TicketIndex: 3, Epoch: 2, Status: status,
	}
}

func TestChainStatePersists(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, chans, anns, err := db.LoadChainState()
	if err != nil || cur != (ChainCursor{}) || chans != nil || anns != nil {
		t.Fatalf("empty store: %+v %v %v %v", cur, chans, anns, err)
	}
	contract := common.Address{1}
	pending := testChannel(1, 2, 5, channels.PendingToClose)
	pending.ClosureTime = time.Unix(1_700_000_000, 0)
	ann := channels.Announcement{Account: common.Address{19: 1}, PublicKey: []byte{2, 1}, Multiaddrs: []string{"/ip4/127.0.0.1/tcp/1"}, Block: 7}
	if err := db.CommitChainState(ChainCursor{ChainID: 1337, Contract: contract, Next: 10, Hash: common.Hash{9}},
		[]channels.Channel{testChannel(1, 2, 7, channels.Open), testChannel(2, 1, 1, channels.Open)},
		[]channels.Announcement{ann}); err != nil {
		t.Fatal(err)
	}
	// A later commit upserts: the 1→2 channel changes, 2→1 stays.
	if err := db.CommitChainState(ChainCursor{ChainID: 1337, Contract: contract, Next: 12, Hash: common.Hash{8}},
		[]channels.Channel{pending}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cur, chans, anns, err = db.LoadChainState()
	if err != nil {
		t.Fatal(err)
	}
	if want := (ChainCursor{ChainID: 1337, Contract: contract, Next: 12, Hash: common.Hash{8}}); cur != want {
		t.Fatalf("cursor %+v, want %+v", cur, want)
	}
	g := channels.NewGraph()
	g.ApplyAll(chans, anns)
	if len(chans) != 2 {
		t.Fatalf("%d channels, want 2", len(chans))
	}
	if c, _ := g.Channel(pending.Source, pending.Destination); !c.Equal(pending) {
		t.Fatalf("channel %+v, want %+v", c, pending)
	}
	if c, _ := g.Channel(common.Address{19: 2}, common.Address{19: 1}); c.Balance.Int64() != 1 {
		t.Fatalf("untouched channel lost: %+v", c)
	}
	if a, ok := g.Announced(ann.Account); !ok || string(a.PublicKey) != string(ann.PublicKey) || a.Multiaddrs[0] != ann.Multiaddrs[0] || a.Block != 7 {
		t.Fatalf("announcement %+v", a)
	}
}

func TestChainStateOtherContractStartsOver(t *testing.T) {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CommitChainState(ChainCursor{ChainID: 1, Contract: common.Address{1}, Next: 5},
		[]channels.Channel{testChannel(1, 2, 7, channels.Open)}, []channels.Announcement{{Account: common.Address{3}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CommitChainState(ChainCursor{ChainID: 1, Contract: common.Address{2}, Next: 1},
		[]channels.Channel{testChannel(3, 4, 1, channels.Open)}, nil); err != nil {
		t.Fatal(err)
	}
	cur, chans, anns, err := db.LoadChainState()
	if err != nil {
		t.Fatal(err)
	}
	if cur.Contract != (common.Address{2}) || len(chans) != 1 || chans[0].Source != (common.Address{19: 3}) || len(anns) != 0 {
		t.Fatalf("state of another contract leaked: %+v %+v %+v", cur, chans, anns)
	}
	if err := db.ResetChainState(); err != nil {
		t.Fatal(err)
	}
	if cur, chans, _, _ := db.LoadChainState(); cur != (ChainCursor{}) || len(chans) != 0 {
		t.Fatalf("after reset: %+v %+v", cur, chans)
	}
}

// TestChainCursorGenesis keeps the genesis hash with the cursor, reads a cursor stored before the
// genesis was kept, and starts over when a cursor of another genesis is committed.
func TestChainCursorGenesis(t *testing.T) {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	contract := common.Address{1}
	old := ChainCursor{ChainID: 1337, Contract: contract, Next: 10, Hash: common.Hash{9}}
	// A cursor in the layout of stores written before the genesis was kept.
	if err := db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChainMeta).Put(keyCursor, encodeCursor(old)[:cursorLenV1])
	}); err != nil {
		t.Fatal(err)
	}
	if cur, _, _, err := db.LoadChainState(); err != nil || cur != old {
		t.Fatalf("old cursor read as %+v, %v; want %+v", cur, err, old)
	}
	withGenesis := ChainCursor{ChainID: 1337, Contract: contract, Next: 12, Hash: common.Hash{8}, Genesis: common.Hash{7}}
	if err := db.CommitChainState(withGenesis, []channels.Channel{testChannel(1, 2, 7, channels.Open)}, nil); err != nil {
		t.Fatal(err)
	}
	cur, chans, _, err := db.LoadChainState()
	if err != nil || cur != withGenesis || len(chans) != 1 {
		t.Fatalf("after commit: %+v, %d channels, %v", cur, len(chans), err)
	}
	other := ChainCursor{ChainID: 1337, Contract: contract, Next: 3, Hash: common.Hash{6}, Genesis: common.Hash{5}}
	if err := db.CommitChainState(other, nil, nil); err != nil {
		t.Fatal(err)
	}
	if cur, chans, _, err := db.LoadChainState(); err != nil || cur != other || len(chans) != 0 {
		t.Fatalf("another genesis kept %d channels of the old one (cursor %+v, %v)", len(chans), cur, err)
	}
	if err := db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChainMeta).Put(keyCursor, []byte{1, 2, 3})
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.LoadChainState(); err == nil {
		t.Fatal("a 3-byte cursor was read")
	}
}

// TestChainRewind journals three committed ranges, rewinds to the middle checkpoint (a
// redemption and an announcement undone), then to the first (an opening undone: the channel is
// gone), and checks what each rewind reports, the stored state and the cursor; and that the
// journal is pruned to its depth.
func TestChainRewind(t *testing.T) {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cur := func(next uint64, h byte) ChainCursor {
		return ChainCursor{ChainID: 1, Contract: common.Address{1}, Next: next, Hash: common.Hash{h}}
	}
	old := testChannel(1, 2, 5, channels.Open) // open before the journal's ranges
	opened := testChannel(3, 4, 9, channels.Open)
	redeemed := opened
	redeemed.TicketIndex, redeemed.Balance = 7, big.NewInt(8)
	ann := channels.Announcement{Account: common.Address{19: 3}, PublicKey: []byte{2, 3}, Multiaddrs: []string{"/ip4/127.0.0.1/tcp/3"}}
	const depth = 64
	steps := []struct {
		cur   ChainCursor
		chans []channels.Channel
		anns  []channels.Announcement
	}{
		{cur(11, 10), []channels.Channel{old}, nil},
		{cur(13, 12), []channels.Channel{opened}, nil},
		{cur(16, 15), []channels.Channel{redeemed}, []channels.Announcement{ann}},
	}
	for _, s := range steps {
		if err := db.CommitChainRange(s.cur, s.chans, s.anns, depth); err != nil {
			t.Fatal(err)
		}
	}
	j, err := db.ChainJournal()
	if err != nil || len(j) != 3 || j[0] != (ChainCheckpoint{15, common.Hash{15}}) || j[2] != (ChainCheckpoint{10, common.Hash{10}}) {
		t.Fatalf("journal %+v, %v", j, err)
	}
	if _, err := db.RewindChainState(ChainCheckpoint{12, common.Hash{99}}); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("rewind to a checkpoint of another hash: %v", err)
	}

	rw, err := db.RewindChainState(ChainCheckpoint{12, common.Hash{12}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rw.Channels) != 1 || !rw.Channels[0].Undone.Equal(redeemed) || rw.Channels[0].Restored == nil || !rw.Channels[0].Restored.Equal(opened) {
		t.Fatalf("channels rewound %+v", rw.Channels)
	}
	if len(rw.Announcements) != 1 || rw.Announcements[0].Undone.Account != ann.Account || rw.Announcements[0].Restored != nil {
		t.Fatalf("announcements rewound %+v", rw.Announcements)
	}
	c, chans, anns, err := db.LoadChainState()
	if err != nil || c != cur(13, 12) || len(anns) != 0 || len(chans) != 2 {
		t.Fatalf("after the first rewind: %+v %d channels %d announcements %v", c, len(chans), len(anns), err)
	}

	rw, err = db.RewindChainState(ChainCheckpoint{10, common.Hash{10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rw.Channels) != 1 || !rw.Channels[0].Undone.Equal(opened) || rw.Channels[0].Restored != nil {
		t.Fatalf("opening rewound %+v", rw.Channels)
	}
	c, chans, _, err = db.LoadChainState()
	if err != nil || c != cur(11, 10) || len(chans) != 1 || !chans[0].Equal(old) {
		t.Fatalf("after the second rewind: %+v %+v %v", c, chans, err)
	}
	if j, _ := db.ChainJournal(); len(j) != 1 {
		t.Fatalf("journal after rewinding %+v", j)
	}

	// Pruning: with depth 3, a checkpoint at 20 keeps 18..20 and the newest one at or below 17.
	for _, s := range []ChainCursor{cur(13, 12), cur(16, 15), cur(21, 20)} {
		if err := db.CommitChainRange(s, nil, nil, 3); err != nil {
			t.Fatal(err)
		}
	}
	j, _ = db.ChainJournal()
	if len(j) != 2 || j[0].Block != 20 || j[1].Block != 15 {
		t.Fatalf("pruned journal %+v, want blocks 20 and 15", j)
	}
	// A commit without a journal drops it.
	if err := db.CommitChainState(cur(22, 21), nil, nil); err != nil {
		t.Fatal(err)
	}
	if j, _ := db.ChainJournal(); len(j) != 0 {
		t.Fatalf("journal kept by CommitChainState: %+v", j)
	}
}
