package path

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
)

const (
	// DefaultRelayers is the number of relayers Select uses when asked for 0.
	DefaultRelayers = 2
	// MinRelayers is the fewest relayers a path may have.
	MinRelayers = 2
	// MaxRelayers is the most relayers a path may have (a packet has at most 4 hops).
	MaxRelayers = 3

	// MinQuality is the lowest heartbeat quality of a node Select uses as a relayer. A peer that
	// was never pinged has quality 0.5; three failed pings in a row take it below MinQuality.
	MinQuality = 0.2

	// maxExpansions bounds the search on large graphs: the number of candidate hops examined
	// before Select gives up on one search.
	maxExpansions = 20_000
)

// Node is a node of the channel graph.
type Node struct {
	// Address is the node's chain address.
	Address common.Address
	// Peer is the node's libp2p PeerId.
	Peer peer.ID
	// Quality is the node's heartbeat quality in [0, 1] (internal/p2p); higher is better.
	Quality float64
	// Relayed reports that a circuit relay carries the traffic to the node: this node reaches it
	// only over a relay, or it announced only relay addresses (a node behind a NAT that others
	// reach directly only where a hole punch worked). As a relayer it weighs RelayedWeight of its
	// weight: every byte over it costs a third node, so paths avoid it while others fit.
	Relayed bool
}

// RelayedWeight is the factor a relayer's weight takes when Node.Relayed (docs/NAT.md).
const RelayedWeight = 0.1

// Edge is a payment channel from Source to Destination.
type Edge struct {
	Source, Destination common.Address
	// Balance is the channel's balance in the token's smallest unit.
	Balance uint256.Int
	// Open reports whether tickets may be issued on the channel (the contract's Open status).
	// Closed and pending-to-close channels carry no packets.
	Open bool
}

// Graph is a snapshot of the channel graph: the known nodes and the channels between them.
// Edges whose ends are not in Nodes are ignored. It is read, never modified, by Select.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

type hop struct {
	to      int // index into Graph.Nodes
	balance *uint256.Int
	weight  float64
}

type index struct {
	g      *Graph
	byAddr map[common.Address]int
	out    [][]hop
	open   map[[2]int]bool // open channel between two nodes, any balance
}

func newIndex(g *Graph) *index {
	ix := &index{g: g, byAddr: make(map[common.Address]int, len(g.Nodes)), out: make([][]hop, len(g.Nodes)),
		open: make(map[[2]int]bool)}
	for i, n := range g.Nodes {
		ix.byAddr[n.Address] = i
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		s, ok1 := ix.byAddr[e.Source]
		d, ok2 := ix.byAddr[e.Destination]
		if !ok1 || !ok2 || s == d || !e.Open {
			continue
		}
		ix.open[[2]int{s, d}] = true
		ix.out[s] = append(ix.out[s], hop{to: d, balance: &e.Balance, weight: weightOf(&e.Balance)})
	}
	return ix
}

// weightOf is a channel's weight in the random choice of the next hop: its balance.
func weightOf(balance *uint256.Int) float64 { return max(balance.Float64(), 1) }

// Select picks a path from self to recipient over relayers relayers (0 means DefaultRelayers)
// and returns its nodes: the relayers in order, then the recipient. Every consecutive pair needs
// an open channel whose balance covers the ticket it carries: self's channel to the first relayer
// price × relayers, the next one price × (relayers−1), and so on; the last relayer's channel to
// the recipient carries a ticket worth 0 but must be open. Relayers are distinct, never self or
// the recipient, and have a Quality of at least MinQuality. Among valid paths the choice is random
// (from r), each hop weighted by its channel's balance times the next node's quality (times
// RelayedWeight for a node a relay carries the traffic to), so paths vary between calls.
//
// Errors: ErrBadRelayers, ErrUnknownNode, ErrNotEnoughBalance when paths exist over open
// channels but none is funded enough, ErrNoPath when there is none at all.
func Select(r *rand.Rand, g *Graph, self, recipient common.Address, relayers int, price uint256.Int) ([]Node, error) {
	return SelectPadded(r, g, self, recipient, relayers, price, 0)
}

// SelectPadded is Select for tickets that carry pad × price on top of their price (the sender's
// padding, docs/PROTOCOL.md §4.5, which reaches the recipient): self's channel to the first
// relayer must cover price × (relayers + pad), the next one price × (relayers − 1 + pad), and so
// on, and the last relayer's channel to the recipient price × pad. A sender that draws its
// padding per message asks for its largest value, so that whichever it draws, no channel on the
// path is short, and the path does not depend on the draw.
func SelectPadded(r *rand.Rand, g *Graph, self, recipient common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	if self == recipient {
		return nil, ErrUnknownNode
	}
	return selectPath(r, g, self, recipient, relayers, price, pad)
}

// SelectLoop picks a path from self back to self over relayers relayers, for loop cover
// traffic: Select with self as the recipient (the last relayer needs an open channel to self).
// The returned nodes end with self.
func SelectLoop(r *rand.Rand, g *Graph, self common.Address, relayers int, price uint256.Int) ([]Node, error) {
	return SelectLoopPadded(r, g, self, relayers, price, 0)
}

// SelectLoopPadded is SelectLoop for padded tickets, as SelectPadded.
func SelectLoopPadded(r *rand.Rand, g *Graph, self common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	return selectPath(r, g, self, self, relayers, price, pad)
}

// Index is a Graph prepared for many selections: its nodes by address and each node's open
// channels. Building it is linear in the graph, so a sender that picks a path per message builds
// one per change of the graph (NewIndex) instead of one per message, and updates the channels
// whose balances move with every ticket (its own) with SetBalance. An Index is not safe for
// concurrent use.
type Index struct{ ix *index }

// NewIndex prepares g for selections. The Index keeps g: the caller must not change it afterwards
// but through SetBalance.
func NewIndex(g *Graph) *Index { return &Index{newIndex(g)} }

// SetBalance sets the balance of the open channel from src to dst, as if the graph had been built
// with it, and reports whether there is such a channel.
func (x *Index) SetBalance(src, dst common.Address, balance uint256.Int) bool {
	s, ok1 := x.ix.byAddr[src]
	d, ok2 := x.ix.byAddr[dst]
	if !ok1 || !ok2 {
		return false
	}
	for i := range x.ix.out[s] {
		if h := &x.ix.out[s][i]; h.to == d {
			*h.balance = balance
			h.weight = weightOf(&balance)
			return true
		}
	}
	return false
}

// SelectPadded is the package's SelectPadded over the prepared graph.
func (x *Index) SelectPadded(r *rand.Rand, self, recipient common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	if self == recipient {
		return nil, ErrUnknownNode
	}
	return x.ix.selectPath(r, self, recipient, relayers, price, pad)
}

// SelectLoopPadded is the package's SelectLoopPadded over the prepared graph.
func (x *Index) SelectLoopPadded(r *rand.Rand, self common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	return x.ix.selectPath(r, self, self, relayers, price, pad)
}

// Layers restricts a path to a layered topology (issue 30, docs/NETWORK.md "The layered
// topology"): it crosses Count relayers, the position-th of them (0 is the first) one for which
// Allowed(position, address) holds, a relayer of layer position. The last relayer needs a channel
// to the recipient only when the ticket it issues is worth more than 0 (a padding above 0): the
// recipients of a layered network are every node, and the last layer keeps no channel to them.
type Layers struct {
	// Count is the number of layers, the path's relayers: MinRelayers to MaxRelayers.
	Count int
	// Allowed reports whether addr relays in layer position. Nil allows every relayer (only the
	// count and the last hop's rule apply). It is called during the search, under no lock of
	// this package's: it must be safe to call from the selecting goroutine.
	Allowed func(position int, addr common.Address) bool
}

// SelectLayered is SelectPadded over the layers l: l.Count relayers, each allowed at its
// position, and no channel needed from the last relayer to the recipient when pad is 0. The
// weights, the random choice and the errors are SelectPadded's.
func SelectLayered(r *rand.Rand, g *Graph, self, recipient common.Address, l Layers, price uint256.Int, pad int) ([]Node, error) {
	if self == recipient {
		return nil, ErrUnknownNode
	}
	return newIndex(g).selectLayered(r, self, recipient, &l, price, pad)
}

// SelectLoopLayered is SelectLayered from self back to self (a relayer's or a sender's loop
// cover through the layers).
func SelectLoopLayered(r *rand.Rand, g *Graph, self common.Address, l Layers, price uint256.Int, pad int) ([]Node, error) {
	return newIndex(g).selectLayered(r, self, self, &l, price, pad)
}

// SelectLayered is the package's SelectLayered over the prepared graph.
func (x *Index) SelectLayered(r *rand.Rand, self, recipient common.Address, l Layers, price uint256.Int, pad int) ([]Node, error) {
	if self == recipient {
		return nil, ErrUnknownNode
	}
	return x.ix.selectLayered(r, self, recipient, &l, price, pad)
}

// SelectLoopLayered is the package's SelectLoopLayered over the prepared graph.
func (x *Index) SelectLoopLayered(r *rand.Rand, self common.Address, l Layers, price uint256.Int, pad int) ([]Node, error) {
	return x.ix.selectLayered(r, self, self, &l, price, pad)
}

func (ix *index) selectLayered(r *rand.Rand, self, recipient common.Address, l *Layers, price uint256.Int, pad int) ([]Node, error) {
	if l.Count == 0 {
		return nil, fmt.Errorf("0 layers: %w", ErrBadRelayers)
	}
	return ix.selectIn(r, self, recipient, l.Count, price, pad, l)
}

func selectPath(r *rand.Rand, g *Graph, self, recipient common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	return newIndex(g).selectPath(r, self, recipient, relayers, price, pad)
}

func (ix *index) selectPath(r *rand.Rand, self, recipient common.Address, relayers int, price uint256.Int, pad int) ([]Node, error) {
	return ix.selectIn(r, self, recipient, relayers, price, pad, nil)
}

// selectIn selects a path of relayers relayers, within layers when they are not nil.
func (ix *index) selectIn(r *rand.Rand, self, recipient common.Address, relayers int, price uint256.Int, pad int, layers *Layers) ([]Node, error) {
	if relayers == 0 {
		relayers = DefaultRelayers
	}
	if relayers < MinRelayers || relayers > MaxRelayers {
		return nil, fmt.Errorf("%d relayers: %w", relayers, ErrBadRelayers)
	}
	if pad < 0 {
		return nil, fmt.Errorf("padding %d: %w", pad, ErrBadPadding)
	}
	s, ok1 := ix.byAddr[self]
	d, ok2 := ix.byAddr[recipient]
	if !ok1 || !ok2 {
		return nil, ErrUnknownNode
	}
	if p := ix.search(r, s, d, relayers, pad, &price, true, layers); p != nil {
		return p, nil
	}
	if p := ix.search(r, s, d, relayers, pad, &price, false, layers); p != nil {
		return nil, fmt.Errorf("%d relayers: %w", relayers, ErrNotEnoughBalance)
	}
	return nil, fmt.Errorf("%d relayers: %w", relayers, ErrNoPath)
}

// search runs a depth-first search with backtracking, trying each node's candidates in a
// weighted random order. With funded false it ignores balances (only to tell ErrNoPath from
// ErrNotEnoughBalance). With layers the k-th relayer must be allowed at position k, and the last
// relayer needs no channel to the recipient when its ticket is worth 0.
func (ix *index) search(r *rand.Rand, self, recipient, relayers, pad int, price *uint256.Int, funded bool, layers *Layers) []Node {
	var allowed func(int, common.Address) bool
	if layers != nil {
		allowed = layers.Allowed
	}
	used := make([]bool, len(ix.g.Nodes))
	used[self], used[recipient] = true, true
	route := make([]int, 0, relayers)
	budget := maxExpansions

	type cand struct {
		to  int
		key float64
	}
	var dfs func(cur int) bool
	dfs = func(cur int) bool {
		k := len(route)
		var need uint256.Int
		need.Mul(price, uint256.NewInt(uint64(relayers-k+pad)))
		if k == relayers {
			if layers != nil && need.IsZero() {
				return true // a ticket worth 0: no channel needed into the recipient
			}
			if !funded || need.IsZero() {
				return ix.open[[2]int{cur, recipient}]
			}
			for _, h := range ix.out[cur] {
				if h.to == recipient {
					return !h.balance.Lt(&need)
				}
			}
			return false
		}
		var cands []cand
		for _, h := range ix.out[cur] {
			n := &ix.g.Nodes[h.to]
			if used[h.to] || n.Quality < MinQuality || (funded && h.balance.Lt(&need)) {
				continue
			}
			if allowed != nil && !allowed(k, n.Address) {
				continue
			}
			// Efraimidis–Spirakis weighted sampling without replacement: sort by u^(1/w),
			// i.e. by log(u)/w, descending.
			w := h.weight * max(n.Quality, 1e-9)
			if n.Relayed {
				w *= RelayedWeight
			}
			u := r.Float64()
			for u == 0 {
				u = r.Float64()
			}
			cands = append(cands, cand{h.to, math.Log(u) / w})
		}
		slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(b.key, a.key) })
		for _, c := range cands {
			if budget--; budget < 0 {
				return false
			}
			used[c.to] = true
			route = append(route, c.to)
			if dfs(c.to) {
				return true
			}
			route = route[:len(route)-1]
			used[c.to] = false
		}
		return false
	}
	if !dfs(self) {
		return nil
	}
	out := make([]Node, 0, relayers+1)
	for _, i := range route {
		out = append(out, ix.g.Nodes[i])
	}
	return append(out, ix.g.Nodes[recipient])
}
