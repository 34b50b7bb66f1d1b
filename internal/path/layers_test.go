package path

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// layersOf is a Layers over named layers (layer k's relayers in layers[k]).
func layersOf(layers ...[]string) Layers {
	in := map[common.Address]int{}
	for k, l := range layers {
		for _, n := range l {
			in[addr(n)] = k
		}
	}
	return Layers{Count: len(layers), Allowed: func(position int, a common.Address) bool {
		k, ok := in[a]
		return ok && k == position
	}}
}

// layeredGraph: me and dst outside the layers; a1, a2 in layer 0, b1, b2 in layer 1, c1, c2
// in layer 2. Every node has a channel to every relayer of the layer after its own (and to layer
// 0), as the layered strategy keeps them, and shortcuts that break the layers: me>b1, me>c1, a1>c1,
// b1>a2, c1>b2, with large balances so that an unconstrained search takes them most often. No
// relayer has a channel to dst.
func layeredGraph() *Graph {
	nodes := []string{"me", "a1", "a2", "b1", "b2", "c1", "c2", "dst"}
	edges := map[string]uint64{
		"me>a1": 100, "me>a2": 100,
		"a1>b1": 100, "a1>b2": 100, "a2>b1": 100, "a2>b2": 100,
		"b1>c1": 100, "b1>c2": 100, "b2>c1": 100, "b2>c2": 100,
		"c1>a1": 100, "c1>a2": 100, "c2>a1": 100, "c2>a2": 100,
		// shortcuts
		"me>b1": 10_000, "me>c1": 10_000, "a1>c1": 10_000, "b1>a2": 10_000, "c1>b2": 10_000,
	}
	return graph(nodes, nil, edges)
}

var threeLayers = layersOf([]string{"a1", "a2"}, []string{"b1", "b2"}, []string{"c1", "c2"})

// TestSelectLayered: every path crosses one relayer of each layer in order, though shortcuts
// with far larger balances exist, and reaches a recipient no relayer has a channel to; the choice
// still varies within each layer.
func TestSelectLayered(t *testing.T) {
	g := layeredGraph()
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for range 300 {
		p, err := SelectLayered(r, g, addr("me"), addr("dst"), threeLayers, price, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := names(p)
		if !inLayers(got) || got[3] != "dst" {
			t.Fatalf("path %v does not cross the layers in order", got)
		}
		for _, n := range got[:3] {
			seen[n] = true
		}
	}
	if len(seen) != 6 {
		t.Errorf("paths used %d of the 6 relayers, want all (the choice varies)", len(seen))
	}
	// Without the layers the same graph has no path to dst (a last relayer needs a channel to
	// it); with channels into dst from every relayer, free routes break the layers most of the
	// time, layered ones never: what the constraint changes.
	if _, err := SelectPadded(r, g, addr("me"), addr("dst"), 3, price, 0); !errors.Is(err, ErrNoPath) {
		t.Fatalf("free route to dst: %v, want ErrNoPath (no channel into dst)", err)
	}
	for _, n := range []string{"a1", "a2", "b1", "b2", "c1", "c2"} {
		g.Edges = append(g.Edges, Edge{Source: addr(n), Destination: addr("dst"), Balance: *uint256.NewInt(100), Open: true})
	}
	broke := 0
	for range 100 {
		p, err := SelectPadded(r, g, addr("me"), addr("dst"), 3, price, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !inLayers(names(p)) {
			broke++
		}
		if p, err = SelectLayered(r, g, addr("me"), addr("dst"), threeLayers, price, 0); err != nil || !inLayers(names(p)) {
			t.Fatalf("layered path %v (%v)", names(p), err)
		}
	}
	if broke < 50 {
		t.Errorf("%d of 100 free routes left the layers, want most (the shortcuts are heavier)", broke)
	}
}

// inLayers reports whether a path of layeredGraph's relayers crosses layers a, b, c in order.
func inLayers(p []string) bool {
	return len(p) == 4 && p[0][0] == 'a' && p[1][0] == 'b' && p[2][0] == 'c'
}

// TestSelectLayeredLastHop: the last relayer needs a channel to the recipient only when its
// ticket is worth more than 0, and then one that covers it.
func TestSelectLayeredLastHop(t *testing.T) {
	l := layersOf([]string{"r1"}, []string{"r2"})
	nodes := []string{"me", "r1", "r2", "dst"}
	tests := []struct {
		name  string
		edges map[string]uint64
		pad   int
		err   error
	}{
		{"no channel, worth 0", map[string]uint64{"me>r1": 20, "r1>r2": 10}, 0, nil},
		{"no channel, padded", map[string]uint64{"me>r1": 50, "r1>r2": 40}, 3, ErrNoPath},
		{"channel covers the padding", map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>dst": 30}, 3, nil},
		{"channel short of the padding", map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>dst": 29}, 3, ErrNotEnoughBalance},
		{"first channel short", map[string]uint64{"me>r1": 19, "r1>r2": 10}, 0, ErrNotEnoughBalance},
		{"layers out of order", map[string]uint64{"me>r2": 20, "r2>r1": 10}, 0, ErrNoPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph(nodes, nil, tc.edges)
			p, err := SelectLayered(rand.New(rand.NewPCG(1, 1)), g, addr("me"), addr("dst"), l, price, tc.pad)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err == nil && !slices.Equal(names(p), []string{"r1", "r2", "dst"}) {
				t.Fatalf("path %v", names(p))
			}
		})
	}
}

// TestSelectLayeredBacktracks: the heavier first-layer relayer has no channel into the second
// layer; every selection backs out of it and goes through the other. Among allowed relayers the
// weights are the balances, as in free routes.
func TestSelectLayeredBacktracks(t *testing.T) {
	l := layersOf([]string{"a1", "a2"}, []string{"b1"})
	g := graph([]string{"me", "a1", "a2", "b1", "dst"}, nil,
		map[string]uint64{"me>a1": 1_000_000, "me>a2": 20, "a2>b1": 10, "a1>dst": 10})
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		p, err := SelectLayered(r, g, addr("me"), addr("dst"), l, price, 0)
		if err != nil || names(p)[0] != "a2" {
			t.Fatalf("%v (%v), want a path through a2", names(p), err)
		}
	}
	g = graph([]string{"me", "a1", "a2", "b1", "dst"}, nil,
		map[string]uint64{"me>a1": 1000, "me>a2": 50, "a1>b1": 10, "a2>b1": 10})
	viaA1 := 0
	for range 400 {
		p, err := SelectLayered(r, g, addr("me"), addr("dst"), l, price, 0)
		if err != nil {
			t.Fatal(err)
		}
		if names(p)[0] == "a1" {
			viaA1++
		}
	}
	if viaA1 < 340 { // expected 400 × 1000/1050 ≈ 381
		t.Fatalf("a1 first in %d of 400, want most (weighted by balance)", viaA1)
	}
}

// TestSelectLayeredIndexAndLoop: an Index selects as the graph does; a loop through the layers
// ends at self without a channel back to it; a layer count out of range is refused.
func TestSelectLayeredIndexAndLoop(t *testing.T) {
	g := layeredGraph()
	x := NewIndex(g)
	for seed := range uint64(30) {
		a, errA := x.SelectLayered(rand.New(rand.NewPCG(seed, 1)), addr("me"), addr("dst"), threeLayers, price, 0)
		b, errB := SelectLayered(rand.New(rand.NewPCG(seed, 1)), g, addr("me"), addr("dst"), threeLayers, price, 0)
		if errA != nil || errB != nil || !slices.Equal(names(a), names(b)) {
			t.Fatalf("seed %d: index %v (%v), graph %v (%v)", seed, names(a), errA, names(b), errB)
		}
	}
	for _, sel := range []func() ([]Node, error){
		func() ([]Node, error) {
			return x.SelectLoopLayered(rand.New(rand.NewPCG(1, 1)), addr("me"), threeLayers, price, 0)
		},
		func() ([]Node, error) {
			return SelectLoopLayered(rand.New(rand.NewPCG(1, 1)), g, addr("me"), threeLayers, price, 0)
		},
	} {
		p, err := sel()
		if err != nil || len(p) != 4 || names(p)[3] != "me" || names(p)[0][0] != 'a' || names(p)[2][0] != 'c' {
			t.Fatalf("loop %v (%v)", names(p), err)
		}
	}
	// c1 is a relayer of the last layer: its own loop needs other relayers in every layer.
	if p, err := x.SelectLoopLayered(rand.New(rand.NewPCG(2, 2)), addr("c1"), threeLayers, price, 0); err != nil || names(p)[2] != "c2" {
		t.Fatalf("c1's loop %v (%v), want one through c2", names(p), err)
	}
	if _, err := x.SelectLayered(rand.New(rand.NewPCG(1, 1)), addr("me"), addr("me"), threeLayers, price, 0); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("self as recipient: %v", err)
	}
	for _, n := range []int{0, 1, 4} {
		l := threeLayers
		l.Count = n
		if _, err := x.SelectLayered(rand.New(rand.NewPCG(1, 1)), addr("me"), addr("dst"), l, price, 0); !errors.Is(err, ErrBadRelayers) {
			t.Errorf("%d layers: %v, want ErrBadRelayers", n, err)
		}
	}
	if !x.SetBalance(addr("me"), addr("a1"), *uint256.NewInt(0)) || !x.SetBalance(addr("me"), addr("a2"), *uint256.NewInt(0)) {
		t.Fatal("SetBalance")
	}
	if _, err := x.SelectLayered(rand.New(rand.NewPCG(1, 1)), addr("me"), addr("dst"), threeLayers, price, 0); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("first layer unfunded: %v, want ErrNotEnoughBalance", err)
	}
}
