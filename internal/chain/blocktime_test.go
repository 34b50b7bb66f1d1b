package chain_test

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

// TestLifecycleWithBlockTime runs a channel's opening, a redemption and the closure on a chain
// that seals a block every second (transactions wait for it, as on a real chain), indexed with 2
// confirmations: every operation succeeds, and the graph shows each state only once its block is
// 2 deep, then the contract's state.
func TestLifecycleWithBlockTime(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for ~15 one-second blocks")
	}
	c, err := devchain.New(t.Context(), devchain.Config{ClosurePeriod: time.Hour, BlockTime: time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &env{t: t, chain: c}
	alice, aliceKey := e.account("alice", tokens(100))
	bob, _ := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	db := openStore(t, t.TempDir())
	defer db.Close()
	const confirmations = 2
	ix, g := newIndexer(t, e, alice, db, nil, func(c *chain.IndexerConfig) { c.Confirmations = confirmations })
	runIndexer(t, ix)

	start := time.Now()
	h := must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(10)))
	if _, ok := g.Channel(a, b); ok {
		t.Fatal("the opening is in the graph before it has 2 confirmations")
	}
	mined := must[uint64](t)(alice.BlockNumber(t.Context()))
	wait.For(t, func() bool { _, ok := g.Channel(a, b); return ok }, 10*time.Second, "the opening is indexed")
	if head := ix.Head(); head < mined+confirmations {
		t.Fatalf("opening (tx %s, block ≤ %d) indexed at head %d, before %d confirmations", h, mined, head, confirmations)
	}
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)

	price := tickets.AmountFor(2)
	tk, resp := signedTicket(t, e, aliceKey, b, price.ToBig(), 1, 1, 12)
	must[common.Hash](t)(bob.RedeemTicket(t.Context(), tk, resp))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	if ch, _ := g.Channel(a, b); ch.TicketIndex != 1 {
		t.Fatalf("ticket index %d after redeeming, want 1", ch.TicketIndex)
	}

	must[common.Hash](t)(alice.InitiateClosure(t.Context(), b))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.PendingToClose)
	if err := c.AdjustTime(time.Hour); err != nil {
		t.Fatal(err)
	}
	must[common.Hash](t)(alice.FinalizeClosure(t.Context(), b))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Closed)
	t.Logf("open, redeem, close with 1 s blocks and 2 confirmations: %v", time.Since(start).Round(time.Millisecond))
}
