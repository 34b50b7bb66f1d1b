package chain_test

import (
	"math/big"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
)

// TestIndexerEpochs: with EpochBlocks, OnEpoch is called once for every epoch's first block from
// the one holding StartBlock to the head, each time with the graph as the chain had it just
// before that block: a channel funded again and again across the epochs shows the balance of its
// last funding before the block (nothing before the first). A restarted indexer calls it again
// only for the blocks it indexes again.
func TestIndexerEpochs(t *testing.T) {
	const epoch = 3
	e := newEnv(t)
	alice, _ := e.account("alice", tokens(100))
	bob, _ := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	dir := t.TempDir()
	db := openStore(t, dir)

	var (
		mu       sync.Mutex
		balances = map[uint64]*big.Int{} // block → the channel's balance after its event
		seen     = map[uint64]*big.Int{} // epoch's first block → the balance OnEpoch saw (nil: no channel)
		calls    = map[uint64]int{}
		g        *channels.Graph
	)
	onEpoch := func(first uint64) error {
		mu.Lock()
		defer mu.Unlock()
		calls[first]++
		seen[first] = nil
		if c, ok := g.Channel(a, b); ok {
			seen[first] = new(big.Int).Set(c.Balance)
		}
		return nil
	}
	ix, graph := newIndexer(t, e, alice, db, func(ev chain.Event) {
		if ev.Kind == chain.ChannelEvent {
			mu.Lock()
			balances[ev.Block] = new(big.Int).Set(ev.Channel.Balance)
			mu.Unlock()
		}
	}, func(c *chain.IndexerConfig) { c.EpochBlocks, c.OnEpoch, c.MaxRange = epoch, onEpoch, 100 })
	g = graph
	stop := runIndexer(t, ix)
	for i := range 7 {
		must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(int64(i+1))))
		if i%2 == 1 {
			e.chain.Seal() // an empty block now and then
		}
	}
	syncTo(t, ix, alice)
	stop()
	head := must[uint64](t)(alice.BlockNumber(t.Context()))

	// check: every epoch's first block from from to the head was seen once, with the balance of
	// the channel's last event before it; those from from−reach on may have been seen (once, right).
	check := func(reach, from uint64) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for first := reach - reach%epoch; first <= head; first += epoch {
			var want *big.Int // the balance of the last event before first
			last := uint64(0)
			for block, bal := range balances {
				if block < first && (want == nil || block > last) {
					want, last = bal, block
				}
			}
			got, ok := seen[first]
			if first < from && calls[first] == 0 {
				continue
			}
			if !ok || calls[first] != 1 || (want == nil) != (got == nil) || (want != nil && want.Cmp(got) != 0) {
				t.Errorf("epoch block %d: called %d times, saw %v, want %v", first, calls[first], got, want)
			}
		}
	}
	start := e.chain.Deployment().Block
	check(start, start)
	if len(balances) != 7 {
		t.Fatalf("%d channel events indexed, want 7", len(balances))
	}

	// A restart on the same store: OnEpoch for the first blocks it indexes (again, those after its
	// stored cursor), once each, with the same states.
	prevHead := head
	for k := range calls {
		delete(calls, k)
	}
	for range 4 {
		e.chain.Seal()
	}
	ix2, graph2 := newIndexer(t, e, alice, db, nil, func(c *chain.IndexerConfig) { c.EpochBlocks, c.OnEpoch = epoch, onEpoch })
	mu.Lock()
	g = graph2
	mu.Unlock()
	runIndexer(t, ix2)
	syncTo(t, ix2, alice)
	head = must[uint64](t)(alice.BlockNumber(t.Context()))
	check(0, prevHead+1) // the blocks after the first run's head are new to it
}
