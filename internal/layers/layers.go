package layers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/topology"
)

// Defaults of Config.
const (
	// DefaultInterval is how often Run looks for a new epoch: the first block of an epoch is
	// drawn on within about this much of the indexer reading it.
	DefaultInterval = 5 * time.Second
	// DefaultGrace is how long after an epoch change a node keeps its channels to the previous
	// epoch's peers: packets on paths picked just before the change (or by a sender whose indexer
	// is a little behind) still find their channels.
	DefaultGrace = 5 * time.Minute
)

// Config configures a View. Params, EpochBlocks, Snapshot, Indexed and HeaderHash are required.
type Config struct {
	// Params is the network's topology (networks.Topology.Params).
	Params topology.Params
	// EpochBlocks is an epoch's length in blocks (networks.Topology.EpochBlocks), at least 1.
	EpochBlocks uint64
	// Self is this node's chain address.
	Self common.Address
	// Snapshot is the indexed channel graph and announcements (*channels.Graph has it).
	Snapshot func() *channels.Snapshot
	// Indexed is the first block the indexer has not read yet (chain.Indexer's Next).
	Indexed func() uint64
	// HeaderHash is the hash of block n (*chain.Client has it).
	HeaderHash func(ctx context.Context, n uint64) (common.Hash, error)
	// Interval is the time between Run's looks for a new epoch (DefaultInterval).
	Interval time.Duration
	// Grace is how long the previous epoch's peers keep their channels (DefaultGrace; negative:
	// none).
	Grace time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger receives a line per draw (slog.Default() when nil).
	Logger *slog.Logger
	// RelayerCoverRate is the loops a second the node sends on top of its cover while it relays
	// in a layer (networks.Topology.RelayerCoverRate; CoverRate).
	RelayerCoverRate float64
}

// View is the node's view of the current epoch's layers. Its methods are safe for concurrent use.
type View struct {
	cfg Config

	mu   sync.Mutex // guards cur and prev
	cur  *drawn
	prev *drawn // the epoch before cur, for the grace
}

// drawn is one epoch's layers as the node uses them.
type drawn struct {
	top     *topology.Topology
	layerOf map[common.Address]int
	peers   strategy.Layered // this node's
	path    path.Layers      // over layerOf
	at      time.Time        // when the node drew it
}

// New checks cfg and returns a View that has drawn nothing yet (Refresh, Run draw).
func New(cfg Config) (*View, error) {
	switch {
	case cfg.Snapshot == nil || cfg.Indexed == nil || cfg.HeaderHash == nil:
		return nil, fmt.Errorf("%w: Snapshot, Indexed and HeaderHash are required", ErrBadConfig)
	case cfg.EpochBlocks < 1:
		return nil, fmt.Errorf("%w: epochs of %d blocks", ErrBadConfig, cfg.EpochBlocks)
	case cfg.Params.Layers < path.MinRelayers || cfg.Params.Layers > path.MaxRelayers:
		return nil, fmt.Errorf("%w: %d layers, a path crosses %d to %d", ErrBadConfig, cfg.Params.Layers, path.MinRelayers, path.MaxRelayers)
	case cfg.Params.Width < 1:
		return nil, fmt.Errorf("%w: width %d", ErrBadConfig, cfg.Params.Width)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &View{cfg: cfg}, nil
}

// Run draws the layers at once and again whenever the indexer has read a new epoch's first
// block, until ctx ends; it returns nil then. A failed draw (no block hash, too few candidates)
// is logged and tried again at the next look. On a nil View (free routes) it returns nil at once.
func (v *View) Run(ctx context.Context) error {
	if v == nil {
		return nil
	}
	t := time.NewTicker(v.cfg.Interval)
	defer t.Stop()
	var failed error
	for {
		err := v.Refresh(ctx)
		switch {
		case errors.Is(err, ErrNotDrawn): // nothing indexed yet: the indexer is starting
		case err != nil && ctx.Err() == nil && (failed == nil || err.Error() != failed.Error()):
			v.cfg.Logger.Warn("layers: cannot draw this epoch's layers", "err", err)
		case err == nil && failed != nil && !errors.Is(failed, ErrNotDrawn):
			v.cfg.Logger.Info("layers: drawn after all")
		}
		failed = err
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// epoch returns the epoch the indexer is in, that of the last block it read; ok is false
// before it read any block.
func (v *View) epoch() (epoch uint64, ok bool) {
	next := v.cfg.Indexed()
	if next == 0 {
		return 0, false
	}
	return topology.EpochOfBlock(next-1, v.cfg.EpochBlocks), true
}

// Refresh draws the current epoch's layers if they are not drawn yet: the epoch of the last
// block the indexer read, its seed from the hash of its first block, its candidates from the
// indexed graph (Candidates). Errors: ErrNotDrawn (nothing indexed yet), the HeaderHash's,
// topology.ErrTooFewCandidates; the layers drawn before stay in force meanwhile.
func (v *View) Refresh(ctx context.Context) error {
	epoch, ok := v.epoch()
	if !ok {
		return fmt.Errorf("%w: nothing indexed", ErrNotDrawn)
	}
	v.mu.Lock()
	cur := v.cur
	v.mu.Unlock()
	if cur != nil && cur.top.Epoch() >= epoch {
		return nil
	}
	d, err := v.draw(ctx, epoch)
	if err != nil {
		return err
	}
	prev := cur
	if cur == nil && epoch >= 2 {
		// A node (re)started during an epoch draws the one before too: within the grace after
		// the change it keeps that epoch's channels and paths, as it would have without the
		// restart. Epoch 0 has no candidates; a failure only costs the grace.
		prev, _ = v.draw(ctx, epoch-1)
	}
	v.mu.Lock()
	v.prev, v.cur = prev, d
	v.mu.Unlock()
	k, relays := d.layerOf[v.cfg.Self]
	if !relays {
		k = -1
	}
	v.cfg.Logger.Info("layers: drawn", "epoch", epoch, "layers", d.top.Len(), "width", d.top.Width(), "layer", k)
	return nil
}

// draw draws epoch's layers: its seed from the hash of its first block, its candidates from the
// indexed graph (Candidates).
func (v *View) draw(ctx context.Context, epoch uint64) (*drawn, error) {
	first := epoch * v.cfg.EpochBlocks
	hash, err := v.cfg.HeaderHash(ctx, first)
	if err != nil {
		return nil, fmt.Errorf("epoch %d's first block %d: %w", epoch, first, err)
	}
	top, err := topology.Draw(v.cfg.Params, epoch, topology.Seed(epoch, hash[:]), Candidates(v.cfg.Snapshot(), first))
	if err != nil {
		return nil, fmt.Errorf("epoch %d: %w", epoch, err)
	}
	d := &drawn{top: top, layerOf: make(map[common.Address]int), at: v.cfg.Now()}
	layers := make([][]common.Address, top.Len())
	for k := range top.Len() {
		for _, id := range top.Layer(k) {
			a := common.BytesToAddress([]byte(id))
			layers[k] = append(layers[k], a)
			d.layerOf[a] = k
		}
	}
	d.peers = strategy.LayerPeers(layers, v.cfg.Self)
	d.path = path.Layers{Count: top.Len(), Allowed: func(position int, a common.Address) bool {
		k, ok := d.layerOf[a]
		return ok && k == position
	}}
	return d, nil
}

// ID is a candidate's id in the draw: its chain address's 20 bytes (docs/PROTOCOL.md, "Layered
// topology").
func ID(a common.Address) string { return string(a[:]) }

// Candidates are the draw's candidates in snap for the epoch starting at block first: every
// announced account, eligible (Announced) when its first announcement was mined before first (or
// the index does not know when: channels.Announcement.Block 0), so that an id ground after the
// epoch's seed is known waits for the next epoch; its stake the sum of the balances of its open
// outgoing channels (the funds it has put into relaying, which every node indexes alike). In the
// order of snap.Peers.
func Candidates(snap *channels.Snapshot, first uint64) []topology.Candidate {
	anns := snap.Peers()
	out := make([]topology.Candidate, 0, len(anns))
	for _, a := range anns {
		stake := new(big.Int)
		for _, c := range snap.Outgoing(a.Account) {
			if c.Status == channels.Open {
				stake.Add(stake, c.Balance)
			}
		}
		out = append(out, topology.Candidate{ID: ID(a.Account), Stake: stake, Announced: a.Block < first || a.Block == 0})
	}
	return out
}

// Topology returns the current epoch's layers, nil before the first draw.
func (v *View) Topology() *topology.Topology {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur == nil {
		return nil
	}
	return v.cur.top
}

// Path returns the constraint of the node's own paths (path.SelectLayered): a relayer of each
// layer in order. ok is false before the first draw: then the node has no path.
func (v *View) Path() (l path.Layers, ok bool) {
	v.mu.Lock()
	d := v.cur
	v.mu.Unlock()
	if d == nil {
		return path.Layers{}, false
	}
	return d.path, true
}

// Paths returns the layers the node's own paths may cross, in order of preference: the current
// epoch's, then during the grace after an epoch change the previous epoch's, whose channels the
// strategy keeps meanwhile (a sender has no channel into the new first layer until its strategy
// opened them and the chain confirmed it: minutes on a public chain). None before the first
// draw.
func (v *View) Paths() []path.Layers {
	v.mu.Lock()
	cur, prev := v.cur, v.prev
	v.mu.Unlock()
	if cur == nil {
		return nil
	}
	out := []path.Layers{cur.path}
	if v.inGrace(cur, prev) {
		out = append(out, prev.path)
	}
	return out
}

// inGrace reports whether prev's channels are kept: cur was drawn less than Grace ago.
func (v *View) inGrace(cur, prev *drawn) bool {
	return prev != nil && v.cfg.Grace > 0 && v.cfg.Now().Before(cur.at.Add(v.cfg.Grace))
}

// Strategy returns the node's place in the current epoch's layers for the channel strategy
// (strategy.RunnerConfig.Layers): the peers it keeps channels to, and during the grace after an
// epoch change the previous epoch's as Keep. Before the first draw it holds every channel
// (Pending).
func (v *View) Strategy() *strategy.Layered {
	v.mu.Lock()
	cur, prev := v.cur, v.prev
	v.mu.Unlock()
	if cur == nil {
		return &strategy.Layered{Pending: true}
	}
	l := cur.peers
	l.Peers = slices.Clone(l.Peers)
	if v.inGrace(cur, prev) {
		for _, a := range prev.peers.Peers {
			if !slices.Contains(l.Peers, a) {
				l.Keep = append(l.Keep, a)
			}
		}
	}
	return &l
}

// ForRouter is v.Paths for router.Config.Layers, or nil when v is nil: a network without a
// topology keeps free routes.
func (v *View) ForRouter() func() []path.Layers {
	if v == nil {
		return nil
	}
	return v.Paths
}

// ForStrategy is v.Strategy for strategy.RunnerConfig.Layers, or nil when v is nil (free routes).
func (v *View) ForStrategy() func() *strategy.Layered {
	if v == nil {
		return nil
	}
	return v.Strategy
}

// ForRelay is relay.Config.Layered: always true for a View (its network has a topology), nil
// when v is nil (free routes).
func (v *View) ForRelay() func() bool {
	if v == nil {
		return nil
	}
	return func() bool { return true }
}

// Status is what the node shows of its place in the layers (GET /node/info's topology, the admin
// info command, the web console).
type Status struct {
	// Layers and Width are the network's (its networks-file topology); EpochBlocks an epoch's
	// length in blocks.
	Layers, Width int
	EpochBlocks   uint64
	// Drawn says the current epoch's layers are drawn; the fields below are zero until then.
	Drawn bool
	// Epoch is the drawn epoch; NextEpochBlock the first block of the next one, at which the
	// layers are drawn again.
	Epoch, NextEpochBlock uint64
	// Relayers are the relayers drawn for the epoch (at most Layers × Width: fewer when the
	// network has fewer candidates).
	Relayers int
	// Layer is this node's layer this epoch, 1 the first (the one senders' packets enter); 0:
	// it relays in none.
	Layer int
	// Grace says the previous epoch's peers still keep their channels and paths (DefaultGrace
	// after a draw).
	Grace bool
}

// Status returns the node's place in the layers; ok is false on a nil View (free routes).
func (v *View) Status() (s Status, ok bool) {
	if v == nil {
		return Status{}, false
	}
	s = Status{Layers: v.cfg.Params.Layers, Width: v.cfg.Params.Width, EpochBlocks: v.cfg.EpochBlocks}
	v.mu.Lock()
	cur, prev := v.cur, v.prev
	v.mu.Unlock()
	if cur == nil {
		return s, true
	}
	s.Drawn, s.Epoch, s.NextEpochBlock = true, cur.top.Epoch(), (cur.top.Epoch()+1)*v.cfg.EpochBlocks
	s.Relayers = len(cur.layerOf)
	if k, ok := cur.layerOf[v.cfg.Self]; ok {
		s.Layer = k + 1
	}
	s.Grace = v.inGrace(cur, prev)
	return s, true
}

// CoverRate returns the node's loop cover rate for cover.Config.Rate: base, and while the node
// relays in the current epoch's layers the network's RelayerCoverRate on top, so that a relayer's
// pool does not fall to what its senders send when they are quiet (Loopix's mix loops). On a nil
// View (free routes) it is base.
func (v *View) CoverRate(base func() float64) func() float64 {
	if v == nil {
		return base
	}
	return func() float64 {
		v.mu.Lock()
		cur := v.cur
		v.mu.Unlock()
		if cur == nil {
			return base()
		}
		if _, relays := cur.layerOf[v.cfg.Self]; relays {
			return base() + v.cfg.RelayerCoverRate
		}
		return base()
	}
}
