package path

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
)

var price = *uint256.NewInt(10)

func addr(name string) common.Address { return common.BytesToAddress([]byte(name)) }

// graph builds a graph from nodes (all quality 1 unless listed in quality) and edges
// "src>dst" with balances.
func graph(nodes []string, quality map[string]float64, edges map[string]uint64, closed ...string) *Graph {
	g := &Graph{}
	for _, n := range nodes {
		q, ok := quality[n]
		if !ok {
			q = 1
		}
		g.Nodes = append(g.Nodes, Node{Address: addr(n), Peer: peer.ID("peer-" + n), Quality: q})
	}
	for k, b := range edges {
		var src, dst string
		for i := range k {
			if k[i] == '>' {
				src, dst = k[:i], k[i+1:]
			}
		}
		open := true
		for _, c := range closed {
			if c == k {
				open = false
			}
		}
		g.Edges = append(g.Edges, Edge{Source: addr(src), Destination: addr(dst), Balance: *uint256.NewInt(b), Open: open})
	}
	return g
}

func names(p []Node) []string {
	var out []string
	for _, n := range p {
		out = append(out, string(n.Peer[len("peer-"):]))
	}
	return out
}

func TestSelect(t *testing.T) {
	nodes := []string{"me", "r1", "r2", "r3", "dst"}
	full := map[string]uint64{"me>r1": 20, "r1>r2": 10, "r2>dst": 0}
	tests := []struct {
		name       string
		nodes      []string
		quality    map[string]float64
		edges      map[string]uint64
		closed     []string
		relayers   int // 0: 2, unless useDefault
		useDefault bool
		want       []string // nil: expect err
		err        error
	}{
		{name: "exact balances", edges: full, want: []string{"r1", "r2", "dst"}},
		{name: "default relayers is 2", edges: full, useDefault: true, want: []string{"r1", "r2", "dst"}},
		{name: "three relayers", edges: map[string]uint64{"me>r1": 30, "r1>r2": 20, "r2>r3": 10, "r3>dst": 5},
			relayers: 3, want: []string{"r1", "r2", "r3", "dst"}},
		{name: "first channel underfunded", edges: map[string]uint64{"me>r1": 19, "r1>r2": 10, "r2>dst": 0},
			err: ErrNotEnoughBalance},
		{name: "middle channel depleted", edges: map[string]uint64{"me>r1": 20, "r1>r2": 0, "r2>dst": 0},
			err: ErrNotEnoughBalance},
		{name: "last channel closed", edges: full, closed: []string{"r2>dst"}, err: ErrNoPath},
		{name: "middle channel closed", edges: full, closed: []string{"r1>r2"}, err: ErrNoPath},
		{name: "last channel missing", edges: map[string]uint64{"me>r1": 20, "r1>r2": 10}, err: ErrNoPath},
		{name: "channel the wrong way", edges: map[string]uint64{"me>r1": 20, "r2>r1": 10, "r2>dst": 0}, err: ErrNoPath},
		{name: "recipient is no relayer", edges: map[string]uint64{"me>dst": 20, "dst>r2": 10, "r2>dst": 0, "me>r1": 20, "r1>dst": 10},
			err: ErrNoPath},
		{name: "self is no relayer", edges: map[string]uint64{"me>r1": 20, "r1>me": 10, "me>dst": 5}, err: ErrNoPath},
		{name: "no repeated relayer", edges: map[string]uint64{"me>r1": 30, "r1>r2": 20, "r2>r1": 10, "r1>dst": 0},
			relayers: 3, err: ErrNoPath},
		{name: "low quality relayer skipped", edges: full, quality: map[string]float64{"r2": 0.1}, err: ErrNoPath},
		{name: "detour around a depleted channel",
			edges: map[string]uint64{"me>r1": 20, "r1>r2": 0, "r1>r3": 10, "r3>dst": 0, "r2>dst": 0},
			want:  []string{"r1", "r3", "dst"}},
		{name: "detour around a bad quality peer",
			edges:   map[string]uint64{"me>r1": 20, "r1>r2": 10, "r1>r3": 10, "r3>dst": 0, "r2>dst": 0},
			quality: map[string]float64{"r2": 0.05}, want: []string{"r1", "r3", "dst"}},
		{name: "too few relayers", edges: full, relayers: 1, err: ErrBadRelayers},
		{name: "too many relayers", edges: full, relayers: 4, err: ErrBadRelayers},
		{name: "unknown recipient", nodes: []string{"me", "r1", "r2"}, edges: full, err: ErrUnknownNode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.nodes
			if ns == nil {
				ns = nodes
			}
			relayers := tc.relayers
			if relayers == 0 && !tc.useDefault {
				relayers = 2
			}
			g := graph(ns, tc.quality, tc.edges, tc.closed...)
			r := rand.New(rand.NewPCG(1, 2))
			for range 20 { // the outcome must not depend on the draw
				got, err := Select(r, g, addr("me"), addr("dst"), relayers, price)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("err = %v, want %v (path %v)", err, tc.err, names(got))
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if gotN := names(got); len(gotN) != len(tc.want) || func() bool {
					for i := range gotN {
						if gotN[i] != tc.want[i] {
							return true
						}
					}
					return false
				}() {
					t.Fatalf("path %v, want %v", gotN, tc.want)
				}
			}
		})
	}
}

// TestSelectVaries checks on a well-connected graph that paths are valid and vary, and that a
// much better funded channel is chosen more often.
func TestSelectVaries(t *testing.T) {
	nodes := []string{"me", "a", "b", "c", "d", "dst"}
	edges := map[string]uint64{}
	for _, x := range []string{"a", "b", "c", "d"} {
		edges["me>"+x] = 100
		edges[x+">dst"] = 0
		for _, y := range []string{"a", "b", "c", "d"} {
			if x != y {
				edges[x+">"+y] = 100
			}
		}
	}
	edges["me>a"] = 10_000 // a is 100× better funded as first hop
	g := graph(nodes, nil, edges)
	r := rand.New(rand.NewPCG(7, 7))
	seen := map[string]int{}
	first := map[string]int{}
	const rounds = 2000
	for range rounds {
		p, err := Select(r, g, addr("me"), addr("dst"), 2, price)
		if err != nil {
			t.Fatal(err)
		}
		n := names(p)
		if len(n) != 3 || n[2] != "dst" || n[0] == n[1] {
			t.Fatalf("invalid path %v", n)
		}
		seen[n[0]+","+n[1]]++
		first[n[0]]++
	}
	if len(seen) < 8 {
		t.Fatalf("only %d distinct paths in %d draws: %v", len(seen), rounds, seen)
	}
	if first["a"] < rounds/2 {
		t.Fatalf("best funded first hop chosen %d/%d times", first["a"], rounds)
	}
	if first["b"] == 0 {
		t.Fatalf("other first hops never chosen: %v", first)
	}
}

// TestSelectLoop: a loop goes from self over distinct relayers back to self, needs the last
// relayer's channel to self, never uses self as a relayer; Select still refuses self as the
// recipient.
func TestSelectLoop(t *testing.T) {
	nodes := []string{"me", "r1", "r2", "r3"}
	r := rand.New(rand.NewPCG(3, 4))
	g := graph(nodes, nil, map[string]uint64{"me>r1": 20, "r1>r2": 10, "r2>me": 0})
	for range 20 {
		got, err := SelectLoop(r, g, addr("me"), 2, price)
		if err != nil {
			t.Fatal(err)
		}
		if n := names(got); len(n) != 3 || n[0] != "r1" || n[1] != "r2" || n[2] != "me" {
			t.Fatalf("loop %v, want r1 r2 me", n)
		}
	}
	if _, err := SelectLoop(r, graph(nodes, nil, map[string]uint64{"me>r1": 20, "r1>r2": 10}), addr("me"), 2, price); !errors.Is(err, ErrNoPath) {
		t.Fatalf("loop without a channel back to self: %v, want ErrNoPath", err)
	}
	if _, err := SelectLoop(r, graph(nodes, nil, map[string]uint64{"me>r1": 20, "r1>me": 10}), addr("me"), 2, price); !errors.Is(err, ErrNoPath) {
		t.Fatalf("loop over one relayer: %v, want ErrNoPath", err)
	}
	if _, err := SelectLoop(r, graph(nodes, nil, nil), addr("nobody"), 2, price); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("loop of a node not in the graph: %v", err)
	}
	if _, err := Select(r, g, addr("me"), addr("me"), 2, price); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("Select to self: %v, want ErrUnknownNode", err)
	}
}

// TestSelectPadded: with padding every channel must cover pad × price more, the last one
// (to the recipient) pad × price, so that any padding up to pad fits the path.
func TestSelectPadded(t *testing.T) {
	nodes := []string{"me", "r1", "r2", "r3", "dst"}
	const pad = 3 // price 10: me>r1 needs 50, r1>r2 40, r2>dst 30
	tests := []struct {
		name  string
		edges map[string]uint64
		want  []string
		err   error
	}{
		{name: "exact balances", edges: map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>dst": 30}, want: []string{"r1", "r2", "dst"}},
		{name: "first channel short", edges: map[string]uint64{"me>r1": 49, "r1>r2": 40, "r2>dst": 30}, err: ErrNotEnoughBalance},
		{name: "middle channel short", edges: map[string]uint64{"me>r1": 50, "r1>r2": 39, "r2>dst": 30}, err: ErrNotEnoughBalance},
		{name: "channel to the recipient short", edges: map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>dst": 29}, err: ErrNotEnoughBalance},
		{name: "detour around a channel to the recipient that cannot carry the padding",
			edges: map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>dst": 0, "r1>r3": 40, "r3>dst": 30}, want: []string{"r1", "r3", "dst"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph(nodes, nil, tc.edges)
			r := rand.New(rand.NewPCG(5, 6))
			for range 20 {
				got, err := SelectPadded(r, g, addr("me"), addr("dst"), 2, price, pad)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("err = %v, want %v (path %v)", err, tc.err, names(got))
					}
					continue
				}
				if n := names(got); err != nil || len(n) != len(tc.want) || n[0] != tc.want[0] || n[1] != tc.want[1] {
					t.Fatalf("path %v (%v), want %v", n, err, tc.want)
				}
			}
			// Unpadded, every one of these graphs has a path.
			if _, err := Select(r, g, addr("me"), addr("dst"), 2, price); err != nil {
				t.Fatalf("unpadded: %v", err)
			}
		})
	}
	g := graph(nodes, nil, map[string]uint64{"me>r1": 50, "r1>r2": 40, "r2>me": 29})
	if _, err := SelectLoopPadded(rand.New(rand.NewPCG(1, 1)), g, addr("me"), 2, price, pad); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("loop whose last channel cannot carry the padding: %v, want ErrNotEnoughBalance", err)
	}
	if _, err := SelectPadded(rand.New(rand.NewPCG(1, 1)), g, addr("me"), addr("dst"), 2, price, -1); !errors.Is(err, ErrBadPadding) {
		t.Fatalf("negative padding: %v, want ErrBadPadding", err)
	}
}

// TestIndex: selections from a prepared Index agree with building the graph for each one, and
// SetBalance changes what the channel can carry and how often it is chosen, as a rebuilt graph
// with that balance would.
func TestIndex(t *testing.T) {
	nodes := []string{"me", "r1", "r2", "r3", "dst"}
	edges := map[string]uint64{"me>r1": 50, "me>r2": 50, "r1>r3": 40, "r2>r3": 40, "r3>dst": 30}
	g := graph(nodes, nil, edges)
	x := NewIndex(g)
	for seed := range uint64(50) {
		a, errA := x.SelectPadded(rand.New(rand.NewPCG(seed, 1)), addr("me"), addr("dst"), 2, price, 3)
		b, errB := SelectPadded(rand.New(rand.NewPCG(seed, 1)), g, addr("me"), addr("dst"), 2, price, 3)
		if errA != nil || errB != nil || names(a)[0] != names(b)[0] {
			t.Fatalf("seed %d: index %v (%v), graph %v (%v)", seed, names(a), errA, names(b), errB)
		}
	}
	// me>r1 drops below what a ticket needs (50 at padding 3): only r2 is left as first relayer.
	if !x.SetBalance(addr("me"), addr("r1"), *uint256.NewInt(49)) {
		t.Fatal("SetBalance(me, r1) found no channel")
	}
	for seed := range uint64(50) {
		p, err := x.SelectPadded(rand.New(rand.NewPCG(seed, 2)), addr("me"), addr("dst"), 2, price, 3)
		if err != nil || names(p)[0] != "r2" {
			t.Fatalf("after SetBalance: %v (%v), want a path through r2", names(p), err)
		}
	}
	x.SetBalance(addr("me"), addr("r2"), *uint256.NewInt(0))
	if _, err := x.SelectPadded(rand.New(rand.NewPCG(1, 1)), addr("me"), addr("dst"), 2, price, 3); !errors.Is(err, ErrNotEnoughBalance) {
		t.Fatalf("both first channels short: %v, want ErrNotEnoughBalance", err)
	}
	// Weights follow the balance: with me>r1 at 1,000 and me>r2 at 50, r1 comes first far more often.
	x.SetBalance(addr("me"), addr("r1"), *uint256.NewInt(1000))
	x.SetBalance(addr("me"), addr("r2"), *uint256.NewInt(50))
	r := rand.New(rand.NewPCG(7, 7))
	viaR1 := 0
	for range 400 {
		p, err := x.SelectPadded(r, addr("me"), addr("dst"), 2, price, 3)
		if err != nil {
			t.Fatal(err)
		}
		if names(p)[0] == "r1" {
			viaR1++
		}
	}
	if viaR1 < 340 { // expected 400 × 1000/1050 ≈ 381
		t.Fatalf("r1 first in %d of 400 selections, want most (weights follow SetBalance)", viaR1)
	}
	if x.SetBalance(addr("r3"), addr("me"), *uint256.NewInt(1)) || x.SetBalance(addr("nobody"), addr("me"), *uint256.NewInt(1)) {
		t.Fatal("SetBalance reported a channel that does not exist")
	}
	if _, err := x.SelectPadded(r, addr("me"), addr("me"), 2, price, 0); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("self as recipient: %v, want ErrUnknownNode", err)
	}
	if _, err := x.SelectLoopPadded(r, addr("me"), 2, price, 0); !errors.Is(err, ErrNoPath) {
		t.Fatalf("loop without a channel back: %v, want ErrNoPath", err)
	}
}

// BenchmarkSelect picks a 2-relayer path in a network of 1,000 nodes with 8 channels each,
// building the index per selection (what Select does) and from a prepared Index (what a sender
// does per message since the graph is cached): the build is linear in the graph.
func BenchmarkSelect(b *testing.B) {
	const nodes, degree = 1000, 8
	r := rand.New(rand.NewPCG(1, 2))
	g := &Graph{}
	for i := range nodes {
		g.Nodes = append(g.Nodes, Node{Address: addr(fmt.Sprint("n", i)), Peer: peer.ID(fmt.Sprint("peer-n", i)), Quality: 1})
	}
	for i := range nodes {
		for range degree {
			j := r.IntN(nodes)
			g.Edges = append(g.Edges, Edge{Source: g.Nodes[i].Address, Destination: g.Nodes[j].Address, Balance: *uint256.NewInt(1000), Open: true})
		}
	}
	self, dst := g.Nodes[0].Address, g.Nodes[nodes-1].Address
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			if _, err := SelectPadded(r, g, self, dst, 2, price, 7); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		x := NewIndex(g)
		for b.Loop() {
			if _, err := x.SelectPadded(r, self, dst, 2, price, 7); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Two layers of 50 (the even nodes of n1 … n100, then the odd ones), every relayer of the first with a
	// channel to every one of the second, as the layered strategy keeps them.
	layerOf := map[common.Address]int{}
	lg := &Graph{Nodes: g.Nodes}
	for i := 1; i <= 100; i++ {
		layerOf[g.Nodes[i].Address] = i % 2 // even: layer 0
		if i%2 == 0 {
			lg.Edges = append(lg.Edges, Edge{Source: self, Destination: g.Nodes[i].Address, Balance: *uint256.NewInt(1000), Open: true})
			for j := 1; j <= 100; j += 2 {
				lg.Edges = append(lg.Edges, Edge{Source: g.Nodes[i].Address, Destination: g.Nodes[j].Address, Balance: *uint256.NewInt(1000), Open: true})
			}
		}
	}
	l := Layers{Count: 2, Allowed: func(position int, a common.Address) bool {
		k, ok := layerOf[a]
		return ok && k == position
	}}
	b.Run("layered", func(b *testing.B) {
		x := NewIndex(lg)
		for b.Loop() {
			if _, err := x.SelectLayered(r, self, dst, l, price, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSelectPrefersDirect: of two equal relayers, the one reached over a relay is picked about
// RelayedWeight as often as the direct one, and still picked when it is the only one.
func TestSelectPrefersDirect(t *testing.T) {
	nodes := []string{"me", "a", "b", "c", "dst"}
	edges := map[string]uint64{"me>a": 100, "me>b": 100, "a>c": 100, "b>c": 100, "c>dst": 0}
	g := graph(nodes, nil, edges)
	for i := range g.Nodes {
		g.Nodes[i].Relayed = g.Nodes[i].Address == addr("b")
	}
	r := rand.New(rand.NewPCG(3, 3))
	first := map[string]int{}
	const rounds = 4000
	for range rounds {
		p, err := Select(r, g, addr("me"), addr("dst"), 2, price)
		if err != nil {
			t.Fatal(err)
		}
		first[names(p)[0]]++
	}
	// Weights 1 and 0.1: b first with probability 1/11 (about 364 of 4,000).
	if first["b"] < 250 || first["b"] > 500 {
		t.Fatalf("relayed relayer first %d of %d times, want about %d", first["b"], rounds, rounds/11)
	}
	delete(edges, "me>a")
	g2 := graph(nodes, nil, edges)
	for i := range g2.Nodes {
		g2.Nodes[i].Relayed = g2.Nodes[i].Address == addr("b")
	}
	if p, err := Select(r, g2, addr("me"), addr("dst"), 2, price); err != nil || names(p)[0] != "b" {
		t.Fatalf("only the relayed relayer fits: %v, %v", names(p), err)
	}
}
