package strategy

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// DefaultInterval is how often a Runner decides (the original node's strategy tick was 60 s).
const DefaultInterval = 30 * time.Second

// DefaultTopUpInterval is how often a Runner looks for channels to top up between its ticks: a
// node streaming at 10 packets a second spends about 0.65 tokens a second through its channels.
const DefaultTopUpInterval = 5 * time.Second

// World is what a Runner reads and changes; the node implements it over its chain client,
// channel graph and transport.
type World interface {
	// State is what the node sees now.
	State(ctx context.Context) (State, error)
	// Open funds a channel to peer with amount.
	Open(ctx context.Context, peer common.Address, amount *big.Int) error
	// Close initiates the closure of the outgoing channel to peer, or finalizes it once its
	// closure period is over.
	Close(ctx context.Context, peer common.Address) error
	// TopUp adds amount to the open outgoing channel to peer.
	TopUp(ctx context.Context, peer common.Address, amount *big.Int) error
}

// RunnerConfig configures a Runner. Policy and World are required.
type RunnerConfig struct {
	// Policy returns the policy in force; it is read at every tick, so a changed setting applies
	// at the next one.
	Policy func() Policy
	World  World
	// Interval is the time between ticks (DefaultInterval); the first tick is at once.
	Interval time.Duration
	// TopUpInterval is the time between the top-up ticks in between (DefaultTopUpInterval, at
	// most Interval), which only top up channels.
	TopUpInterval time.Duration
	// Rand picks among eligible peers (a random source when nil).
	Rand *rand.Rand
	// Logger receives what the strategy did (slog.Default() when nil).
	Logger *slog.Logger
	// Kick, when not nil, starts a tick at once when it receives (a changed setting).
	Kick <-chan struct{}
	// Layers, in a layered network, returns the node's place in the current epoch's layers
	// (State.Layers), read at every tick; nil, or a nil result: free routes.
	Layers func() *Layered
}

// Runner ticks a strategy: at every tick it decides on the World's State and carries the actions
// out, one after the other. It opens channels only once the announced peers are the same as at
// the tick before: a node that has just started, or a network whose nodes are still announcing
// themselves, would otherwise give every channel to the few nodes it learned of first.
type Runner struct {
	cfg RunnerConfig
	// peers is the set of announced peers at the last tick, as a fingerprint: a node of a
	// network of N keeps 24 bytes, not a set of N addresses (N² across a simulated network).
	peers peerSet
	// held are the peers whose top-up failed, until when no top-up is tried again.
	held map[common.Address]time.Time
	seed maphash.Seed
}

// ErrBadRunner means a required RunnerConfig field is missing.
var ErrBadRunner = errors.New("strategy runner needs a policy and a world")

// NewRunner checks cfg.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Policy == nil || cfg.World == nil {
		return nil, ErrBadRunner
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.TopUpInterval <= 0 {
		cfg.TopUpInterval = DefaultTopUpInterval
	}
	cfg.TopUpInterval = min(cfg.TopUpInterval, cfg.Interval)
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Runner{cfg: cfg, held: map[common.Address]time.Time{}, seed: maphash.MakeSeed()}, nil
}

// Run ticks until ctx ends; it returns nil then. Failures of one tick are logged and retried at
// the next.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	up := time.NewTicker(r.cfg.TopUpInterval)
	defer up.Stop()
	for {
		r.Tick(ctx)
	between:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				break between
			case <-r.cfg.Kick:
				break between
			case <-up.C:
				r.TopUpTick(ctx)
			}
		}
	}
}

// TopUpTick tops up the channels that need it and does nothing else (the ticks in between).
func (r *Runner) TopUpTick(ctx context.Context) ([]Action, []error) {
	p := r.cfg.Policy()
	if !p.TopUp {
		return nil, nil
	}
	p.Strategy = Passive
	return r.decide(ctx, p, true)
}

// peerSet fingerprints a set of addresses independently of their order: their count, and the
// sum and the xor of their hashes under the Runner's own random seed (so a peer cannot choose
// an address that collides; a collision would only let the Runner open one tick early).
type peerSet struct {
	n        int
	sum, xor uint64
}

// settled reports whether peers are the ones of the last tick, and remembers them. peers holds
// each address once, as State says.
func (r *Runner) settled(peers []Peer) bool {
	next := peerSet{n: len(peers)}
	for _, p := range peers {
		h := maphash.Bytes(r.seed, p.Address[:])
		next.sum += h
		next.xor ^= h
	}
	same := next == r.peers
	r.peers = next
	return same
}

// Tick decides once and carries the actions out; it returns them with the error of each (nil
// when it succeeded).
func (r *Runner) Tick(ctx context.Context) ([]Action, []error) {
	p := r.cfg.Policy()
	if p.WithDefaults().Strategy == Passive && !p.TopUp && !LayerDuty(p, r.layers()) {
		return nil, nil
	}
	return r.decide(ctx, p, false)
}

// layers is the node's place in the layers now, nil on free routes.
func (r *Runner) layers() *Layered {
	if r.cfg.Layers == nil {
		return nil
	}
	return r.cfg.Layers()
}

// decide reads the State, decides under p and carries the actions out; with topUpsOnly, only
// the top-ups.
func (r *Runner) decide(ctx context.Context, p Policy, topUpsOnly bool) ([]Action, []error) {
	st, err := r.cfg.World.State(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Warn("strategy: cannot read the node's state", "err", err)
		}
		return nil, nil
	}
	st.Layers = r.layers()
	now := time.Now()
	for a, until := range r.held {
		if now.After(until) {
			delete(r.held, a)
		} else {
			st.Busy = append(st.Busy, a)
		}
	}
	actions := Decide(p, st, r.cfg.Rand)
	if topUpsOnly {
		actions = slices.DeleteFunc(actions, func(a Action) bool { return a.Kind != TopUp })
	} else if !r.settled(st.Peers) { // every tick, so that a passive node drawn into a layer opens at once
		actions = slices.DeleteFunc(actions, func(a Action) bool { return a.Kind == Open })
	}
	errs := make([]error, len(actions))
	for i, a := range actions {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		switch a.Kind {
		case Open:
			errs[i] = r.cfg.World.Open(ctx, a.Peer, a.Amount)
		case Close:
			errs[i] = r.cfg.World.Close(ctx, a.Peer)
		case TopUp:
			if errs[i] = r.cfg.World.TopUp(ctx, a.Peer, a.Amount); errs[i] != nil {
				r.held[a.Peer] = now.Add(r.cfg.Interval)
			}
		}
		if errs[i] != nil {
			r.cfg.Logger.Warn("strategy: "+a.Kind.String()+" channel failed", "peer", a.Peer.Hex(), "reason", a.Reason, "err", errs[i])
		} else {
			// A streaming node tops a channel up every few seconds: that is no news.
			level := slog.LevelInfo
			if a.Kind == TopUp {
				level = slog.LevelDebug
			}
			r.cfg.Logger.Log(ctx, level, "strategy: "+a.Kind.String()+" channel", "strategy", string(p.Strategy), "peer", a.Peer.Hex(), "reason", a.Reason)
		}
	}
	return actions, errs
}
