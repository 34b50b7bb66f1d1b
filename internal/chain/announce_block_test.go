package chain_test

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// TestAnnouncementKeepsItsFirstBlock: the index records the block of an account's first
// announcement (a layered topology counts only accounts announced before its epoch); a later
// announcement changes the addresses, not the block; the block survives a restart; and the
// block's hash, a layered epoch's seed, is what HeaderHash reads.
func TestAnnouncementKeepsItsFirstBlock(t *testing.T) {
	e := newEnv(t)
	alice, _ := e.account("alice", tokens(1))
	bob, _ := e.account("bob", tokens(1))
	dir := t.TempDir()
	db := openStore(t, dir)
	ix, g := newIndexer(t, e, alice, db, nil)

	// Before the indexer runs: its first range holds both of alice's announcements.
	must[common.Hash](t)(alice.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/1"}))
	first := must[uint64](t)(alice.BlockNumber(t.Context()))
	must[common.Hash](t)(bob.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/2"}))
	must[common.Hash](t)(alice.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/3"}))
	stop := runIndexer(t, ix)
	syncTo(t, ix, alice)
	a, ok := g.Announced(alice.Address())
	if !ok || a.Block != first || a.Multiaddrs[0] != "/ip4/127.0.0.1/tcp/3" {
		t.Fatalf("alice %+v, want block %d and the new address", a, first)
	}
	if b, _ := g.Announced(bob.Address()); b.Block <= first {
		t.Fatalf("bob announced in block %d, after alice's %d", b.Block, first)
	}
	// Once indexed: a later range's announcement keeps the block too.
	must[common.Hash](t)(alice.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/4"}))
	syncTo(t, ix, alice)
	if a, _ := g.Announced(alice.Address()); a.Block != first || a.Multiaddrs[0] != "/ip4/127.0.0.1/tcp/4" {
		t.Fatalf("alice %+v after a later announcement, want block %d", a, first)
	}
	stop()
	db.Close()

	db = openStore(t, dir)
	defer db.Close()
	ix2, g2 := newIndexer(t, e, alice, db, nil)
	if err := ix2.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a, _ := g2.Announced(alice.Address()); a.Block != first {
		t.Fatalf("after a restart alice's block is %d, want %d", a.Block, first)
	}
	h := must[common.Hash](t)(alice.HeaderHash(t.Context(), first))
	if h == (common.Hash{}) {
		t.Fatal("no hash for the announcement's block")
	}
}
