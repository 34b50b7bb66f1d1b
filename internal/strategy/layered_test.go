package strategy

import (
	"log/slog"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// addrs returns addr(from) … addr(to).
func addrs(from, to byte) []common.Address {
	var out []common.Address
	for b := from; b <= to; b++ {
		out = append(out, addr(b))
	}
	return out
}

func TestLayerPeers(t *testing.T) {
	layers := [][]common.Address{addrs(1, 3), addrs(4, 6), addrs(7, 9)}
	for _, tc := range []struct {
		name    string
		self    common.Address
		peers   []common.Address
		relayer bool
	}{
		{"outside: the first layer", addr(50), addrs(1, 3), false},
		{"first layer: the others of it, then the second", addr(2), append([]common.Address{addr(1), addr(3)}, addrs(4, 6)...), true},
		{"middle layer: the first and the last", addr(5), append(addrs(1, 3), addrs(7, 9)...), true},
		{"last layer: the first only", addr(9), addrs(1, 3), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := LayerPeers(layers, tc.self)
			if !slices.Equal(l.Peers, tc.peers) || l.Relayer != tc.relayer {
				t.Fatalf("got %v relayer %v, want %v relayer %v", l.Peers, l.Relayer, tc.peers, tc.relayer)
			}
		})
	}
	if l := LayerPeers(nil, addr(1)); l.Peers != nil || l.Relayer {
		t.Fatalf("no layers: %+v", l)
	}
	// LayerPeers must not write into the layers it was given.
	if !slices.Equal(layers[0], addrs(1, 3)) {
		t.Fatalf("layer 0 changed: %v", layers[0])
	}
}

// everyone is peers 1 … 20, all reachable.
func everyone() []Peer {
	var out []Peer
	for _, a := range addrs(1, 20) {
		out = append(out, Peer{Address: a, Quality: 1})
	}
	return out
}

// TestDecideLayered: a node opens channels only to its layers' peers, a relayer to all of them
// in one tick, beyond MaxChannels; channels to peers outside are closed, unless kept for a grace.
func TestDecideLayered(t *testing.T) {
	p := Policy{Strategy: Promiscuous, MaxChannels: 2, MaxOpensPerTick: 1, ChannelFunding: tok(10), TopUp: true}
	r := rand.New(rand.NewPCG(1, 2))
	opened := func(as []Action) []common.Address {
		var out []common.Address
		for _, a := range as {
			if a.Kind == Open {
				out = append(out, a.Peer)
			}
		}
		slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
		return out
	}

	// Outside the layers: the policy's numbers, among the first layer only.
	outside := &Layered{Peers: addrs(1, 4)}
	for range 20 {
		as := Decide(p, State{Balance: tok(1000), Peers: everyone(), Layers: outside}, r)
		if got := opened(as); len(got) != 1 || got[0].Cmp(addr(4)) > 0 {
			t.Fatalf("outside: opened %v, want one of the first layer's", got)
		}
	}
	// A relayer: every peer at once, twice MaxChannels.
	relayer := &Layered{Peers: addrs(1, 4), Relayer: true}
	if got := opened(Decide(p, State{Balance: tok(1000), Peers: everyone(), Layers: relayer}, r)); !slices.Equal(got, addrs(1, 4)) {
		t.Fatalf("relayer: opened %v, want 1 … 4", got)
	}
	// A relayer whose balance pays for two opens two.
	if got := opened(Decide(p, State{Balance: tok(25), Peers: everyone(), Layers: relayer}, r)); len(got) != 2 {
		t.Fatalf("relayer with 25 tokens: opened %v, want two", got)
	}
	// A new epoch: peers 1, 2 stay, 10 and 11 come, 3 is kept for a grace, 4 and 5 (a channel
	// of free routes) left. The channels to 4 and 5 are closed, none is topped up though low, and
	// the new peers get channels.
	low := tok(1)
	st := State{Balance: tok(1000), Peers: everyone(), Open: []Channel{
		{Peer: addr(1), Balance: tok(10)}, {Peer: addr(2), Balance: tok(10)}, {Peer: addr(3), Balance: low},
		{Peer: addr(4), Balance: low}, {Peer: addr(5), Balance: tok(10)}},
		Layers: &Layered{Peers: []common.Address{addr(1), addr(2), addr(10), addr(11)}, Relayer: true, Keep: []common.Address{addr(3)}}}
	as := Decide(p, st, r)
	var closed, topped []common.Address
	for _, a := range as {
		switch a.Kind {
		case Close:
			closed = append(closed, a.Peer)
			if a.Reason != "left the layers" {
				t.Errorf("close of %s: reason %q", a.Peer.Hex(), a.Reason)
			}
		case TopUp:
			topped = append(topped, a.Peer)
		}
	}
	if !slices.Equal(closed, []common.Address{addr(4), addr(5)}) || len(topped) != 0 {
		t.Fatalf("closed %v, topped up %v; want 4 and 5 closed, nothing topped up", closed, topped)
	}
	if got := opened(as); !slices.Equal(got, []common.Address{addr(10), addr(11)}) {
		t.Fatalf("opened %v, want 10 and 11", got)
	}
	// Without Layers the same state is free routes: nothing closed, 3 and 4 topped up.
	st.Layers = nil
	if as := Decide(p, st, r); count(as, Close) != 0 || count(as, TopUp) != 2 {
		t.Fatalf("free routes: %+v", as)
	}
	// Before the layers are drawn (Pending) it opens and closes nothing, and tops up.
	st.Layers = &Layered{Pending: true}
	if as := Decide(p, st, r); count(as, Open) != 0 || count(as, Close) != 0 || count(as, TopUp) != 2 {
		t.Fatalf("pending: %+v", as)
	}
	// Under Passive a node outside the layers opens and closes nothing.
	passive := p
	passive.Strategy = Passive
	st.Layers = &Layered{Peers: []common.Address{addr(1), addr(2), addr(10), addr(11)}}
	for _, a := range Decide(passive, st, r) {
		if a.Kind != TopUp {
			t.Fatalf("passive outside the layers acted: %+v", a)
		}
	}
	// A passive relayer opens its layer channels (its duty) and closes nothing, not even the
	// channels to peers that left the layers or whose closure period is over.
	st.Layers = &Layered{Peers: []common.Address{addr(1), addr(2), addr(10), addr(11)}, Relayer: true}
	st.Finalizable = []common.Address{addr(6)}
	as = Decide(passive, st, r)
	if got := opened(as); !slices.Equal(got, []common.Address{addr(10), addr(11)}) || count(as, Close) != 0 {
		t.Fatalf("passive relayer: opened %v, %d closes; want 10 and 11, none", got, count(as, Close))
	}
}

// TestRunnerPassiveRelayer: under the passive policy the runner opens a relayer's layer channels
// at its ticks (once the peers are settled), never at the top-up ticks in between, and nothing for
// a node outside the layers.
func TestRunnerPassiveRelayer(t *testing.T) {
	w := &world{balance: tok(1000), open: map[common.Address]*big.Int{}, peers: everyone()}
	layers := &Layered{Peers: addrs(1, 3)}
	r, err := NewRunner(RunnerConfig{Policy: func() Policy {
		return Policy{Strategy: Passive, ChannelFunding: tok(10), TopUp: true}
	}, World: w, Layers: func() *Layered { return layers }, Rand: rand.New(rand.NewPCG(1, 2)), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.Tick(t.Context())
	r.Tick(t.Context())
	if len(w.open) != 0 {
		t.Fatalf("outside the layers a passive node opened %v", keys(w.open))
	}
	layers = &Layered{Peers: addrs(1, 3), Relayer: true}
	r.TopUpTick(t.Context())
	r.TopUpTick(t.Context())
	if len(w.open) != 0 {
		t.Fatalf("a top-up tick opened %v", keys(w.open))
	}
	r.Tick(t.Context())
	if got := keys(w.open); !slices.Equal(got, addrs(1, 3)) {
		t.Fatalf("a passive relayer's tick opened %v, want 1 … 3", got)
	}
}

// TestRunnerLayers: the runner reads the layers at every tick; at an epoch change it closes the
// channels to the peers that left and opens the new ones.
func TestRunnerLayers(t *testing.T) {
	w := &world{balance: tok(1000), open: map[common.Address]*big.Int{}, peers: everyone()}
	layers := &Layered{Peers: addrs(1, 3), Relayer: true}
	r, err := NewRunner(RunnerConfig{Policy: func() Policy {
		return Policy{Strategy: Promiscuous, MaxChannels: 1, ChannelFunding: tok(10)}
	}, World: w, Layers: func() *Layered { return layers }, Rand: rand.New(rand.NewPCG(1, 2)), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.Tick(t.Context()) // the peers seen once: no opens yet
	r.Tick(t.Context())
	if got := keys(w.open); !slices.Equal(got, addrs(1, 3)) {
		t.Fatalf("open to %v, want 1 … 3", got)
	}
	layers = &Layered{Peers: addrs(3, 5), Relayer: true} // the next epoch
	r.Tick(t.Context())
	if got := keys(w.open); !slices.Equal(got, addrs(3, 5)) {
		t.Fatalf("after the epoch change open to %v, want 3 … 5", got)
	}
}

func keys(m map[common.Address]*big.Int) []common.Address {
	var out []common.Address
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
	return out
}
