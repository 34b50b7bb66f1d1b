package strategy

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// world is a node's view kept in memory: Open adds a channel and spends its funding.
type world struct {
	mu       sync.Mutex
	balance  *big.Int
	peers    []Peer
	open     map[common.Address]*big.Int
	failOpen map[common.Address]bool
	opens    int
	failUp   bool
	topUps   int
}

func (w *world) TopUp(_ context.Context, p common.Address, amount *big.Int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.topUps++
	if w.failUp {
		return errors.New("chain says no")
	}
	w.balance.Sub(w.balance, amount)
	w.open[p] = new(big.Int).Add(w.open[p], amount)
	return nil
}

func (w *world) State(context.Context) (State, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := State{Balance: new(big.Int).Set(w.balance), Peers: w.peers}
	for p, b := range w.open {
		st.Open = append(st.Open, Channel{Peer: p, Balance: b})
	}
	return st, nil
}

func (w *world) Open(_ context.Context, p common.Address, amount *big.Int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opens++
	if w.failOpen[p] {
		return errors.New("chain says no")
	}
	w.balance.Sub(w.balance, amount)
	w.open[p] = amount
	return nil
}

func (w *world) Close(_ context.Context, p common.Address) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.open, p)
	return nil
}

func TestRunnerConverges(t *testing.T) {
	w := &world{balance: tok(100), open: map[common.Address]*big.Int{}, failOpen: map[common.Address]bool{addr(1): true}}
	for i := range 8 {
		w.peers = append(w.peers, Peer{Address: addr(byte(i + 1)), Quality: 1})
	}
	policy := Policy{Strategy: Passive, MaxChannels: 4, MaxOpensPerTick: 3, ChannelFunding: tok(10)}
	r, err := NewRunner(RunnerConfig{Policy: func() Policy { return policy }, World: w,
		Rand: rand.New(rand.NewPCG(1, 2)), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if as, _ := r.Tick(t.Context()); len(as) != 0 || w.opens != 0 {
		t.Fatalf("passive acted: %+v", as)
	}
	policy.Strategy = Promiscuous // a setting changed: read at the next tick
	if as, _ := r.Tick(t.Context()); len(as) != 0 {
		t.Fatalf("opened before the peers were seen twice: %+v", as)
	}
	for range 5 {
		r.Tick(t.Context())
	}
	if len(w.open) != 4 {
		t.Fatalf("%d channels open after five ticks, want 4", len(w.open))
	}
	if _, ok := w.open[addr(1)]; ok {
		t.Fatal("a failed opening counted as open")
	}
	if w.balance.Cmp(tok(60)) != 0 {
		t.Fatalf("balance %v, want 60 tokens", w.balance)
	}
	// A peer that becomes unreachable loses its channel, and another one gets it.
	var gone common.Address
	for p := range w.open {
		gone = p
		break
	}
	for i := range w.peers {
		if w.peers[i].Address == gone {
			w.peers[i].Quality = 0
		}
	}
	r.Tick(t.Context())
	r.Tick(t.Context())
	if _, ok := w.open[gone]; ok || len(w.open) != 4 {
		t.Fatalf("channel to an unreachable peer kept, or not replaced: %d open", len(w.open))
	}
	// A newly announced peer holds back openings for one tick.
	w.peers = append(w.peers, Peer{Address: addr(99), Quality: 1})
	dropped := 0
	for p := range w.open { // two channels closed elsewhere: room for two
		if dropped < 2 {
			delete(w.open, p)
			dropped++
		}
	}
	if as, _ := r.Tick(t.Context()); len(as) != 0 {
		t.Fatalf("opened while the peers changed: %+v", as)
	}
	r.Tick(t.Context())
	if len(w.open) != 4 {
		t.Fatalf("channel to an unreachable peer kept, or not replaced: %d open", len(w.open))
	}
}

// TestRunnerTopsUp: the top-up ticks only top up, even under promiscuous; a failed top-up is not
// tried again before the next full interval.
func TestRunnerTopsUp(t *testing.T) {
	w := &world{balance: tok(100), open: map[common.Address]*big.Int{addr(1): tok(2)}, failUp: true,
		peers: []Peer{{Address: addr(1), Quality: 1}, {Address: addr(2), Quality: 1}}}
	policy := Policy{Strategy: Promiscuous, MaxChannels: 4, ChannelFunding: tok(10), TopUp: true}
	r, err := NewRunner(RunnerConfig{Policy: func() Policy { return policy }, World: w, Interval: time.Hour,
		Rand: rand.New(rand.NewPCG(1, 2)), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if as, errs := r.TopUpTick(t.Context()); len(as) != 1 || as[0].Kind != TopUp || errs[0] == nil || w.opens != 0 {
		t.Fatalf("top-up tick: %+v %v (%d opens)", as, errs, w.opens)
	}
	w.failUp = false
	if as, _ := r.TopUpTick(t.Context()); len(as) != 0 || w.topUps != 1 {
		t.Fatalf("a failed top-up was tried again at once: %+v", as)
	}
	r.held[addr(1)] = time.Now().Add(-time.Second) // the interval passed
	if as, errs := r.TopUpTick(t.Context()); len(as) != 1 || errs[0] != nil || w.open[addr(1)].Cmp(tok(10)) != 0 {
		t.Fatalf("top-up after the hold: %+v %v, channel %v", as, errs, w.open[addr(1)])
	}
	policy.TopUp = false
	w.open[addr(1)] = tok(1)
	if as, _ := r.TopUpTick(t.Context()); len(as) != 0 {
		t.Fatalf("topped up with TopUp off: %+v", as)
	}
}

func TestNewRunnerNeedsPolicyAndWorld(t *testing.T) {
	if _, err := NewRunner(RunnerConfig{World: &world{}}); !errors.Is(err, ErrBadRunner) {
		t.Fatalf("no policy: %v", err)
	}
}

// TestRunnerSettledOnTheSet: the peers count as settled only when the set is the one of the
// tick before, whatever its order; a peer replaced by another (the same count) is a change.
func TestRunnerSettledOnTheSet(t *testing.T) {
	r, err := NewRunner(RunnerConfig{Policy: func() Policy { return Policy{} }, World: &world{}})
	if err != nil {
		t.Fatal(err)
	}
	peers := func(bs ...byte) []Peer {
		var ps []Peer
		for _, b := range bs {
			ps = append(ps, Peer{Address: addr(b)})
		}
		return ps
	}
	steps := []struct {
		peers []Peer
		want  bool
	}{
		{nil, true}, // no peers, as before the first tick
		{peers(1, 2, 3), false},
		{peers(3, 1, 2), true},
		{peers(1, 2, 4), false},
		{peers(1, 2, 4), true},
		{peers(1, 2), false},
		{peers(1, 2, 2, 4), false},
		{peers(1, 2, 2, 4), true},
		{peers(1, 2, 4), false},
	}
	for i, st := range steps {
		if got := r.settled(st.peers); got != st.want {
			t.Fatalf("step %d: settled %v, want %v", i, got, st.want)
		}
	}
}
