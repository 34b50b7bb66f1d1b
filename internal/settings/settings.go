// Package settings owns the operator's settings of a running node (GET/PUT /api/v2/settings,
// the admin `settings` command): each setting is defined once, in defs.go, with its name, its
// range, its default and its documentation, and read and written there as JSON (the REST API
// and the store) and as text (the admin console, where amounts are whole tokens). Settings
// keeps the current values, stores every change through Store before it takes effect, and tells
// its subscribers.
//
// The flags that give a setting's value at start (--mixDelayMean, --relayers, …) take their
// defaults and ranges from here; once the setting was changed, the stored value wins.
// docs/SETTINGS.md is generated from the definitions (Markdown, go generate).
//
// Pure: it does no I/O itself (the store is an interface) and imports only the pure relayd
// packages strategy, tickets and token, and exit for its rules' parser (exitAllow).
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// Values are the settings of a node.
type Values struct {
	Strategy         strategy.Name
	IncludeRecipient bool
	MaxChannels      int
	ChannelFunding   token.Amount
	AutoRedeem       bool
	AutoFund         bool // top up outgoing channels below half of ChannelFunding
	AutoRedeemCount  int
	AutoRedeemValue  token.Amount
	// AutoRedeemMaxGasShare is the most an automatic redemption's gas may cost as a share of the
	// value it redeems (one native unit counted as one token); 0: no limit.
	AutoRedeemMaxGasShare float64
	MixDelayMean          time.Duration
	CoverRate             float64 // loop cover packets per second
	SendRate              float64 // packets per second of the constant-rate stream; 0: off
	Relayers              int     // relayers of the node's own messages and cover loops
	MaxMessageBytes       int     // the longest message body the node accepts to send
	// WinProb is the win probability (the tickets' 56-bit field) of the tickets this node
	// signs; 0 follows the network minimum the contract publishes.
	WinProb uint64
	// ExitAllow are the exitAllow rules in their canonical form (exit.Rule.String), joined by
	// commas (no rule holds one), so that Values stay comparable; empty: the node is no exit.
	// ExitRules reads them.
	ExitAllow string
	// SOCKS5Listen is where the SOCKS5 entry listens, a loopback host:port; empty: off.
	// SOCKS5Exit names the exit of its sessions (a PeerId or an alias, resolved at each CONNECT).
	SOCKS5Listen string
	SOCKS5Exit   string
	// The alerts' thresholds (internal/alerts, docs/COCKPIT.md): the native balance and an open
	// outgoing channel's balance below which an alert is raised, the indexer's lag in blocks, and
	// how long a condition must hold before an alert is raised or cleared, in seconds.
	AlertNativeBalance  token.Amount
	AlertChannelBalance token.Amount
	AlertIndexerLag     int
	AlertHoldSeconds    int
}

// Store keeps the settings: name → the setting's JSON value. *store.DB implements it.
type Store interface {
	Settings() (map[string][]byte, error)
	// PutSettings stores the named values in one transaction.
	PutSettings(map[string][]byte) error
}

// Config configures Open. Store is required.
type Config struct {
	Store Store
	// Initial are the values the flags give; for every setting the store holds, the stored
	// value wins.
	// Zero: Defaults().
	Initial *Values
	// Check, when set, refuses values that do not fit the node's other configuration (a
	// mixDelayMean the flags' cap cannot hold), for a stored value at Open and for every change;
	// its error's text says why to the operator.
	Check func(Values) error
	// MinWinProb, when set, is the network's minimum win probability now: a winProb below it is
	// refused.
	MinWinProb func() uint64
}

// Settings holds a node's settings. Its methods are safe for concurrent use.
type Settings struct {
	store      Store
	check      func(Values) error
	minWinProb func() uint64

	mu       sync.RWMutex
	v        Values
	watchers []func(Values)
	subs     []chan struct{}
	// winProb mirrors v.WinProb for the ticket path (WinProb), which reads it per ticket.
	winProb atomic.Uint64
}

// Open reads the stored settings over cfg.Initial. A stored value that no longer parses, or
// that Check refuses, is an error that names the setting.
func Open(cfg Config) (*Settings, error) {
	if cfg.Store == nil {
		return nil, errors.New("settings: Store is required")
	}
	v := Defaults()
	if cfg.Initial != nil {
		v = *cfg.Initial
	}
	stored, err := cfg.Store.Settings()
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(stored)) {
		if d, ok := byName(name); ok {
			if err := d.setJSON(&v, stored[name]); err != nil {
				return nil, fmt.Errorf("stored setting %s: %w", name, err)
			}
		}
	}
	if cfg.Check != nil {
		if err := cfg.Check(v); err != nil {
			return nil, fmt.Errorf("the stored settings do not fit: %w", err)
		}
	}
	s := &Settings{store: cfg.Store, check: cfg.Check, minWinProb: cfg.MinWinProb, v: v}
	s.winProb.Store(v.WinProb)
	return s, nil
}

// Get returns the current settings.
func (s *Settings) Get() Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.v
}

// WinProb is the winProb setting (0: follow the network minimum): an atomic load, for the
// ticket path.
func (s *Settings) WinProb() uint64 { return s.winProb.Load() }

// Subscribe returns a channel that receives a value (without blocking Update: it holds one)
// after every change of the settings.
func (s *Settings) Subscribe() <-chan struct{} {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs = append(s.subs, c)
	s.mu.Unlock()
	return c
}

// Watch calls fn with the new values after every change, before Update returns, under the
// settings' lock (fn must not call back into s): for what must take effect at once.
func (s *Settings) Watch(fn func(Values)) {
	s.mu.Lock()
	s.watchers = append(s.watchers, fn)
	s.mu.Unlock()
}

// Update sets the settings named in vals to their JSON values, all or none, stores them, and
// returns every setting. A name it does not know is ErrUnknown, a value it refuses
// ErrInvalid (both as *Error).
func (s *Settings) Update(vals map[string]json.RawMessage) (Values, error) {
	return s.update(func(next *Values) (map[string]bool, error) {
		names := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(vals)) {
			d, ok := byName(name)
			if !ok {
				return nil, unknown(name)
			}
			if err := d.setJSON(next, vals[name]); err != nil {
				return nil, &Error{Name: name, Reason: err.Error(), kind: ErrInvalid}
			}
			names[name] = true
		}
		return names, nil
	})
}

// UpdateText sets one setting from its text form (the admin console's: amounts in whole
// tokens), stores it, and returns every setting.
func (s *Settings) UpdateText(name, text string) (Values, error) {
	return s.update(func(next *Values) (map[string]bool, error) {
		d, ok := byName(name)
		if !ok {
			return nil, unknown(name)
		}
		if err := d.setText(next, text); err != nil {
			return nil, &Error{Name: name, Reason: err.Error(), kind: ErrInvalid}
		}
		return map[string]bool{name: true}, nil
	})
}

// update applies change to a copy of the values, checks and stores what it changed, then makes
// it current and tells the watchers and subscribers.
func (s *Settings) update(change func(*Values) (map[string]bool, error)) (Values, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.v
	names, err := change(&next)
	if err != nil {
		return s.v, err
	}
	if names["winProb"] && next.WinProb != 0 && s.minWinProb != nil {
		if min := s.minWinProb(); next.WinProb < min {
			return s.v, &Error{Name: "winProb", kind: ErrInvalid,
				Reason: fmt.Sprintf("must not be below the network minimum %s (or min to follow it)", tickets.FormatWinProb(min))}
		}
	}
	if s.check != nil {
		if err := s.check(next); err != nil {
			return s.v, &Error{Name: "mixDelayMean", Reason: err.Error(), kind: ErrInvalid}
		}
	}
	enc := make(map[string][]byte, len(names))
	for name := range names {
		d, _ := byName(name)
		b, err := json.Marshal(d.json(next))
		if err != nil {
			return s.v, err
		}
		enc[name] = b
	}
	if err := s.store.PutSettings(enc); err != nil {
		return s.v, err
	}
	s.v = next
	s.winProb.Store(next.WinProb)
	for _, fn := range s.watchers {
		fn(next)
	}
	for _, c := range s.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	return next, nil
}

// JSON is v as GET /api/v2/settings shows it: name → JSON value.
func (v Values) JSON() map[string]any {
	out := make(map[string]any, len(defs))
	for _, d := range defs {
		out[d.Name] = d.json(v)
	}
	return out
}

// RedeemPolicy is the auto-redeem policy the settings describe.
func (v Values) RedeemPolicy() strategy.RedeemPolicy {
	return strategy.RedeemPolicy{Enabled: v.AutoRedeem, Count: uint64(v.AutoRedeemCount), Value: v.AutoRedeemValue.Big(),
		MaxGasShare: v.AutoRedeemMaxGasShare}
}

// Policy is the channel strategy's policy the settings describe. A channel that cannot pay the
// first ticket of a message over the node's relayers, with the largest padding, is depleted.
func (v Values) Policy() strategy.Policy {
	depleted := tickets.PaddedAmount(v.Relayers, tickets.PadMax)
	return strategy.Policy{Strategy: v.Strategy, MaxChannels: v.MaxChannels, ChannelFunding: v.ChannelFunding.Big(),
		DepletedBelow: depleted.ToBig(), TopUp: v.AutoFund}
}

// ExitRules are the exitAllow rules (none: the node is no exit). The settings took them
// through exit.ParseRules, so that only a Values built by hand fails.
func (v Values) ExitRules() ([]exit.Rule, error) { return exit.ParseRules(exitList(v.ExitAllow)) }

// SetText returns v with one setting set from its text form (the admin console's and the
// flags'), without storing it: for the flags.
func SetText(v Values, name, text string) (Values, error) {
	d, ok := byName(name)
	if !ok {
		return v, unknown(name)
	}
	if err := d.setText(&v, text); err != nil {
		return v, &Error{Name: name, Reason: err.Error(), kind: ErrInvalid}
	}
	return v, nil
}
