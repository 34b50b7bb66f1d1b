package layers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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
	// Stakes keeps the candidates' stakes AtEpoch recorded, so that a restarted node draws with
	// them too (*store.DB implements it); nil: kept in memory only.
	Stakes StakeStore
}

// StakeStore keeps the stakes of an epoch's candidates, encoded, under the epoch's first block.
type StakeStore interface {
	PutEpochStakes(first uint64, data []byte) error
	EpochStakes(first uint64) (data []byte, ok bool, err error)
}

// View is the node's view of the current epoch's layers. Its methods are safe for concurrent use.
type View struct {
	cfg Config

	mu   sync.Mutex // guards cur, prev, stakes and warned
	cur  *drawn
	prev *drawn // the epoch before cur, for the grace
	// stakes are the stakes AtEpoch recorded, by epoch's first block (the newest few).
	stakes map[uint64]map[common.Address]*big.Int
	warned uint64 // 1 + the first block of the last epoch drawn without recorded stakes
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
	return &View{cfg: cfg, stakes: map[uint64]map[common.Address]*big.Int{}}, nil
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
	cands := Candidates(v.cfg.Snapshot(), first)
	if stakes, ok := v.stakesAt(first); ok {
		for i := range cands {
			cands[i].Stake = stakes[common.BytesToAddress([]byte(cands[i].ID))]
		}
	} else if v.cfg.Params.MinStake != nil && v.cfg.Params.MinStake.Sign() > 0 && v.warnOnce(first) {
		v.cfg.Logger.Warn("layers: the stakes at the epoch's first block were not recorded (the node's store predates them): drawn with today's, so this node's layers may differ from other nodes' until the next epoch",
			"epoch", epoch, "block", first)
	}
	top, err := topology.Draw(v.cfg.Params, epoch, topology.Seed(epoch, hash[:]), cands)
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

// keptStakes is how many epochs' stakes a View keeps in memory.
const keptStakes = 3

// AtEpoch records the stakes of every announced account as the indexed graph holds them now,
// which chain.IndexerConfig.OnEpoch calls when the graph is as the chain was just before the
// epoch's first block (first): every node records the same stakes for an epoch, whenever it
// draws it, so that with a minStake all draw the same layers. It keeps them in memory and in
// Stakes. On a nil View it does nothing.
func (v *View) AtEpoch(first uint64) error {
	if v == nil {
		return nil
	}
	snap := v.cfg.Snapshot()
	stakes := map[common.Address]*big.Int{}
	for _, c := range Candidates(snap, first) {
		stakes[common.BytesToAddress([]byte(c.ID))] = c.Stake
	}
	if v.cfg.Stakes != nil {
		if err := v.cfg.Stakes.PutEpochStakes(first, encodeStakes(stakes)); err != nil {
			return err
		}
	}
	v.keepStakes(first, stakes)
	return nil
}

// keepStakes keeps stakes as the epoch's at first, and the newest keptStakes epochs'.
func (v *View) keepStakes(first uint64, stakes map[common.Address]*big.Int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.stakes[first] = stakes
	for len(v.stakes) > keptStakes {
		delete(v.stakes, slices.Min(slices.Collect(maps.Keys(v.stakes))))
	}
}

// stakesAt returns the stakes recorded for the epoch starting at first: from memory, or from
// Stakes (a restart).
func (v *View) stakesAt(first uint64) (map[common.Address]*big.Int, bool) {
	v.mu.Lock()
	s, ok := v.stakes[first]
	v.mu.Unlock()
	if ok || v.cfg.Stakes == nil {
		return s, ok
	}
	data, ok, err := v.cfg.Stakes.EpochStakes(first)
	if err != nil || !ok {
		return nil, false
	}
	if s, err = decodeStakes(data); err != nil {
		v.cfg.Logger.Warn("layers: the recorded stakes do not decode", "block", first, "err", err)
		return nil, false
	}
	v.keepStakes(first, s)
	return s, true
}

// warnOnce reports whether the epoch at first was not warned about yet, and notes it.
func (v *View) warnOnce(first uint64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.warned == first+1 {
		return false
	}
	v.warned = first + 1
	return true
}

// stakeLen is one recorded stake's length: the account's 20 bytes, its stake in 32 bytes
// big-endian (docs/PROTOCOL.md, "Layered topology").
const stakeLen = common.AddressLength + 32

// encodeStakes writes stakes in the order of their accounts.
func encodeStakes(stakes map[common.Address]*big.Int) []byte {
	accounts := slices.SortedFunc(maps.Keys(stakes), func(a, b common.Address) int { return a.Cmp(b) })
	out := make([]byte, 0, len(accounts)*stakeLen)
	for _, a := range accounts {
		var stake [32]byte
		if st := stakes[a]; st != nil && st.Sign() > 0 && st.BitLen() <= 256 { // a balance on chain fits
			st.FillBytes(stake[:])
		}
		out = append(append(out, a[:]...), stake[:]...)
	}
	return out
}

// decodeStakes reads what encodeStakes wrote (ErrBadStakes otherwise).
func decodeStakes(data []byte) (map[common.Address]*big.Int, error) {
	if len(data)%stakeLen != 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadStakes, len(data))
	}
	stakes := make(map[common.Address]*big.Int, len(data)/stakeLen)
	for rec := range slices.Chunk(data, stakeLen) {
		stakes[common.BytesToAddress(rec[:common.AddressLength])] = new(big.Int).SetBytes(rec[common.AddressLength:])
	}
	return stakes, nil
}
