package chain_test

import (
	"context"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestChannelLifecycleIndexed runs announce, fund, top-up, redeem, initiate, finalize, reopen and
// close-incoming, and checks after each step that the client's calls succeed and that the
// indexer's graph equals the contract's state; then that a new indexer on the same store resumes
// with the same graph and keeps following.
func TestChannelLifecycleIndexed(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("alice", tokens(100))
	bob, _ := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	dir := t.TempDir()
	db := openStore(t, dir)

	var mu sync.Mutex
	var events []chain.Event
	ix, g := newIndexer(t, e, alice, db, func(ev chain.Event) {
		if ev.Kind != chain.MinWinProbEvent { // TestIndexerFollowsMinWinProb's
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	})
	stop := runIndexer(t, ix)

	addrs := []string{"/ip4/127.0.0.1/tcp/9091", "/ip4/127.0.0.1/udp/9091/quic-v1"}
	must[common.Hash](t)(alice.Announce(t.Context(), addrs))
	syncTo(t, ix, alice)
	ann, err := ix.Announcement(a)
	if err != nil || string(ann.PublicKey) != string(crypto.CompressPubkey(&aliceKey.PublicKey)) || len(ann.Multiaddrs) != 2 || ann.Multiaddrs[1] != addrs[1] {
		t.Fatalf("announcement %+v, %v", ann, err)
	}
	if _, err := ix.Announcement(b); !errors.Is(err, chain.ErrNotAnnounced) {
		t.Fatalf("bob: %v, want ErrNotAnnounced", err)
	}

	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(10)))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(5)))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	if c, _ := g.Channel(a, b); c.Balance.Cmp(tokens(15)) != 0 || c.Epoch != 1 {
		t.Fatalf("after top-up: %+v", c)
	}

	price := tickets.AmountFor(2)
	amount := price.ToBig()
	tk, resp := signedTicket(t, e, aliceKey, b, amount, 1, 1, 10)
	before := must[*big.Int](t)(bob.TokenBalance(t.Context(), b))
	must[common.Hash](t)(bob.RedeemTicket(t.Context(), tk, resp))
	if after := must[*big.Int](t)(bob.TokenBalance(t.Context(), b)); new(big.Int).Sub(after, before).Cmp(amount) != 0 {
		t.Fatalf("bob received %v, want %v", new(big.Int).Sub(after, before), amount)
	}
	// The same ticket again: the contract's reason, nothing sent.
	_, err = bob.RedeemTicket(t.Context(), tk, resp)
	var rev *chain.RevertError
	if !errors.As(err, &rev) || rev.Reason[:len("IndexNotIncreasing")] != "IndexNotIncreasing" {
		t.Fatalf("replayed ticket: %v", err)
	}
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	if c, _ := g.Channel(a, b); c.TicketIndex != 1 {
		t.Fatalf("ticket index %d after redeeming, want 1", c.TicketIndex)
	}

	must[common.Hash](t)(alice.InitiateClosure(t.Context(), b))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.PendingToClose)
	if _, err := alice.FinalizeClosure(t.Context(), b); !errors.Is(err, chain.ErrReverted) {
		t.Fatalf("finalize before the closure time: %v", err)
	}
	if err := e.chain.AdjustTime(time.Hour); err != nil {
		t.Fatal(err)
	}
	must[common.Hash](t)(alice.FinalizeClosure(t.Context(), b))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Closed)

	// Restart: a new indexer and graph on the same store start from the stored state.
	stop()
	db.Close()
	db = openStore(t, dir)
	defer db.Close()
	ix2, g2 := newIndexer(t, e, alice, db, nil)
	runIndexer(t, ix2)
	syncTo(t, ix2, alice)
	wantGraphMatchesChain(t, g2, alice, a, b, channels.Closed)
	if p := g2.Peers(); len(p) != 1 || p[0].Account != a {
		t.Fatalf("peers after restart: %+v", p)
	}
	// It keeps following: reopen (epoch 2) and the destination closes it at once.
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(1)))
	must[common.Hash](t)(bob.CloseIncoming(t.Context(), a))
	syncTo(t, ix2, alice)
	wantGraphMatchesChain(t, g2, alice, a, b, channels.Closed)
	if c, _ := g2.Channel(a, b); c.Epoch != 2 {
		t.Fatalf("epoch %d after reopening, want 2", c.Epoch)
	}

	// The first indexer's events, in order.
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	for _, ev := range events {
		if ev.Kind == chain.AnnouncementEvent {
			kinds = append(kinds, "announce")
			continue
		}
		kinds = append(kinds, ev.Channel.Status.String())
	}
	want := []string{"announce", "Open", "Open", "Open", "PendingToClose", "Closed"}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if events[1].Previous != nil || events[2].Previous == nil || events[2].Previous.Balance.Cmp(tokens(10)) != 0 {
		t.Fatalf("previous states: %+v / %+v", events[1].Previous, events[2].Previous)
	}
}

// proxy is a TCP proxy to a provider that a test can take down and bring back on the same port.
type proxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target, conns: map[net.Conn]bool{}}
	p.up("127.0.0.1:0")
	t.Cleanup(p.down)
	return p
}

func (p *proxy) url() string { return "http://" + p.addr }

func (p *proxy) up(addr string) {
	p.t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[u] = true, true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// TestIndexerSurvivesOutage takes the indexer's provider away while channels change, checks that
// the graph stays at the last indexed state (and Run keeps going), then brings the provider back
// and checks that no event was lost.
func TestIndexerSurvivesOutage(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("alice", tokens(100))
	bob, _ := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	p := newProxy(t, e.chain.RPCURL()[len("http://"):])
	viaProxy := e.dial(aliceKey, p.url())
	db := openStore(t, t.TempDir())
	defer db.Close()
	ix, g := newIndexer(t, e, viaProxy, db, nil)
	runIndexer(t, ix)

	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(10)))
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.Open)
	// The step that synced records the provider's answer just after it: poll.
	wait.For(t, ix.ProviderUp, 10*time.Second, "ProviderUp true after the indexer synced")

	p.down()
	if _, err := viaProxy.BlockNumber(t.Context()); !errors.Is(err, chain.ErrProviderUnavailable) {
		t.Fatalf("through the closed proxy: %v, want ErrProviderUnavailable", err)
	}
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(5)))
	must[common.Hash](t)(alice.InitiateClosure(t.Context(), b))
	must[common.Hash](t)(bob.Announce(t.Context(), []string{"/ip4/127.0.0.1/tcp/1"}))
	head := must[uint64](t)(alice.BlockNumber(t.Context()))
	// While the provider is down the graph must not move and the indexer must not claim the head.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	err := ix.WaitSynced(ctx, head)
	cancel()
	if err == nil {
		t.Fatal("indexer synced through a dead provider")
	}
	if c, _ := g.Channel(a, b); c.Balance.Cmp(tokens(10)) != 0 || c.Status != channels.Open {
		t.Fatalf("graph moved during the outage: %+v", c)
	}
	wait.For(t, func() bool { return !ix.ProviderUp() }, 10*time.Second, "ProviderUp false during the outage")

	p.up(p.addr)
	syncTo(t, ix, alice)
	wantGraphMatchesChain(t, g, alice, a, b, channels.PendingToClose)
	if c, _ := g.Channel(a, b); c.Balance.Cmp(tokens(15)) != 0 {
		t.Fatalf("balance %v after the outage, want 15 tokens", c.Balance)
	}
	if _, err := ix.Announcement(b); err != nil {
		t.Fatalf("announcement made during the outage: %v", err)
	}
	if h := ix.Head(); h < head {
		t.Fatalf("Head %d after the outage, want at least %d", h, head)
	}
	wait.For(t, ix.ProviderUp, 10*time.Second, "ProviderUp true after the outage")
}

// TestGraphOnlyShowsChainStates watches the graph from another goroutine while a channel goes
// through many states, and checks that every state it ever showed was emitted by the contract.
func TestGraphOnlyShowsChainStates(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("alice", tokens(100))
	bob, _ := e.account("bob", nil)
	a, b := alice.Address(), bob.Address()
	db := openStore(t, t.TempDir())
	defer db.Close()
	ix, g := newIndexer(t, e, alice, db, nil)
	runIndexer(t, ix)

	seen := map[string]bool{}
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			default:
			}
			if c, ok := g.Channel(a, b); ok {
				seen[stateKey(c)] = true
			}
		}
	}()
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(3)))
	for i := uint64(1); i <= 4; i++ {
		price := tickets.AmountFor(1)
		tk, resp := signedTicket(t, e, aliceKey, b, price.ToBig(), i, 1, byte(20+i))
		must[common.Hash](t)(bob.RedeemTicket(t.Context(), tk, resp))
	}
	must[common.Hash](t)(alice.FundChannel(t.Context(), b, tokens(1)))
	must[common.Hash](t)(bob.CloseIncoming(t.Context(), a))
	syncTo(t, ix, alice)
	close(stopWatch)
	<-watched

	// Every ChannelUpdated the contract emitted, read straight from the chain.
	legit := map[string]bool{}
	db2 := openStore(t, t.TempDir())
	defer db2.Close()
	var mu sync.Mutex
	ix2, _ := newIndexer(t, e, alice, db2, func(ev chain.Event) {
		if ev.Kind == chain.ChannelEvent {
			mu.Lock()
			legit[stateKey(ev.Channel)] = true
			mu.Unlock()
		}
	})
	runIndexer(t, ix2)
	syncTo(t, ix2, alice)
	mu.Lock()
	defer mu.Unlock()
	if len(legit) != 7 { // open, 4 redemptions, top-up, close
		t.Fatalf("%d distinct emitted states, want 7: %v (seen %v)", len(legit), legit, seen)
	}
	for s := range seen {
		if !legit[s] {
			t.Fatalf("graph showed %s, which the chain never had", s)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("watcher saw only %d states", len(seen))
	}
}

func stateKey(c channels.Channel) string {
	return c.Status.String() + "/" + c.Balance.String() + "/" + big.NewInt(int64(c.TicketIndex)).String() + "/" + big.NewInt(int64(c.Epoch)).String()
}

// TestIndexerNoticesAnotherChain restarts the dev chain: the new one has the same chain id and
// contract addresses but another history (and genesis). An indexer resuming from the old chain's
// store, or running while its provider is replaced, must not go on showing channels the new chain
// does not have: it stops with ErrChainReplaced, or with ReindexOnNewChain drops what it stored.
func TestIndexerNoticesAnotherChain(t *testing.T) {
	reindex := func(c *chain.IndexerConfig) { c.ReindexOnNewChain = true }
	// replaceChain indexes a channel on a dev chain reached through a proxy (with ix running in
	// the background; its Run's result goes to done), then replaces the chain behind the proxy
	// with a fresh one whose head stays below the old one's.
	replaceChain := func(t *testing.T, db *store.DB, opts ...func(*chain.IndexerConfig)) (g *channels.Graph, done chan error, alice2 *chain.Client, e2 *env) {
		e1 := newEnv(t)
		alice, aliceKey := e1.account("alice", tokens(10))
		p := newProxy(t, e1.chain.RPCURL()[len("http://"):])
		ix, g := newIndexer(t, e1, e1.dial(aliceKey, p.url()), db, nil, opts...)
		ctx, cancel := context.WithCancel(t.Context())
		done = make(chan error, 1)
		go func() { done <- ix.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		must[common.Hash](t)(alice.FundChannel(t.Context(), common.Address{0xb0}, tokens(1)))
		syncTo(t, ix, alice)
		if len(g.Outgoing(alice.Address())) != 1 {
			t.Fatal("channel not indexed")
		}
		e2 = newEnv(t)
		if e2.chain.ChannelsAddress() != e1.chain.ChannelsAddress() {
			t.Skip("the restarted dev chain deployed elsewhere; nothing to confuse")
		}
		oldHead := must[uint64](t)(alice.BlockNumber(t.Context()))
		p.down()
		_ = e1.chain.Close()
		p.target = e2.chain.RPCURL()[len("http://"):]
		p.up(p.addr)
		alice2, _ = e2.account("alice", tokens(10))
		if must[uint64](t)(alice2.BlockNumber(t.Context()))+1 >= oldHead {
			t.Fatal("the new chain is not behind the old one")
		}
		return g, done, alice2, e2
	}
	waitDone := func(t *testing.T, done chan error) error {
		t.Helper()
		select {
		case err := <-done:
			done <- nil // for the cleanup
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("indexer kept running on a replaced chain")
			return nil
		}
	}

	t.Run("while running, stops", func(t *testing.T) {
		db := openStore(t, t.TempDir())
		defer db.Close()
		g, done, alice2, _ := replaceChain(t, db)
		if err := waitDone(t, done); !errors.Is(err, chain.ErrChainReplaced) {
			t.Fatalf("Run with a replaced provider: %v, want ErrChainReplaced", err)
		}
		if out := g.Outgoing(alice2.Address()); len(out) != 1 {
			t.Fatalf("a stopped indexer changed the graph: %d channels", len(out))
		}
	})
	t.Run("while running, reindexes when told", func(t *testing.T) {
		db := openStore(t, t.TempDir())
		defer db.Close()
		g, _, alice2, _ := replaceChain(t, db, reindex)
		deadline := time.Now().Add(20 * time.Second)
		for len(g.Outgoing(alice2.Address())) != 0 {
			if time.Now().After(deadline) {
				t.Fatal("graph still shows the channel of the previous chain")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("at start, stops", func(t *testing.T) {
		db := openStore(t, t.TempDir())
		defer db.Close()
		_, done, alice2, e2 := replaceChain(t, db)
		_ = waitDone(t, done)
		ix2, g2 := newIndexer(t, e2, alice2, db, nil)
		if err := ix2.Load(t.Context()); !errors.Is(err, chain.ErrChainReplaced) {
			t.Fatalf("Load on a replaced chain: %v, want ErrChainReplaced", err)
		}
		if err := ix2.Run(t.Context()); !errors.Is(err, chain.ErrChainReplaced) {
			t.Fatalf("Run on a replaced chain: %v, want ErrChainReplaced", err)
		}
		if out := g2.Outgoing(alice2.Address()); len(out) != 0 {
			t.Fatalf("graph shows %d channels of the previous chain", len(out))
		}
	})
	t.Run("at start, reindexes when told", func(t *testing.T) {
		db := openStore(t, t.TempDir())
		defer db.Close()
		_, done, alice2, e2 := replaceChain(t, db)
		_ = waitDone(t, done)
		ix2, g2 := newIndexer(t, e2, alice2, db, nil, reindex)
		runIndexer(t, ix2)
		syncTo(t, ix2, alice2)
		if out := g2.Outgoing(alice2.Address()); len(out) != 0 {
			t.Fatalf("graph shows %d channels of the previous chain", len(out))
		}
	})
}
