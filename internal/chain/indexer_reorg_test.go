package chain_test

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

// headHash is the hash of the provider's latest block.
func headHash(t *testing.T, c *chain.Client) common.Hash {
	t.Helper()
	return must[common.Hash](t)(c.HeaderHash(t.Context(), must[uint64](t)(c.BlockNumber(t.Context()))))
}

// eventLog collects an indexer's events.
type eventLog struct {
	mu     sync.Mutex
	events []chain.Event
}

// add records channel and announcement events (the network minimum's have their own test).
func (l *eventLog) add(ev chain.Event) {
	if ev.Kind == chain.MinWinProbEvent {
		return
	}
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// reorgs returns the Reorg events received so far.
func (l *eventLog) reorgs() []chain.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []chain.Event
	for _, ev := range l.events {
		if ev.Reorg {
			out = append(out, ev)
		}
	}
	return out
}

// TestReorgRollsBack forks the dev chain below blocks the indexer has indexed, with a longer
// branch that lacks their transactions: an opening (and an announcement) in the dropped branch
// disappears from the graph and the store, a redemption in it is rolled back (the channel's
// ticket index and balance return), OnEvent reports both with Event.Reorg, and the indexer
// follows the new branch (the ticket redeemed again there is indexed).
func TestReorgRollsBack(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("alice", tokens(100))
	bob, bobKey := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	dir := t.TempDir()
	db := openStore(t, dir)
	defer db.Close()
	var log eventLog
	ix, g := newIndexer(t, e, alice, db, log.add)
	runIndexer(t, ix)

	// An announcement and an opening in blocks a reorganisation drops. The undo journal can roll
	// back only to a block it has a checkpoint at or below, and the indexer's first range ends
	// wherever the head is when it first runs: indexed first, so that the ancestor is not inside
	// that range (an indexer that started late would rightly find the reorg deeper than its
	// journal).
	syncTo(t, ix, alice)
	ancestor := headHash(t, alice)
	must[common.Hash](t)(alice.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/9091"}))
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(10)))
	syncTo(t, ix, alice)
	if c, ok := g.Channel(a, b); !ok || c.Status != channels.Open {
		t.Fatalf("channel not indexed: %+v", c)
	}
	if _, err := e.chain.Reorg(t.Context(), ancestor, true); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { _, ok := g.Channel(a, b); return !ok }, 10*time.Second, "the dropped opening leaves the graph")
	if _, err := ix.Announcement(a); !errors.Is(err, chain.ErrNotAnnounced) {
		t.Fatalf("the dropped announcement: %v, want ErrNotAnnounced", err)
	}
	evs := log.reorgs()
	if len(evs) != 2 || evs[0].Kind != chain.ChannelEvent || evs[0].Channel.Status != channels.Closed || evs[0].Channel.Epoch != 0 ||
		evs[0].Previous == nil || evs[0].Previous.Status != channels.Open || evs[1].Kind != chain.AnnouncementEvent ||
		evs[1].Announcement.Account != a || evs[1].Announcement.PublicKey != nil {
		t.Fatalf("reorg events %+v", evs)
	}
	if _, chans, anns, err := db.LoadChainState(); err != nil || len(chans) != 0 || len(anns) != 0 {
		t.Fatalf("store after the rollback: %d channels, %d announcements, %v", len(chans), len(anns), err)
	}

	// The clients' nonces of the dropped transactions are reused: dial again.
	alice, bob = e.dial(aliceKey, e.chain.RPCURL()), e.dial(bobKey, e.chain.RPCURL())
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(10)))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)

	// A redemption in blocks a reorganisation drops.
	ancestor = headHash(t, alice)
	price := tickets.AmountFor(2)
	tk, resp := signedTicket(t, e, aliceKey, b, price.ToBig(), 1, 1, 11)
	must[common.Hash](t)(bob.RedeemTicket(t.Context(), tk, resp))
	syncTo(t, ix, alice)
	if c, _ := g.Channel(a, b); c.TicketIndex != 1 {
		t.Fatalf("redemption not indexed: %+v", c)
	}
	if _, err := e.chain.Reorg(t.Context(), ancestor, true); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { c, _ := g.Channel(a, b); return c.TicketIndex == 0 }, 10*time.Second, "the dropped redemption is rolled back")
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	if c, _ := g.Channel(a, b); c.Balance.Cmp(tokens(10)) != 0 {
		t.Fatalf("balance %v after the rollback, want 10 tokens", c.Balance)
	}
	evs = log.reorgs()
	if last := evs[len(evs)-1]; len(evs) != 3 || last.Previous == nil || last.Previous.TicketIndex != 1 || last.Channel.TicketIndex != 0 {
		t.Fatalf("reorg events %+v", evs)
	}

	// The ticket is redeemable again on the new branch, and the indexer follows it.
	bob = e.dial(bobKey, e.chain.RPCURL())
	must[common.Hash](t)(bob.RedeemTicket(t.Context(), tk, resp))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	if c, _ := g.Channel(a, b); c.TicketIndex != 1 {
		t.Fatalf("redemption on the new branch not indexed: %+v", c)
	}
}

// TestReorgDeeperThanJournal forks the chain below every block of a one-block undo journal:
// the indexer cannot find a common ancestor and stops with ErrChainReplaced.
func TestReorgDeeperThanJournal(t *testing.T) {
	e := newEnv(t)
	alice, _ := e.account("alice", tokens(100))
	db := openStore(t, t.TempDir())
	defer db.Close()
	ix, _ := newIndexer(t, e, alice, db, nil, func(c *chain.IndexerConfig) { c.ReorgDepth = 1 })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()

	ancestor := headHash(t, alice)
	for i := range 3 {
		must[common.Hash](t)(alice.FundChannel(t.Context(), common.Address{0xb0, byte(i)}, tokens(1)))
		syncTo(t, ix, alice)
	}
	if _, err := e.chain.Reorg(t.Context(), ancestor, true); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, chain.ErrChainReplaced) {
			t.Fatalf("Run after a reorg deeper than the journal: %v, want ErrChainReplaced", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("indexer kept running")
	}
}

// TestDefaultConfirmations: none on development chains, some elsewhere.
func TestDefaultConfirmations(t *testing.T) {
	for id, want := range map[uint64]uint64{1337: 0, 31337: 0, 1: 8, 100: 8, 11155111: 8} {
		if got := chain.DefaultConfirmations(id); got != want {
			t.Errorf("DefaultConfirmations(%d) = %d, want %d", id, got, want)
		}
	}
}

// TestConfirmationsAbsorbShallowReorg: with 2 confirmations, an opening whose blocks a
// reorganisation drops before they are 2 deep never reaches the graph, the store or OnEvent.
// The chain seals only on transactions (no idle blocks), so depths are exact.
func TestConfirmationsAbsorbShallowReorg(t *testing.T) {
	c, err := devchain.New(t.Context(), devchain.Config{ClosurePeriod: time.Hour, BlockInterval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &env{t: t, chain: c}
	alice, _ := e.account("alice", tokens(100))
	bob, _ := e.account("bob", tokens(1))
	db := openStore(t, t.TempDir())
	defer db.Close()
	var log eventLog
	ix, g := newIndexer(t, e, alice, db, log.add, func(c *chain.IndexerConfig) { c.Confirmations = 2 })
	runIndexer(t, ix)

	ancestor := headHash(t, alice)
	must[common.Hash](t)(alice.FundChannel(t.Context(), bob.Address(), tokens(10))) // approve and fund: 2 blocks
	if _, err := c.Reorg(t.Context(), ancestor, true); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the new branch grows past the confirmations
		must[common.Hash](t)(bob.TransferToken(t.Context(), common.Address{0xee}, big.NewInt(1)))
	}
	// Indexed up to head - 2: past the blocks the opening had on the dropped branch.
	head := must[uint64](t)(bob.BlockNumber(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := ix.WaitSynced(ctx, head-2); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Channel(alice.Address(), bob.Address()); ok {
		t.Fatal("the dropped opening is in the graph")
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.events) != 0 {
		t.Fatalf("events of dropped blocks: %+v", log.events)
	}
}
