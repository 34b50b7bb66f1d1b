package layers

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/topology"
	"github.com/relayd/relayd/internal/wait"
)

func addr(i int) common.Address { return common.Address{18: byte(i >> 8), 19: byte(i)} }

// network is an indexed graph of n announced accounts, account i with an open channel of
// balance i+1 to account i+1 (mod n) and, but for the last, a closed one of 1,000 to account 0.
func network(n int, order []int) *channels.Graph {
	g := channels.NewGraph()
	for _, i := range order {
		g.Announce(channels.Announcement{Account: addr(i), Block: uint64(i + 1)})
	}
	for i := range n {
		g.Apply(channels.Channel{ID: channels.IDOf(addr(i), addr((i+1)%n)), Source: addr(i), Destination: addr((i + 1) % n),
			Balance: big.NewInt(int64(i + 1)), Epoch: 1, Status: channels.Open})
		if i > 0 && (i+1)%n != 0 { // (the last one's open channel goes to 0 already)
			g.Apply(channels.Channel{ID: channels.IDOf(addr(i), addr(0)), Source: addr(i), Destination: addr(0),
				Balance: big.NewInt(1000), Epoch: 1, Status: channels.Closed})
		}
	}
	return g
}

// chain is the indexer's cursor and the blocks' hashes, as a test sets them.
type chain struct {
	next   atomic.Uint64
	mu     sync.Mutex
	asked  []uint64
	failAt uint64
}

func (c *chain) headerHash(_ context.Context, n uint64) (common.Hash, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, n)
	if n == c.failAt {
		return common.Hash{}, errors.New("provider down")
	}
	return common.BigToHash(big.NewInt(int64(n*7 + 1))), nil
}

type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.t.Load()) }
func (c *clock) add(d time.Duration) { c.t.Add(int64(d)) }
func newView(t *testing.T, cfg Config) *View {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCandidates: every announced account, eligible when announced before the epoch's first
// block (or at an unknown block), its stake its open outgoing channels' funds.
func TestCandidates(t *testing.T) {
	g := network(4, []int{3, 1, 0, 2})                  // account i announced in block i+1
	g.Announce(channels.Announcement{Account: addr(9)}) // an index older than the block's field
	cs := Candidates(g.Snapshot(), 3)
	want := []topology.Candidate{
		{ID: ID(addr(0)), Stake: big.NewInt(1), Announced: true},
		{ID: ID(addr(1)), Stake: big.NewInt(2), Announced: true},  // the closed channel back to 0 is no stake
		{ID: ID(addr(2)), Stake: big.NewInt(3), Announced: false}, // announced in the epoch's first block
		{ID: ID(addr(3)), Stake: big.NewInt(4), Announced: false},
		{ID: ID(addr(9)), Stake: big.NewInt(0), Announced: true},
	}
	if !reflect.DeepEqual(cs, want) {
		t.Fatalf("candidates %+v", cs)
	}
	if len(ID(addr(1))) != 20 {
		t.Fatal("an id is the address's 20 bytes")
	}
}

// TestSameLayersOnEveryNode: two nodes that learnt the announcements in other orders draw the
// same layers, those topology.Draw gives for the epoch's seed over the first block's hash.
func TestSameLayersOnEveryNode(t *testing.T) {
	const n = 40
	params := topology.Params{Layers: 3, Width: 4}
	var ch chain
	ch.next.Store(125) // last block read 124: epoch 2 of 50 blocks, first block 100
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	var views []*View
	for k := range 2 {
		if k == 1 {
			slices.Reverse(order)
		}
		g := network(n, order)
		views = append(views, newView(t, Config{Params: params, EpochBlocks: 50, Self: addr(0), Snapshot: g.Snapshot,
			Indexed: ch.next.Load, HeaderHash: ch.headerHash}))
		if err := views[k].Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	a, b := views[0].Topology(), views[1].Topology()
	if a.Epoch() != 2 || !reflect.DeepEqual(a.Layers(), b.Layers()) {
		t.Fatalf("epoch %d; layers %v and %v", a.Epoch(), a.Layers(), b.Layers())
	}
	hash, _ := ch.headerHash(t.Context(), 100)
	want, err := topology.Draw(params, 2, topology.Seed(2, hash[:]), Candidates(network(n, order).Snapshot(), 100))
	if err != nil || !reflect.DeepEqual(a.Layers(), want.Layers()) {
		t.Fatalf("layers %v, want %v (%v)", a.Layers(), want.Layers(), err)
	}
	// A view's first draw reads the epoch's first block, 100, and the previous epoch's, 50 (for
	// the grace after a restart), and no other.
	if !slices.Contains(ch.asked, 100) || slices.ContainsFunc(ch.asked, func(b uint64) bool { return b != 100 && b != 50 }) {
		t.Fatalf("asked for blocks %v, want the epoch's first, 100, and the previous one's, 50", ch.asked)
	}
	// The path constraint is the draw's.
	l, ok := views[0].Path()
	if !ok || l.Count != 3 {
		t.Fatalf("Path: %+v %v", l, ok)
	}
	for i := range n {
		k, in := a.LayerOf(ID(addr(i)))
		for pos := range 3 {
			if l.Allowed(pos, addr(i)) != (in && k == pos) {
				t.Fatalf("Allowed(%d, %d) disagrees with the draw", pos, i)
			}
		}
	}
}

// TestEpochChange: before anything is indexed nothing is drawn (no path; the strategy holds
// its channels); a new epoch is drawn when the indexer reads its first block; the previous
// epoch's peers keep their channels for the grace; a failed hash keeps the old layers.
func TestEpochChange(t *testing.T) {
	const n = 60
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	g := network(n, order)
	var ch chain
	var clk clock
	ch.failAt = 1 << 40
	params := topology.Params{Layers: 2, Width: 5}
	// Self is a relayer of layer 0 in epoch 1: find one.
	hash1, _ := ch.headerHash(t.Context(), 10)
	top1, err := topology.Draw(params, 1, topology.Seed(1, hash1[:]), Candidates(g.Snapshot(), 10))
	if err != nil {
		t.Fatal(err)
	}
	self := common.BytesToAddress([]byte(top1.Layer(0)[0]))
	v := newView(t, Config{Params: params, EpochBlocks: 10, Self: self, Snapshot: g.Snapshot, Indexed: ch.next.Load,
		HeaderHash: ch.headerHash, Grace: time.Minute, Now: clk.now, RelayerCoverRate: 7.5})

	if err := v.Refresh(t.Context()); !errors.Is(err, ErrNotDrawn) {
		t.Fatalf("nothing indexed: %v, want ErrNotDrawn", err)
	}
	if _, ok := v.Path(); ok || v.Topology() != nil || !v.Strategy().Pending || v.Paths() != nil {
		t.Fatal("layers before a draw")
	}
	rate := v.CoverRate(func() float64 { return 1 })
	if r := rate(); r != 1 {
		t.Fatalf("cover rate before a draw %g, want the base 1", r)
	}
	if st, ok := v.Status(); !ok || st != (Status{Layers: 2, Width: 5, EpochBlocks: 10}) {
		t.Fatalf("status before a draw: %+v, %v", st, ok)
	}
	ch.next.Store(11) // block 10 read: epoch 1
	if err := v.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Topology().Layers(), top1.Layers()) {
		t.Fatal("epoch 1 drawn otherwise")
	}
	drawn1 := 0
	for _, l := range top1.Layers() {
		drawn1 += len(l)
	}
	if st, _ := v.Status(); st != (Status{Layers: 2, Width: 5, EpochBlocks: 10, Drawn: true, Epoch: 1, NextEpochBlock: 20, Relayers: drawn1, Layer: 1}) {
		t.Fatalf("status in epoch 1: %+v", st)
	}
	if r := rate(); r != 1+7.5 {
		t.Fatalf("a relayer's cover rate %g, want the base 1 and the relayers' 7.5", r)
	}
	for i := range n { // a node outside the layers sends its base rate only
		if _, in := top1.LayerOf(ID(addr(i))); !in {
			out := newView(t, Config{Params: params, EpochBlocks: 10, Self: addr(i), Snapshot: g.Snapshot, Indexed: ch.next.Load,
				HeaderHash: ch.headerHash, RelayerCoverRate: 7.5})
			if err := out.Refresh(t.Context()); err != nil || out.CoverRate(func() float64 { return 1 })() != 1 {
				t.Fatalf("outside the layers: %v, cover rate %g, want 1", err, out.CoverRate(func() float64 { return 1 })())
			}
			break
		}
	}
	s1 := v.Strategy()
	want := strategy.LayerPeers(addrsOf(top1), self)
	if !s1.Relayer || s1.Pending || !reflect.DeepEqual(s1.Peers, want.Peers) || len(s1.Keep) != 0 {
		t.Fatalf("strategy %+v, want %+v", s1, want)
	}
	ch.next.Store(19) // still epoch 1: no new draw, no hash asked
	asked := len(ch.asked)
	if err := v.Refresh(t.Context()); err != nil || len(ch.asked) != asked {
		t.Fatalf("re-drew within the epoch: %v, asked %v", err, ch.asked)
	}
	ch.failAt = 20
	ch.next.Store(21) // epoch 2, its first block's hash cannot be read
	if err := v.Refresh(t.Context()); err == nil || v.Topology().Epoch() != 1 {
		t.Fatalf("failed hash: %v, epoch %d in force; want an error and epoch 1", err, v.Topology().Epoch())
	}
	ch.failAt = 1 << 40
	if err := v.Refresh(t.Context()); err != nil || v.Topology().Epoch() != 2 {
		t.Fatalf("epoch 2: %v", err)
	}
	s2 := v.Strategy()
	var left []common.Address
	for _, a := range s1.Peers {
		if !slices.Contains(s2.Peers, a) {
			left = append(left, a)
		}
	}
	if len(left) == 0 {
		t.Fatal("no peer left between the epochs: the test proves nothing")
	}
	if !reflect.DeepEqual(s2.Keep, left) {
		t.Fatalf("Keep %v during the grace, want the peers that left %v", s2.Keep, left)
	}
	st2, _ := v.Status()
	if _, in := v.Topology().LayerOf(ID(self)); (in && rate() != 8.5) || (!in && rate() != 1) {
		t.Fatalf("cover rate in epoch 2 %g (relaying: %v)", rate(), in)
	}
	if k, in := v.Topology().LayerOf(ID(self)); !st2.Grace || st2.Epoch != 2 || st2.NextEpochBlock != 30 || (in && st2.Layer != k+1) || (!in && st2.Layer != 0) {
		t.Fatalf("status in epoch 2's grace: %+v", st2)
	}
	// The router's layers: epoch 2's, then during the grace epoch 1's.
	ps := v.Paths()
	if len(ps) != 2 || !allowedAs(ps[0], v.Topology()) || !allowedAs(ps[1], top1) {
		t.Fatalf("%d layers during the grace, want epoch 2's then epoch 1's", len(ps))
	}
	clk.add(time.Minute)
	if st, _ := v.Status(); st.Grace {
		t.Fatal("status: grace after the grace")
	}
	if s := v.Strategy(); len(s.Keep) != 0 {
		t.Fatalf("Keep %v after the grace", s.Keep)
	}
	if ps := v.Paths(); len(ps) != 1 || !allowedAs(ps[0], v.Topology()) {
		t.Fatalf("%d layers after the grace, want epoch 2's", len(ps))
	}
	// A node restarted on its data within the grace draws epoch 1 too: it keeps the peers that
	// left and epoch 1's paths for the rest of the grace, as the node that ran through did.
	restarted := newView(t, Config{Params: params, EpochBlocks: 10, Self: self, Snapshot: g.Snapshot, Indexed: ch.next.Load,
		HeaderHash: ch.headerHash, Grace: time.Minute, Now: clk.now})
	if err := restarted.Refresh(t.Context()); err != nil || restarted.Topology().Epoch() != 2 {
		t.Fatalf("restarted in epoch 2: %v", err)
	}
	if s := restarted.Strategy(); !reflect.DeepEqual(s.Keep, left) {
		t.Fatalf("restarted within the grace: Keep %v, want the peers that left %v", s.Keep, left)
	}
	if ps := restarted.Paths(); len(ps) != 2 || !allowedAs(ps[1], top1) {
		t.Fatalf("restarted within the grace: %d layers, want epoch 2's then epoch 1's", len(ps))
	}
	// Too few candidates for the layers: an error, the layers before stay.
	small := network(1, []int{0})
	v2 := newView(t, Config{Params: params, EpochBlocks: 10, Snapshot: small.Snapshot, Indexed: ch.next.Load, HeaderHash: ch.headerHash})
	if err := v2.Refresh(t.Context()); !errors.Is(err, topology.ErrTooFewCandidates) {
		t.Fatalf("one candidate: %v", err)
	}
}

// allowedAs reports whether l allows at each position exactly top's relayers of that layer,
// among accounts 0 … 99.
func allowedAs(l path.Layers, top *topology.Topology) bool {
	for i := range 100 {
		k, in := top.LayerOf(ID(addr(i)))
		for pos := range l.Count {
			if l.Allowed(pos, addr(i)) != (in && k == pos) {
				return false
			}
		}
	}
	return l.Count == top.Len()
}

func addrsOf(top *topology.Topology) [][]common.Address {
	out := make([][]common.Address, top.Len())
	for k := range top.Len() {
		for _, id := range top.Layer(k) {
			out[k] = append(out[k], common.BytesToAddress([]byte(id)))
		}
	}
	return out
}

// TestRun draws once the indexer reads the epoch's first block, and returns when ctx ends.
func TestRun(t *testing.T) {
	order := []int{0, 1, 2, 3, 4, 5}
	g := network(6, order)
	var ch chain
	ch.failAt = 1 << 40
	v := newView(t, Config{Params: topology.Params{Layers: 2, Width: 3}, EpochBlocks: 5, Snapshot: g.Snapshot,
		Indexed: ch.next.Load, HeaderHash: ch.headerHash, Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- v.Run(ctx) }()
	ch.next.Store(8)
	wait.For(t, func() bool { return v.Topology() != nil }, 5*time.Second, "the first draw")
	ch.next.Store(12)
	wait.For(t, func() bool { return v.Topology().Epoch() == 2 }, 5*time.Second, "epoch 2's draw")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNewChecks(t *testing.T) {
	ok := Config{Params: topology.Params{Layers: 3, Width: 4}, EpochBlocks: 1, Snapshot: channels.NewGraph().Snapshot,
		Indexed: func() uint64 { return 0 }, HeaderHash: (&chain{}).headerHash}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Config){
		"no snapshot": func(c *Config) { c.Snapshot = nil },
		"no epochs":   func(c *Config) { c.EpochBlocks = 0 },
		"one layer":   func(c *Config) { c.Params.Layers = 1 },
		"four layers": func(c *Config) { c.Params.Layers = 4 },
		"no width":    func(c *Config) { c.Params.Width = 0 },
	} {
		c := ok
		change(&c)
		if _, err := New(c); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
}

// TestNilView: a network without a topology has no View; its nil forms keep free routes.
func TestNilView(t *testing.T) {
	var v *View
	if v.ForRouter() != nil || v.ForStrategy() != nil || v.ForRelay() != nil || v.Run(t.Context()) != nil {
		t.Fatal("a nil View is not free routes")
	}
	if _, ok := v.Status(); ok {
		t.Fatal("a nil View has a status")
	}
	if r := v.CoverRate(func() float64 { return 1.5 })(); r != 1.5 {
		t.Fatalf("a nil View's cover rate %g, want the base 1.5", r)
	}
	v = newView(t, Config{Params: topology.Params{Layers: 2, Width: 1}, EpochBlocks: 1, Snapshot: channels.NewGraph().Snapshot,
		Indexed: func() uint64 { return 0 }, HeaderHash: (&chain{}).headerHash})
	if v.ForRouter() == nil || v.ForStrategy() == nil || v.ForRelay() == nil || !v.ForRelay()() {
		t.Fatal("a View gives no funcs")
	}
}

// memStakes is a StakeStore in memory.
type memStakes struct {
	mu sync.Mutex
	m  map[uint64][]byte
}

func (s *memStakes) PutEpochStakes(first uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[first] = slices.Clone(data)
	return nil
}

func (s *memStakes) EpochStakes(first uint64) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.m[first]
	return d, ok, nil
}

// TestStakesOfTheEpochsFirstBlock: with a minStake, a node draws an epoch with the stakes
// recorded at its first block (AtEpoch), not with those it indexed since, so that nodes that draw
// at other times, or restart, draw alike; a node without them draws with today's (and may differ).
func TestStakesOfTheEpochsFirstBlock(t *testing.T) {
	const n = 40
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	g := network(n, order) // account i stakes i+1
	var ch chain
	ch.failAt = 1 << 40
	params := topology.Params{Layers: 2, Width: 4, MinStake: big.NewInt(4)} // entries: (i+1)/4
	store := &memStakes{m: map[uint64][]byte{}}
	cfg := Config{Params: params, EpochBlocks: 100, Snapshot: g.Snapshot, Indexed: ch.next.Load, HeaderHash: ch.headerHash, Stakes: store}
	v := newView(t, cfg)
	if err := v.AtEpoch(100); err != nil { // the graph as it was before block 100
		t.Fatal(err)
	}
	hash, _ := ch.headerHash(t.Context(), 100)
	before, err := topology.Draw(params, 1, topology.Seed(1, hash[:]), Candidates(g.Snapshot(), 100))
	if err != nil {
		t.Fatal(err)
	}
	// Blocks of epoch 1 change the stakes: the low stakers top up, the high ones drain.
	for i := range n {
		g.Apply(channels.Channel{ID: channels.IDOf(addr(i), addr((i+1)%n)), Source: addr(i), Destination: addr((i + 1) % n),
			Balance: big.NewInt(int64(n - i)), Epoch: 1, Status: channels.Open})
	}
	now, err := topology.Draw(params, 1, topology.Seed(1, hash[:]), Candidates(g.Snapshot(), 100))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(now.Layers(), before.Layers()) {
		t.Fatal("today's stakes draw the same layers: the test proves nothing")
	}
	ch.next.Store(150)
	if err := v.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Topology().Layers(), before.Layers()) {
		t.Fatal("drawn with today's stakes, not the epoch's first block's")
	}
	// A restarted node (its memory gone, the store kept) draws the same.
	restarted := newView(t, cfg)
	if err := restarted.Refresh(t.Context()); err != nil || !reflect.DeepEqual(restarted.Topology().Layers(), before.Layers()) {
		t.Fatalf("restarted: %v, or other layers", err)
	}
	// Without recorded stakes: today's.
	cfg.Stakes = nil
	blind := newView(t, cfg)
	if err := blind.Refresh(t.Context()); err != nil || !reflect.DeepEqual(blind.Topology().Layers(), now.Layers()) {
		t.Fatalf("no recorded stakes: %v, or not today's layers", err)
	}
	// The store keeps what decodes; garbage is refused.
	if _, err := decodeStakes(make([]byte, stakeLen+1)); !errors.Is(err, ErrBadStakes) {
		t.Fatalf("decode of a short record: %v", err)
	}
	got, err := decodeStakes(store.m[100])
	if err != nil || len(got) != n || got[addr(7)].Int64() != 8 {
		t.Fatalf("recorded stakes %v, %v", got, err)
	}
}
