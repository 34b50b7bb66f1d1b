package chain_test

import (
	"sync"
	"testing"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// TestIndexerFollowsMinWinProb: the indexer reports the deployment's minimum (the constructor
// emits it) and every change the owner makes, as MinWinProbEvent.
func TestIndexerFollowsMinWinProb(t *testing.T) {
	e := newEnv(t)
	owner := e.dial(e.chain.DeployerKey(), e.chain.RPCURL())
	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mu sync.Mutex
	var seen []uint64
	ix, _ := newIndexer(t, e, owner, db, func(ev chain.Event) {
		if ev.Kind == chain.MinWinProbEvent {
			mu.Lock()
			seen = append(seen, ev.MinWinProb)
			mu.Unlock()
		}
	})
	runIndexer(t, ix)
	w, err := tickets.ParseWinProb("0.01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.SetMinWinProb(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	syncTo(t, ix, owner)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != tickets.MaxWinProb || seen[1] != w {
		t.Fatalf("minimum win probability events %v, want [%d %d]", seen, tickets.MaxWinProb, w)
	}
}
