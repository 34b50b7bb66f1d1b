package node

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
)

// defaultChannelFunding is what the strategy funds each channel with when no flag or setting
// says: 10 tokens, 1,000 relayer payments of 0.01.
var defaultChannelFunding = new(big.Int).Mul(big.NewInt(10), unit)

// Defaults of the auto-redeem settings: redeem once 100 tickets or 1 token wait.
var (
	defaultAutoRedeemCount = 100
	defaultAutoRedeemValue = new(big.Int).Set(unit)
	// defaultAutoRedeemMaxGasShare: an automatic redemption spends at most 5 % of what it
	// redeems on gas.
	defaultAutoRedeemMaxGasShare = 0.05
)

// Settings are the operator's settings of a running node (GET/PUT /api/v2/settings, admin
// `settings`): kept in the store, so they survive a restart; the flags give only the values of a
// node's first start.
type Settings struct {
	Strategy         strategy.Name
	IncludeRecipient bool
	MaxChannels      int
	ChannelFunding   *big.Int // smallest unit
	AutoRedeem       bool
	AutoRedeemCount  int
	AutoRedeemValue  *big.Int // smallest unit
	// AutoRedeemMaxGasShare is the most an automatic redemption's gas may cost as a share of
	// the value it redeems (one native unit counted as one token); 0: no limit.
	AutoRedeemMaxGasShare float64
	MixDelayMean          time.Duration
	CoverRate             float64 // loop cover packets per second
	Relayers              int     // relayers of the node's own messages and cover loops
	// WinProb is the win probability (the tickets' 56-bit field) of the tickets this node
	// signs; 0 follows the network minimum the contract publishes.
	WinProb uint64
}

// Errors of settings.update.
var (
	errUnknownSetting  = errors.New("no such setting")
	errBadSettingValue = errors.New("bad setting value")
)

// settingDef is one setting: its name, help text, and how its value reads and writes as JSON
// (the store and the REST API) and as text (admin commands; amounts in tokens there).
type settingDef struct {
	name, help string
	get        func(Settings) any
	set        func(*Settings, json.RawMessage) error
	text       func(Settings) string
	parse      func(string) (json.RawMessage, error) // admin command text → JSON value
}

var settingDefs = []settingDef{
	{
		name: "strategy", help: "channel strategy: passive opens nothing, promiscuous opens and closes channels by peer quality (passive|promiscuous)",
		get: func(s Settings) any { return string(s.Strategy) },
		set: func(s *Settings, v json.RawMessage) error {
			var name string
			if err := json.Unmarshal(v, &name); err != nil {
				return errors.New("must be a string: passive or promiscuous")
			}
			n, err := strategy.Parse(name)
			if err != nil {
				return err
			}
			s.Strategy = n
			return nil
		},
		text:  func(s Settings) string { return string(s.Strategy) },
		parse: func(t string) (json.RawMessage, error) { return json.Marshal(t) },
	},
	boolSetting("includeRecipient", "prefix this node's PeerId to messages sent with the admin send (true|false)",
		func(s *Settings) *bool { return &s.IncludeRecipient }),
	intSetting("maxChannels", "outgoing channels the promiscuous strategy keeps open", 1, config.MaxChannelsLimit,
		func(s *Settings) *int { return &s.MaxChannels }),
	amountSetting("channelFunding", "what each channel the strategy opens is funded with (REST: smallest unit; here: tokens)",
		func(s *Settings) **big.Int { return &s.ChannelFunding }),
	boolSetting("autoRedeem", "redeem acknowledged tickets by themselves: past autoRedeemCount or autoRedeemValue, and when an incoming channel starts closing (true|false)",
		func(s *Settings) *bool { return &s.AutoRedeem }),
	intSetting("autoRedeemCount", "unredeemed tickets that make autoRedeem redeem (0: no count limit)", 0, 1_000_000,
		func(s *Settings) *int { return &s.AutoRedeemCount }),
	{
		name: "autoRedeemMaxGasShare", help: "the most an automatic redemption's gas may cost, as a share of the value it redeems, counting one unit of the native currency as one token (0 to 1; 0.05: 5 %; 0: no limit)",
		get: func(s Settings) any { return s.AutoRedeemMaxGasShare },
		set: func(s *Settings, v json.RawMessage) error {
			var r float64
			if err := json.Unmarshal(v, &r); err != nil {
				var str string
				if json.Unmarshal(v, &str) != nil {
					return errBadGasShare
				}
				if r, err = strconv.ParseFloat(strings.TrimSpace(str), 64); err != nil {
					return errBadGasShare
				}
			}
			if !(r >= 0 && r <= 1) {
				return errBadGasShare
			}
			s.AutoRedeemMaxGasShare = r
			return nil
		},
		text: func(s Settings) string { return strconv.FormatFloat(s.AutoRedeemMaxGasShare, 'f', -1, 64) },
		parse: func(t string) (json.RawMessage, error) {
			r, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
			if err != nil || !(r >= 0 && r <= 1) {
				return nil, errBadGasShare
			}
			return json.Marshal(r)
		},
	},
	amountSetting("autoRedeemValue", "worth of unredeemed tickets that makes autoRedeem redeem (REST: smallest unit; here: tokens)",
		func(s *Settings) **big.Int { return &s.AutoRedeemValue }),
	{
		name: "mixDelayMean", help: fmt.Sprintf("mean of the exponential mixing delay of each relayed packet, on top of --mixDelayMin and capped at --mixDelayMax (a duration such as 20ms, 0 to %v; 0: uniform up to --mixDelayMax)", config.MaxMixDelayMean),
		get: func(s Settings) any { return s.MixDelayMean.String() },
		set: func(s *Settings, v json.RawMessage) error {
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				return errBadMixDelayMean
			}
			d, err := parseMixDelayMean(str)
			if err != nil {
				return err
			}
			s.MixDelayMean = d
			return nil
		},
		text: func(s Settings) string { return s.MixDelayMean.String() },
		parse: func(t string) (json.RawMessage, error) {
			if _, err := parseMixDelayMean(t); err != nil {
				return nil, err
			}
			return json.Marshal(t)
		},
	},
	{
		name: "winProb", help: "win probability of the tickets this node signs, as a probability such as 0.05 (never below the network minimum), or min to follow the network minimum the contract publishes; a ticket's face value is its price divided by it",
		get: func(s Settings) any { return winProbText(s.WinProb) },
		set: func(s *Settings, v json.RawMessage) error {
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				return errBadWinProb
			}
			w, err := parseWinProbSetting(str)
			if err != nil {
				return err
			}
			s.WinProb = w
			return nil
		},
		text: func(s Settings) string { return winProbText(s.WinProb) },
		parse: func(t string) (json.RawMessage, error) {
			if _, err := parseWinProbSetting(t); err != nil {
				return nil, err
			}
			return json.Marshal(t)
		},
	},
	intSetting("relayers", "relayers of this node's own messages and cover loops (2 or 3; where no such path exists the other count is tried)", config.MinRelayers, config.MaxRelayers,
		func(s *Settings) *int { return &s.Relayers }),
	{
		name: "coverRate", help: fmt.Sprintf("loop cover packets per second this node sends over random paths back to itself, paid like messages (0 to %d; 0: off)", config.MaxCoverRate),
		get: func(s Settings) any { return s.CoverRate },
		set: func(s *Settings, v json.RawMessage) error {
			var r float64
			if err := json.Unmarshal(v, &r); err != nil {
				var str string
				if json.Unmarshal(v, &str) != nil {
					return errBadCoverRate
				}
				if r, err = parseCoverRate(str); err != nil {
					return err
				}
			}
			if !(r >= 0 && r <= config.MaxCoverRate) {
				return errBadCoverRate
			}
			s.CoverRate = r
			return nil
		},
		text: func(s Settings) string { return strconv.FormatFloat(s.CoverRate, 'f', -1, 64) },
		parse: func(t string) (json.RawMessage, error) {
			r, err := parseCoverRate(t)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r)
		},
	},
}

var (
	errBadMixDelayMean = fmt.Errorf("must be a duration such as 20ms from 0 to %v", config.MaxMixDelayMean)
	errBadCoverRate    = fmt.Errorf("must be a number of packets per second from 0 to %d", config.MaxCoverRate)
)

// parseMixDelayMean reads a mixDelayMean value: a Go duration from 0 to config.MaxMixDelayMean.
func parseMixDelayMean(t string) (time.Duration, error) {
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 || d > config.MaxMixDelayMean {
		return 0, errBadMixDelayMean
	}
	return d, nil
}

// parseCoverRate reads a coverRate value: a decimal number from 0 to config.MaxCoverRate.
func parseCoverRate(t string) (float64, error) {
	r, err := strconv.ParseFloat(t, 64)
	if err != nil || !(r >= 0 && r <= config.MaxCoverRate) {
		return 0, errBadCoverRate
	}
	return r, nil
}

// boolSetting is a true|false setting.
func boolSetting(name, help string, field func(*Settings) *bool) settingDef {
	return settingDef{
		name: name, help: help,
		get: func(s Settings) any { return *field(&s) },
		set: func(s *Settings, v json.RawMessage) error {
			if err := json.Unmarshal(v, field(s)); err != nil {
				return errors.New("must be true or false")
			}
			return nil
		},
		text: func(s Settings) string { return strconv.FormatBool(*field(&s)) },
		parse: func(t string) (json.RawMessage, error) {
			b, err := strconv.ParseBool(t)
			if err != nil {
				return nil, errors.New("must be true or false")
			}
			return json.Marshal(b)
		},
	}
}

// intSetting is a whole number from lo to hi.
func intSetting(name, help string, lo, hi int, field func(*Settings) *int) settingDef {
	bad := fmt.Errorf("must be a whole number from %d to %d", lo, hi)
	return settingDef{
		name: name, help: fmt.Sprintf("%s (%d-%d)", help, lo, hi),
		get: func(s Settings) any { return *field(&s) },
		set: func(s *Settings, v json.RawMessage) error {
			var n int
			if err := json.Unmarshal(v, &n); err != nil || n < lo || n > hi {
				return bad
			}
			*field(s) = n
			return nil
		},
		text: func(s Settings) string { return strconv.Itoa(*field(&s)) },
		parse: func(t string) (json.RawMessage, error) {
			if _, err := strconv.Atoi(t); err != nil {
				return nil, bad
			}
			return json.RawMessage(t), nil
		},
	}
}

// amountSetting is a positive amount of tokens: a decimal string in the smallest unit as JSON,
// whole or decimal tokens as command text.
func amountSetting(name, help string, field func(*Settings) **big.Int) settingDef {
	return settingDef{
		name: name, help: help,
		get: func(s Settings) any { return (*field(&s)).String() },
		set: func(s *Settings, v json.RawMessage) error {
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				return errors.New("must be a decimal string in the smallest unit")
			}
			amount, ok := new(big.Int).SetString(str, 10)
			if !ok || amount.Sign() <= 0 || len(str) > 40 {
				return errors.New("must be a positive decimal string in the smallest unit")
			}
			*field(s) = amount
			return nil
		},
		text: func(s Settings) string { return formatTokens(*field(&s)) + " tokens" },
		parse: func(t string) (json.RawMessage, error) {
			amount, err := parseTokens(t)
			if err != nil {
				return nil, err
			}
			return json.Marshal(amount.String())
		},
	}
}

func settingByName(name string) (settingDef, bool) {
	for _, d := range settingDefs {
		if d.name == name {
			return d, true
		}
	}
	return settingDef{}, false
}

// settings holds the node's Settings and keeps them in the store.
type settings struct {
	db         *store.DB
	kick       chan struct{} // a changed setting ticks the strategy at once
	redeemKick chan struct{} // and makes the auto-redeem strategy look at once
	coverKick  chan struct{} // and the cover traffic take a changed rate at once
	// mixMin and mixMax are --mixDelayMin and --mixDelayMax, which a mixDelayMean must fit.
	mixMin, mixMax time.Duration
	// onChange, when set, applies changed settings that act at once (the mixing delay); it
	// runs after they are stored, under the settings' lock.
	onChange func(Settings)

	mu sync.RWMutex
	v  Settings
	// winProb mirrors v.WinProb for the ticket path (outWinProb).
	winProb atomic.Uint64
}

// loadSettings reads the stored settings; what the store does not hold comes from cfg.
func loadSettings(db *store.DB, cfg config.Config) (*settings, error) {
	v := Settings{Strategy: strategy.Passive, MaxChannels: strategy.DefaultMaxChannels, ChannelFunding: defaultChannelFunding,
		AutoRedeemCount: defaultAutoRedeemCount, AutoRedeemValue: defaultAutoRedeemValue,
		AutoRedeemMaxGasShare: defaultAutoRedeemMaxGasShare,
		MixDelayMean:          cfg.MixDelayMean, CoverRate: cfg.CoverRate, Relayers: cmp.Or(cfg.Relayers, config.DefaultRelayers)}
	if cfg.Strategy != "" {
		n, err := strategy.Parse(cfg.Strategy)
		if err != nil {
			return nil, &StartupError{"strategy", err}
		}
		v.Strategy = n
	}
	if cfg.MaxChannels != 0 {
		v.MaxChannels = cfg.MaxChannels
	}
	if cfg.ChannelFunding != "" {
		amount, err := parseTokens(cfg.ChannelFunding)
		if err != nil {
			return nil, &StartupError{"channelFunding", err}
		}
		v.ChannelFunding = amount
	}
	stored, err := db.Settings()
	if err != nil {
		return nil, &StartupError{"data", err}
	}
	for name, raw := range stored {
		if d, ok := settingByName(name); ok {
			if err := d.set(&v, raw); err != nil {
				return nil, &StartupError{"data", fmt.Errorf("stored setting %s: %w", name, err)}
			}
		}
	}
	if _, err := relay.MixingFor(cfg.MixDelayMin, v.MixDelayMean, cfg.MixDelayMax); err != nil {
		// A mean stored earlier that the flags of this start cannot cap.
		return nil, &StartupError{"mixDelayMax", fmt.Errorf("the stored mixDelayMean setting %v does not fit: %w", v.MixDelayMean, err)}
	}
	st := &settings{db: db, v: v, mixMin: cfg.MixDelayMin, mixMax: cfg.MixDelayMax,
		kick: make(chan struct{}, 1), redeemKick: make(chan struct{}, 1), coverKick: make(chan struct{}, 1)}
	st.winProb.Store(v.WinProb)
	return st, nil
}

// outWinProb is the winProb setting, read on every ticket the node signs: an atomic load, not
// a copy of every setting under the lock.
func (s *settings) outWinProb() uint64 { return s.winProb.Load() }

// get returns the current settings.
func (s *settings) get() Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.v
}

// update applies the JSON values named in vals, all or none, and stores them.
func (s *settings) update(vals map[string]json.RawMessage) (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.v
	enc := make(map[string][]byte, len(vals))
	for name, raw := range vals {
		d, ok := settingByName(name)
		if !ok {
			return s.v, settingError{errUnknownSetting, fmt.Sprintf("no setting %q (%s)", name, strings.Join(settingNames(), ", "))}
		}
		if err := d.set(&next, raw); err != nil {
			return s.v, settingError{errBadSettingValue, fmt.Sprintf("%s %v", name, err)}
		}
		b, _ := json.Marshal(d.get(next))
		enc[name] = b
	}
	if _, err := s.mixing(next); err != nil {
		return s.v, settingError{errBadSettingValue, fmt.Sprintf("mixDelayMean %v", err)}
	}
	if err := s.db.PutSettings(enc); err != nil {
		return s.v, err
	}
	s.v = next
	s.winProb.Store(next.WinProb)
	if s.onChange != nil {
		s.onChange(next)
	}
	for _, k := range []chan struct{}{s.kick, s.redeemKick, s.coverKick} {
		select {
		case k <- struct{}{}:
		default:
		}
	}
	return next, nil
}

// mixing is the relay's mixing delay under v: its mean between the flags' minimum and cap.
func (s *settings) mixing(v Settings) (relay.Mixing, error) {
	m, err := relay.MixingFor(s.mixMin, v.MixDelayMean, s.mixMax)
	if err != nil {
		return m, fmt.Errorf("does not fit --mixDelayMin %v and --mixDelayMax %v: the cap must be at least the minimum plus the mean", s.mixMin, s.mixMax)
	}
	return m, nil
}

// settingError is a refused setting: kind is errUnknownSetting or errBadSettingValue, msg says
// why in words for the operator.
type settingError struct {
	kind error
	msg  string
}

func (e settingError) Error() string { return e.msg }
func (e settingError) Unwrap() error { return e.kind }

// asJSON is the settings as GET /api/v2/settings shows them.
func (s Settings) asJSON() map[string]any {
	out := make(map[string]any, len(settingDefs))
	for _, d := range settingDefs {
		out[d.name] = d.get(s)
	}
	return out
}

func settingNames() []string {
	names := make([]string, len(settingDefs))
	for i, d := range settingDefs {
		names[i] = d.name
	}
	return names
}

// redeemPolicy is the auto-redeem policy the settings describe.
func (s Settings) redeemPolicy() strategy.RedeemPolicy {
	return strategy.RedeemPolicy{Enabled: s.AutoRedeem, Count: uint64(s.AutoRedeemCount), Value: s.AutoRedeemValue,
		MaxGasShare: s.AutoRedeemMaxGasShare}
}

// firstTicket is the most a message's first ticket is worth, with the largest padding.
var firstTicket = tickets.PaddedAmount(path.DefaultRelayers, tickets.PadMax)

// policy is the strategy policy the settings describe.
func (s Settings) policy() strategy.Policy {
	return strategy.Policy{
		Strategy: s.Strategy, MaxChannels: s.MaxChannels, ChannelFunding: s.ChannelFunding,
		// A channel that cannot pay a message's first ticket is depleted.
		DepletedBelow: firstTicket.ToBig(),
	}
}

// applySettings makes the settings that act at once take effect: the relay's mixing delay.
// (The cover traffic reads its rate itself, woken by coverKick.)
func (n *Node) applySettings(v Settings) {
	m, err := n.settings.mixing(v)
	if err == nil {
		err = n.msg.relay.SetMixing(m)
	}
	if err != nil { // update checked the mixing before storing it
		n.log.Error("mixing delay setting not applied", "err", err)
	}
}

// errBadGasShare is the autoRedeemMaxGasShare setting's refusal.
var errBadGasShare = errors.New("must be a number from 0 to 1, such as 0.05")

// errBadWinProb is the winProb setting's refusal.
var errBadWinProb = errors.New(`must be "min" or a probability in (0, 1] such as "0.01"`)

// parseWinProbSetting reads the winProb setting: "min" (0, the network minimum) or a
// probability.
func parseWinProbSetting(t string) (uint64, error) {
	if strings.TrimSpace(t) == "min" {
		return 0, nil
	}
	w, err := tickets.ParseWinProb(strings.TrimSpace(t))
	if err != nil {
		return 0, errBadWinProb
	}
	return w, nil
}

// winProbText renders the winProb setting.
func winProbText(w uint64) string {
	if w == 0 {
		return "min"
	}
	return tickets.FormatWinProb(w)
}
