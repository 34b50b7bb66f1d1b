package store

import (
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
	ann := channels.Announcement{Account: common.Address{19: 1}, PublicKey: []byte{2, 1}, Multiaddrs: []string{"/ip4/127.0.0.1/tcp/1"}}
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
	if a, ok := g.Announced(ann.Account); !ok || string(a.PublicKey) != string(ann.PublicKey) || a.Multiaddrs[0] != ann.Multiaddrs[0] {
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
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
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
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChainMeta).Put(keyCursor, []byte{1, 2, 3})
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.LoadChainState(); err == nil {
		t.Fatal("a 3-byte cursor was read")
	}
}
