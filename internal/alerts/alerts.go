// Package alerts evaluates the conditions an operator must hear about (docs/COCKPIT.md): the
// native balance too low to pay gas, a depleted outgoing channel, the chain indexer behind the
// chain's head, the chain provider down, channel peers the heartbeat finds unreachable. The
// thresholds are settings (alertNativeBalance, alertChannelBalance, alertIndexerLag,
// alertHoldSeconds). An alert is raised once its condition held for the hold time and cleared
// once the condition's opposite held as long, with a margin between the two (hysteresis), so that
// it does not flap. Alerts lists the raised ones (GET /api/v2/node/alerts); Checks reports, as a
// health.Checker for /readyz, not ready while a critical one is raised. It reads the node's
// values through the funcs of Sources, which the node wires. It imports internal/channels,
// internal/health, internal/peers, internal/settings and internal/token of relayd's packages and
// nothing else (no transport, no store, no chain client).
package alerts

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/token"
)

// ID names an alert's condition.
type ID string

// The conditions.
const (
	// NativeBalanceLow: the native balance (gas) is below alertNativeBalance.
	NativeBalanceLow ID = "nativeBalanceLow"
	// ChannelDepleted: an open outgoing channel's balance is below alertChannelBalance.
	ChannelDepleted ID = "channelDepleted"
	// IndexerBehind: the chain indexer is more than alertIndexerLag blocks behind the head.
	IndexerBehind ID = "indexerBehind"
	// ProviderDown: the chain provider does not answer.
	ProviderDown ID = "providerDown"
	// ChannelPeersUnreachable: a peer this node has an open channel with (either way) is not
	// reachable by the heartbeat.
	ChannelPeersUnreachable ID = "channelPeersUnreachable"
)

// Severity is how urgent an alert is.
type Severity string

// The severities. A critical alert makes /readyz answer not ready (Checks).
const (
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// severities are the conditions' severities: the node cannot follow the chain without its
// provider or an indexer that keeps up; the others leave it working, with less money or fewer
// paths.
var severities = map[ID]Severity{
	NativeBalanceLow: Warning, ChannelDepleted: Warning, ChannelPeersUnreachable: Warning,
	IndexerBehind: Critical, ProviderDown: Critical,
}

// MaxSubjects is the most subjects an alert names.
const MaxSubjects = 16

// UnreachableQuality is the heartbeat quality below which a channel peer counts as unreachable
// (as does one the transport does not know or marks down).
const UnreachableQuality = 0.5

// Alert is a raised alert.
type Alert struct {
	ID       ID
	Severity Severity
	// Since is when its condition began to hold (the hold time before it was raised included).
	Since time.Time
	// Detail says what holds in a sentence of the node's own values (amounts, block numbers,
	// counts): never a peer's text, a token or a provider URL.
	Detail string
	// Subjects are the channels' counterparts concerned (checksummed chain addresses) or peers
	// (PeerIds), at most MaxSubjects.
	Subjects []string
}

// Sources are the node's values the alerts read; a nil func is a condition the node cannot have
// (a node without a chain has no provider, indexer, balance or channels).
type Sources struct {
	// Head reads the chain's head block (chain.Client.BlockNumber): an error is the provider down.
	Head func(ctx context.Context) (uint64, error)
	// Indexed is the first block the indexer has not read (chain.Indexer.Next).
	Indexed func() uint64
	// Balances reads the native and token balances (ledger.Operations.Balances).
	Balances func(ctx context.Context) (native, token *big.Int, err error)
	// Channels lists this node's channels (ledger.Operations.ListChannels).
	Channels func(includingClosed bool) (in, out []channels.Channel)
	// Available is what this node's open channel to an account can still pay: its balance less
	// what the tickets signed on it and not yet redeemed are expected to draw
	// (ledger.Ledger.Available; ok false when unknown). nil: the balance on chain alone.
	Available func(to common.Address) (avail uint256.Int, ok bool)
	// Peers lists the known peers with their heartbeat (p2p.Host.Peers); AddressOf gives a
	// peer's chain address (peers.Directory.AddressOf). Both are needed for
	// ChannelPeersUnreachable.
	Peers     func() []peers.Info
	AddressOf func(peer.ID) (common.Address, error)
}

// Config configures Alerts. Settings is required.
type Config struct {
	Sources Sources
	// Settings gives the thresholds (settings.Settings.Get).
	Settings func() settings.Values
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Ticks, when set, makes Run evaluate at each value received (tests); nil: every Every.
	Ticks <-chan time.Time
	// Every is how often Run evaluates (default DefaultEvery).
	Every time.Duration
	// ReadTimeout bounds the chain reads of one evaluation (default 5 s).
	ReadTimeout time.Duration
	Logger      *slog.Logger
}

// DefaultEvery is how often Run evaluates by default.
const DefaultEvery = 15 * time.Second

// Alerts evaluates the conditions and keeps the raised alerts. It is safe for concurrent use.
type Alerts struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	states map[ID]*state
}

// state is one condition's: raised or not, and since when the condition for a change holds.
type state struct {
	raised   bool
	since    time.Time // when the raised alert's condition began
	changing time.Time // when the condition for the other state began to hold; zero: it does not
	detail   string
	subjects []string
}

// New builds Alerts; it starts nothing (Run evaluates).
func New(cfg Config) (*Alerts, error) {
	if cfg.Settings == nil {
		return nil, fmt.Errorf("alerts: Settings is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 5 * time.Second
	}
	a := &Alerts{cfg: cfg, log: cfg.Logger, states: map[ID]*state{}}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// Run evaluates every Config.Every (or at each of Config.Ticks) until ctx ends; it returns nil
// then.
func (a *Alerts) Run(ctx context.Context) error {
	ticks := a.cfg.Ticks
	if ticks == nil {
		t := time.NewTicker(a.cfg.Every)
		defer t.Stop()
		ticks = t.C
	}
	a.Evaluate(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			a.Evaluate(ctx)
		}
	}
}

// verdict is what one evaluation found of a condition: whether it holds (raise), whether its
// opposite holds with the margin (clear), neither (between the two, or unknown: no change).
type verdict struct {
	raise, clear bool
	detail       string
	subjects     []string
}

// Evaluate reads the sources once and raises or clears each alert.
func (a *Alerts) Evaluate(ctx context.Context) {
	v := a.cfg.Settings()
	src := a.cfg.Sources
	verdicts := map[ID]verdict{}
	if src.Head != nil {
		ctx, cancel := context.WithTimeout(ctx, a.cfg.ReadTimeout)
		head, err := src.Head(ctx)
		cancel()
		if err != nil {
			verdicts[ProviderDown] = verdict{raise: true, detail: "the chain provider does not answer (chain calls fail)"}
		} else {
			verdicts[ProviderDown] = verdict{clear: true}
			if src.Indexed != nil {
				verdicts[IndexerBehind] = indexerVerdict(head, src.Indexed(), uint64(v.AlertIndexerLag))
			}
		}
	}
	if src.Balances != nil {
		ctx, cancel := context.WithTimeout(ctx, a.cfg.ReadTimeout)
		native, _, err := src.Balances(ctx)
		cancel()
		if err == nil && native != nil {
			verdicts[NativeBalanceLow] = nativeVerdict(token.Of(native), v.AlertNativeBalance)
		}
	}
	if src.Channels != nil {
		in, out := src.Channels(false)
		verdicts[ChannelDepleted] = depletedVerdict(out, v.AlertChannelBalance, src.Available)
		if src.Peers != nil && src.AddressOf != nil {
			verdicts[ChannelPeersUnreachable] = unreachableVerdict(in, out, src.Peers(), src.AddressOf)
		}
	}
	a.apply(verdicts, time.Duration(v.AlertHoldSeconds)*time.Second)
}

// apply moves each condition's state by its verdict.
func (a *Alerts) apply(verdicts map[ID]verdict, hold time.Duration) {
	now := a.cfg.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, vd := range verdicts {
		st := a.states[id]
		if st == nil {
			st = &state{}
			a.states[id] = st
		}
		toward := (vd.raise && !st.raised) || (vd.clear && st.raised)
		switch {
		case !toward:
			st.changing = time.Time{}
		case st.changing.IsZero():
			st.changing = now
		}
		if vd.raise {
			st.detail, st.subjects = vd.detail, vd.subjects
		}
		if !toward || now.Sub(st.changing) < hold {
			continue
		}
		st.raised = !st.raised
		if st.raised {
			st.since = st.changing
			a.log.Warn("alert raised", slog.String("alert", string(id)), slog.String("severity", string(severities[id])),
				slog.String("detail", st.detail))
		} else {
			a.log.Info("alert cleared", slog.String("alert", string(id)))
		}
		st.changing = time.Time{}
	}
}

// Alerts lists the raised alerts, critical first, then by ID.
func (a *Alerts) Alerts() []Alert {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []Alert{}
	for id, st := range a.states {
		if st.raised {
			out = append(out, Alert{ID: id, Severity: severities[id], Since: st.since, Detail: st.detail,
				Subjects: append([]string{}, st.subjects...)})
		}
	}
	slices.SortFunc(out, func(x, y Alert) int {
		if x.Severity != y.Severity {
			if x.Severity == Critical {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

// Checks reports the alerts as a health.Checker: one check, "alerts", not ready while a critical
// alert is raised (its detail names them); warnings leave it ready.
func (a *Alerts) Checks(context.Context) []health.Check {
	var critical, warnings []string
	for _, al := range a.Alerts() {
		if al.Severity == Critical {
			critical = append(critical, string(al.ID))
		} else {
			warnings = append(warnings, string(al.ID))
		}
	}
	if len(critical) > 0 {
		return []health.Check{{Name: "alerts", Detail: "critical alerts raised: " + strings.Join(critical, ", ")}}
	}
	detail := "no critical alert"
	if len(warnings) > 0 {
		detail += "; warnings: " + strings.Join(warnings, ", ")
	}
	return []health.Check{{Name: "alerts", Ready: true, Detail: detail}}
}

// indexerVerdict: behind by more than lag blocks raises; within half of it clears.
func indexerVerdict(head, next, lag uint64) verdict {
	behind := uint64(0)
	if head+1 > next {
		behind = head + 1 - next
	}
	return verdict{raise: behind > lag, clear: behind <= lag/2,
		detail: fmt.Sprintf("the indexer is %d blocks behind the chain head %d (threshold %d)", behind, head, lag)}
}

// margin is threshold + 10 %: what a value must reach again to clear a low-balance alert.
func margin(threshold token.Amount) token.Amount {
	return threshold.Add(token.Of(new(big.Int).Div(threshold.Big(), big.NewInt(10))))
}

// nativeVerdict: below the threshold raises; 10 % above it clears.
func nativeVerdict(native, threshold token.Amount) verdict {
	return verdict{raise: native.Cmp(threshold) < 0, clear: native.Cmp(margin(threshold)) >= 0,
		detail: fmt.Sprintf("the native balance %s is below %s, too little to pay gas for long (alertNativeBalance)", native, threshold)}
}

// depletedVerdict: an open outgoing channel that can pay less than the threshold raises (what
// it can pay: Available where known, else its balance on chain); every one 10 % above clears.
func depletedVerdict(out []channels.Channel, threshold token.Amount, available func(common.Address) (uint256.Int, bool)) verdict {
	var low []string
	clear := true
	for _, c := range out {
		if c.Status != channels.Open || c.Balance == nil {
			continue
		}
		b := token.Of(c.Balance)
		if available != nil {
			if a, ok := available(c.Destination); ok {
				b = token.FromUint256(&a)
			}
		}
		if b.Cmp(threshold) < 0 {
			low = append(low, c.Destination.Hex())
		}
		if b.Cmp(margin(threshold)) < 0 {
			clear = false
		}
	}
	return verdict{raise: len(low) > 0, clear: clear, subjects: bounded(low),
		detail: fmt.Sprintf("%d open outgoing channels can pay less than %s tokens (alertChannelBalance)", len(low), threshold)}
}

// unreachableVerdict: a peer with an open channel either way that the transport does not know,
// marks down or finds below UnreachableQuality raises; every one reachable clears.
func unreachableVerdict(in, out []channels.Channel, known []peers.Info, addressOf func(peer.ID) (common.Address, error)) verdict {
	byAddr := map[common.Address]peers.Info{}
	for _, p := range known {
		if addr, err := addressOf(p.ID); err == nil {
			byAddr[addr] = p
		}
	}
	counterparts := map[common.Address]bool{}
	for _, c := range in {
		if c.Status == channels.Open {
			counterparts[c.Source] = true
		}
	}
	for _, c := range out {
		if c.Status == channels.Open {
			counterparts[c.Destination] = true
		}
	}
	var down []string
	for addr := range counterparts {
		p, ok := byAddr[addr]
		switch {
		case !ok:
			down = append(down, addr.Hex())
		case p.Down || p.Quality < UnreachableQuality:
			down = append(down, p.ID.String())
		}
	}
	slices.Sort(down)
	return verdict{raise: len(down) > 0, clear: len(down) == 0, subjects: bounded(down),
		detail: fmt.Sprintf("%d of %d channel peers unreachable by the heartbeat", len(down), len(counterparts))}
}

func bounded(s []string) []string {
	slices.Sort(s)
	if len(s) > MaxSubjects {
		s = s[:MaxSubjects]
	}
	return s
}
