package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// The ranges of the settings that have one (the flags use them too).
const (
	MaxChannelsLimit   = 100
	MaxAutoRedeemCount = 1_000_000
	MaxMixDelayMean    = 10 * time.Second
	MaxCoverRate       = 100
	MaxSendRate        = 100
	MinRelayers        = 2
	MaxRelayers        = 3
	// MaxMessageBytesLimit is the highest ceiling of a message body the maxMessageBytes setting
	// allows (16 MiB: some 36,000 packets), MinMessageBytes the lowest (one packet's text).
	MaxMessageBytesLimit = 16 << 20
	MinMessageBytes      = 500
	// MaxAlertIndexerLag and MaxAlertHoldSeconds bound the alerts' lag and hold settings.
	MaxAlertIndexerLag  = 1_000_000
	MaxAlertHoldSeconds = 3600
)

// Defaults are the settings of a node whose flags and store say nothing: the one definition of
// every default.
func Defaults() Values {
	return Values{
		Strategy:    strategy.Passive,
		MaxChannels: strategy.DefaultMaxChannels,
		// 10,000 relayer payments of 0.01; at the default stream (10/s) a channel carries some
		// 0.1–0.3 tokens a second of first tickets and forwarded ones, so autoFund tops it up
		// every few minutes rather than every few seconds (each top-up is a transaction).
		ChannelFunding: token.Tokens(100),
		// Tokens circulate by themselves: what the node earns relaying is redeemed and funds its
		// channels again, which the constant-rate stream spends (docs/TRAFFIC.md, "Price").
		AutoRedeem:      true,
		AutoFund:        true,
		AutoRedeemCount: 100,
		AutoRedeemValue: token.One,
		// An automatic redemption spends at most 5 % of what it redeems on gas.
		AutoRedeemMaxGasShare: 0.05,
		// With 3 relayers and cover at 1/s, what PRIVACY.md measured to defeat a global passive
		// observer who times one message at a time, at a p50 of about 300 ms.
		MixDelayMean: 100 * time.Millisecond,
		CoverRate:    1,
		// What PRIVACY.md measured to hide who sends and receives from a patient observer at a
		// p50 of about 410 ms (issue 26).
		SendRate: 10,
		Relayers: 3,
		// 64 KiB: some 140 packets at 470 bytes of text each.
		MaxMessageBytes: 64 << 10,
		// Alerts (docs/COCKPIT.md): a redemption takes some 41,000 gas a batch, so 0.01 pays for
		// many at a few gwei; a channel below 1 token carries 100 messages more at the default
		// price; 20 blocks is well past the indexer's readiness lag (chain.ReadyLag).
		AlertNativeBalance:  token.Units(10_000_000_000_000_000),
		AlertChannelBalance: token.One,
		AlertIndexerLag:     20,
		AlertHoldSeconds:    60,
	}
}

// Def is one setting: its name and documentation, and how its value reads and writes as JSON
// (the REST API, the store) and as text (the admin console). docs/SETTINGS.md is generated from
// the defs (Markdown).
type Def struct {
	// Name is the setting's name in the API, the store and the console.
	Name string
	// Doc says what the setting does and which values it takes, in one sentence: What, then
	// Range in parentheses.
	Doc string
	// What says what the setting does.
	What string
	// Range says which values the setting takes.
	Range string
	// Flag is the relayd flag that gives the setting's value at start while the setting has
	// never been changed (once it was, the stored value wins); empty when no flag does.
	Flag string
	// Applies says when a changed value takes effect: every setting is stored and changes
	// while the node runs.
	Applies string

	json    func(Values) any
	setJSON func(*Values, json.RawMessage) error
	text    func(Values) string
	setText func(*Values, string) error
}

// about is what documents a setting; describe copies it into a Def.
type about struct{ what, rng, flag, applies string }

func (a about) describe(d Def) Def {
	d.What, d.Range, d.Flag, d.Applies = a.what, a.rng, a.flag, a.applies
	d.Doc = a.what + " (" + a.rng + ")"
	return d
}

// Text is the setting's value in v as the admin console shows it.
func (d Def) Text(v Values) string { return d.text(v) }

// Default is the setting's default as the admin console writes it.
func (d Def) Default() string { return d.text(Defaults()) }

// Defs lists every setting in the order the console shows them.
func Defs() []Def { return append([]Def(nil), defs...) }

// Names lists the settings' names.
func Names() []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

// Lookup finds a setting by name.
func Lookup(name string) (Def, bool) { return byName(name) }

func byName(name string) (Def, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// When a changed setting takes effect (Def.Applies).
const (
	appliesStrategy = "at once (the channel strategy runs a tick)"
	appliesRedeem   = "at once (auto-redeem looks at the tickets waiting)"
)

var defs = []Def{
	about{
		what:    "channel strategy: passive opens nothing (but a layered network's relayer its layer channels), promiscuous opens and closes channels by peer quality",
		rng:     "passive|promiscuous",
		flag:    "strategy",
		applies: appliesStrategy,
	}.describe(Def{
		Name: "strategy",
		json: func(v Values) any { return string(v.Strategy) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			s, err := jsonString(raw, errBadStrategy)
			if err != nil {
				return err
			}
			return setStrategy(v, s)
		},
		text:    func(v Values) string { return string(v.Strategy) },
		setText: setStrategy,
	}),
	boolDef("includeRecipient", about{what: "prefix this node's PeerId to messages sent with the admin send",
		applies: "the next admin send"},
		func(v *Values) *bool { return &v.IncludeRecipient }),
	intDef("maxChannels", about{what: "outgoing channels the promiscuous strategy keeps open", flag: "maxChannels",
		applies: appliesStrategy}, 1, MaxChannelsLimit,
		func(v *Values) *int { return &v.MaxChannels }),
	amountDef("channelFunding", about{what: "what each channel the strategy opens is funded with, and what autoFund tops a channel up to", flag: "channelFunding",
		applies: "the next channel the strategy opens or tops up"},
		func(v *Values) *token.Amount { return &v.ChannelFunding }),
	boolDef("autoRedeem", about{what: "redeem acknowledged tickets by themselves past autoRedeemCount or autoRedeemValue; a closing incoming channel's tickets are redeemed whatever this says",
		flag: "autoRedeem", applies: appliesRedeem},
		func(v *Values) *bool { return &v.AutoRedeem }),
	boolDef("autoFund", about{what: "top up an open outgoing channel to a reachable peer to channelFunding once its balance fell below half of it, from the node's token balance, under either strategy (docs/TRAFFIC.md, \"Price\")",
		flag: "autoFund", applies: appliesStrategy},
		func(v *Values) *bool { return &v.AutoFund }),
	intDef("autoRedeemCount", about{what: "unredeemed tickets that make autoRedeem redeem", rng: "0: no count limit",
		applies: appliesRedeem}, 0, MaxAutoRedeemCount,
		func(v *Values) *int { return &v.AutoRedeemCount }),
	floatDef("autoRedeemMaxGasShare", about{what: "the most an automatic redemption's gas may cost, as a share of the value it redeems, counting one unit of the native currency as one token",
		rng: "0 to 1; 0.05: 5 %; 0: no limit", applies: appliesRedeem},
		0, 1, errors.New("must be a number from 0 to 1, such as 0.05"),
		func(v *Values) *float64 { return &v.AutoRedeemMaxGasShare }),
	amountDef("autoRedeemValue", about{what: "worth of unredeemed tickets that makes autoRedeem redeem", applies: appliesRedeem},
		func(v *Values) *token.Amount { return &v.AutoRedeemValue }),
	about{
		what: "mean of the exponential mixing delay of each relayed packet, on top of --mixDelayMin and capped at --mixDelayMax",
		rng: fmt.Sprintf("a duration such as 20ms, 0 to %v and at most the delay's cap less --mixDelayMin; 0: uniform up to --mixDelayMax",
			MaxMixDelayMean),
		flag:    "mixDelayMean",
		applies: "the packets accepted from then on",
	}.describe(Def{
		Name: "mixDelayMean",
		json: func(v Values) any { return v.MixDelayMean.String() },
		setJSON: func(v *Values, raw json.RawMessage) error {
			s, err := jsonString(raw, errBadMixDelayMean)
			if err != nil {
				return err
			}
			return setMixDelayMean(v, s)
		},
		text:    func(v Values) string { return v.MixDelayMean.String() },
		setText: setMixDelayMean,
	}),
	about{
		what:    "win probability of the tickets this node signs; a ticket's face value is its price divided by it",
		rng:     "min to follow the network minimum the contract publishes, or a probability such as 0.05, never below that minimum",
		applies: "the next ticket this node signs",
	}.describe(Def{
		Name: "winProb",
		json: func(v Values) any { return winProbText(v.WinProb) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			s, err := jsonString(raw, errBadWinProb)
			if err != nil {
				return err
			}
			return setWinProb(v, s)
		},
		text:    func(v Values) string { return winProbText(v.WinProb) },
		setText: setWinProb,
	}),
	intDef("relayers", about{what: "relayers of this node's own messages and cover loops (where no such path exists the other count is tried)",
		flag: "relayers", applies: "the next message or cover loop"}, MinRelayers, MaxRelayers,
		func(v *Values) *int { return &v.Relayers }),
	floatDef("sendRate", about{what: "packets per second of this node's constant-rate stream (docs/TRAFFIC.md): at each tick of a Poisson process it sends the oldest message waiting, or else drop cover to a random node, and it re-emits every message it receives over relayers as a drop, so that what it sends and receives does not show in its traffic",
		rng: fmt.Sprintf("0 to %d; 0: off (messages go at once; no drop cover, no re-emission)", MaxSendRate), flag: "sendRate",
		applies: "at once (the next interval is drawn at the new rate)"},
		0, MaxSendRate, fmt.Errorf("must be a number of packets per second from 0 to %d", MaxSendRate),
		func(v *Values) *float64 { return &v.SendRate }),
	intDef("maxMessageBytes", about{what: "the longest message body, in bytes, that POST /messages and the admin send command accept; a longer body is refused (413)",
		applies: "the next message"},
		MinMessageBytes, MaxMessageBytesLimit, func(v *Values) *int { return &v.MaxMessageBytes }),
	floatDef("coverRate", about{what: "loop cover packets per second this node sends over random paths back to itself, paid like messages",
		rng: fmt.Sprintf("0 to %d; 0: off", MaxCoverRate), flag: "coverRate",
		applies: "at once (the next interval is drawn at the new rate)"},
		0, MaxCoverRate, fmt.Errorf("must be a number of packets per second from 0 to %d", MaxCoverRate),
		func(v *Values) *float64 { return &v.CoverRate }),
	about{
		what: "the destinations this node connects to as an exit for the sessions that reach it (docs/SESSIONS.md): " +
			"host:port patterns (`*.example.org:443`, `example.org:*`, `*:80`, `example.org:8000-8100`), address ranges with an optional port " +
			"(`10.0.0.0/8`, `192.0.2.0/24:53`, `[2001:db8::/32]:443`) and addresses (`127.0.0.1:8080`); it never dials a loopback, private, " +
			"link-local, unique-local, CGNAT, unspecified, multicast or broadcast address, whatever a name resolves to, unless an address " +
			"rule inside that range names it, nor the node's own ports unless a rule names that one port",
		rng: fmt.Sprintf("REST: a JSON array of rules; console and --exitAllow: the rules separated by commas, `none` for no rule; "+
			"at most %d rules; none: the node is no exit", exit.MaxRules),
		flag:    "exitAllow",
		applies: "the next connection the exit dials (those open stay)",
	}.describe(Def{
		Name: "exitAllow",
		json: func(v Values) any { return exitList(v.ExitAllow) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			if string(raw) == "null" {
				return errNull
			}
			var list []string
			if err := json.Unmarshal(raw, &list); err != nil {
				return errBadExitAllow
			}
			return setExitAllow(v, list)
		},
		text: func(v Values) string {
			if v.ExitAllow == "" {
				return "none"
			}
			return v.ExitAllow
		},
		setText: func(v *Values, s string) error {
			if s == "none" || s == "" {
				return setExitAllow(v, nil)
			}
			list := strings.Split(s, ",")
			for i := range list {
				list[i] = strings.TrimSpace(list[i])
			}
			return setExitAllow(v, list)
		},
	}),
	textDef("socks5Listen", about{what: "where the SOCKS5 entry listens (docs/SESSIONS.md): each CONNECT becomes a session to socks5Exit, its name " +
		"resolved there (socks5h); no authentication, so on the loopback interface only",
		rng: "a loopback host:port such as 127.0.0.1:1080 (port 0: a free one); `none` (REST: \"\"): off", flag: "socks5Listen",
		applies: "at once: a new address takes the next connections, those made through the old one go on"},
		errBadSOCKS5Listen, socks5Listen, func(v *Values) *string { return &v.SOCKS5Listen }),
	textDef("socks5Exit", about{what: "the exit (a PeerId or an alias) the SOCKS5 entry's sessions go to; without one, its CONNECTs are refused",
		rng: "a PeerId or an alias; `none` (REST: \"\"): none", flag: "socks5Exit",
		applies: "the next CONNECT"},
		errBadSOCKS5Exit, peerName, func(v *Values) *string { return &v.SOCKS5Exit }),
	amountDef("alertNativeBalance", about{what: "the native balance (gas) below which the nativeBalanceLow alert is raised (cleared 10 % above it; docs/COCKPIT.md)",
		applies: "the next evaluation of the alerts"},
		func(v *Values) *token.Amount { return &v.AlertNativeBalance }),
	amountDef("alertChannelBalance", about{what: "what an open outgoing channel can still pay (its balance less what its signed, unredeemed tickets are expected to draw) below which the channelDepleted alert is raised (cleared 10 % above it)",
		applies: "the next evaluation of the alerts"},
		func(v *Values) *token.Amount { return &v.AlertChannelBalance }),
	intDef("alertIndexerLag", about{what: "blocks the chain indexer may be behind the chain head before the indexerBehind alert (critical) is raised (cleared within half of it)",
		applies: "the next evaluation of the alerts"}, 1, MaxAlertIndexerLag,
		func(v *Values) *int { return &v.AlertIndexerLag }),
	intDef("alertHoldSeconds", about{what: "seconds an alert's condition must hold before the alert is raised, and its opposite before it is cleared",
		rng: "0: at the next evaluation", applies: "the next evaluation of the alerts"}, 0, MaxAlertHoldSeconds,
		func(v *Values) *int { return &v.AlertHoldSeconds }),
}

var (
	errBadStrategy     = errors.New("must be passive or promiscuous")
	errBadMixDelayMean = fmt.Errorf("must be a duration such as 20ms from 0 to %v", MaxMixDelayMean)
	errBadWinProb      = errors.New(`must be "min" or a probability in (0, 1] such as "0.01"`)
	errNull            = errors.New("must have a value, not null")
	errBadExitAllow    = errors.New("must be an array of rules (strings)")
	errBadSOCKS5Listen = errors.New(`must be a loopback host:port such as "127.0.0.1:1080", or "" for off`)
	errBadSOCKS5Exit   = errors.New(`must be a PeerId or an alias (at most 100 printable characters, no spaces), or "" for none`)
)

// textDef is a setting whose value is a string that ok accepts; empty (REST "", console none)
// is always accepted.
func textDef(name string, a about, bad error, ok func(string) bool, field func(*Values) *string) Def {
	set := func(v *Values, s string) error {
		if s != "" && !ok(s) {
			return bad
		}
		*field(v) = s
		return nil
	}
	return a.describe(Def{
		Name: name,
		json: func(v Values) any { return *field(&v) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			s, err := jsonString(raw, bad)
			if err != nil {
				return err
			}
			return set(v, s)
		},
		text: func(v Values) string {
			if *field(&v) == "" {
				return "none"
			}
			return *field(&v)
		},
		setText: func(v *Values, s string) error {
			if s == "none" {
				s = ""
			}
			return set(v, s)
		},
	})
}

// socks5Listen reports whether s is a host:port on the loopback interface (an IP literal, or
// localhost) with a port from 0 to 65535, as the SOCKS5 entry takes it (it has no
// authentication).
func socks5Listen(s string) bool {
	if port, ok := strings.CutPrefix(strings.ToLower(s), "localhost:"); ok {
		p, err := strconv.ParseUint(port, 10, 16)
		return err == nil && strconv.FormatUint(p, 10) == port
	}
	ap, err := netip.ParseAddrPort(s)
	return err == nil && ap.Addr().Zone() == "" && ap.Addr().Unmap().IsLoopback()
}

// peerName reports whether s can name a peer: a PeerId or an alias, printable ASCII without
// spaces, at most 100 bytes. Which peer it names is the node's to say, at each CONNECT.
func peerName(s string) bool {
	if len(s) > 100 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// setExitAllow reads the exitAllow rules and keeps them in their canonical form; a bad rule's
// error names its position and the parser's reason, never the rule (settings.Error's text).
func setExitAllow(v *Values, list []string) error {
	rules, err := exit.ParseRules(list)
	if err != nil {
		var re *exit.RuleError
		if errors.As(err, &re) {
			return fmt.Errorf("rule %d %s", re.Index, re.Reason)
		}
		return err
	}
	canonical := make([]string, len(rules))
	for i, r := range rules {
		canonical[i] = r.String()
	}
	v.ExitAllow = strings.Join(canonical, ",")
	return nil
}

// exitList splits the exitAllow rules kept in Values; no rule is an empty list, not nil (a JSON
// array).
func exitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// jsonString reads a JSON string; anything else is bad.
func jsonString(raw json.RawMessage, bad error) (string, error) {
	if string(raw) == "null" {
		return "", errNull
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", bad
	}
	return s, nil
}

// setStrategy takes a strategy's exact name: the API, the console and the flags spell it alike.
func setStrategy(v *Values, s string) error {
	switch n := strategy.Name(s); n {
	case strategy.Passive, strategy.Promiscuous:
		v.Strategy = n
		return nil
	}
	return errBadStrategy
}

// ParseMixDelayMean reads a mixDelayMean value: a Go duration from 0 to MaxMixDelayMean.
func ParseMixDelayMean(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxMixDelayMean || strings.TrimSpace(s) != s {
		return 0, errBadMixDelayMean
	}
	return d, nil
}

func setMixDelayMean(v *Values, s string) error {
	d, err := ParseMixDelayMean(s)
	if err == nil {
		v.MixDelayMean = d
	}
	return err
}

// setWinProb reads the winProb setting: "min" (0, the network minimum) or a probability.
func setWinProb(v *Values, s string) error {
	if s == "min" {
		v.WinProb = 0
		return nil
	}
	w, err := tickets.ParseWinProb(s)
	if err != nil || !decimal(s) {
		return errBadWinProb
	}
	v.WinProb = w
	return nil
}

func winProbText(w uint64) string {
	if w == 0 {
		return "min"
	}
	return tickets.FormatWinProb(w)
}

// boolDef is a true|false setting.
func boolDef(name string, a about, field func(*Values) *bool) Def {
	bad := errors.New("must be true or false")
	a.rng = "true|false"
	return a.describe(Def{
		Name: name,
		json: func(v Values) any { return *field(&v) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			var b bool
			if string(raw) == "null" {
				return errNull
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return bad
			}
			*field(v) = b
			return nil
		},
		text: func(v Values) string { return strconv.FormatBool(*field(&v)) },
		setText: func(v *Values, s string) error {
			switch s {
			case "true":
				*field(v) = true
			case "false":
				*field(v) = false
			default:
				return bad
			}
			return nil
		},
	})
}

// intDef is a whole number from lo to hi; a.rng, when set, follows the range.
func intDef(name string, a about, lo, hi int, field func(*Values) *int) Def {
	bad := fmt.Errorf("must be a whole number from %d to %d", lo, hi)
	set := func(v *Values, n int) error {
		if n < lo || n > hi {
			return bad
		}
		*field(v) = n
		return nil
	}
	rng := fmt.Sprintf("%d to %d", lo, hi)
	if a.rng != "" {
		rng += "; " + a.rng
	}
	a.rng = rng
	return a.describe(Def{
		Name: name,
		json: func(v Values) any { return *field(&v) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			var n int
			if string(raw) == "null" {
				return errNull
			}
			if err := json.Unmarshal(raw, &n); err != nil {
				return bad
			}
			return set(v, n)
		},
		text: func(v Values) string { return strconv.Itoa(*field(&v)) },
		setText: func(v *Values, s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || !decimal(s) {
				return bad
			}
			return set(v, n)
		},
	})
}

// floatDef is a decimal number from lo to hi (a.rng says so): a JSON number, or a decimal string
// (ASCII digits and at most one point: no sign, exponent or hexadecimal form).
func floatDef(name string, a about, lo, hi float64, bad error, field func(*Values) *float64) Def {
	set := func(v *Values, f float64) error {
		if !(f >= lo && f <= hi) { // also refuses NaN
			return bad
		}
		*field(v) = f
		return nil
	}
	parse := func(v *Values, s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !decimal(s) {
			return bad
		}
		return set(v, f)
	}
	return a.describe(Def{
		Name: name,
		json: func(v Values) any { return *field(&v) },
		setJSON: func(v *Values, raw json.RawMessage) error {
			if string(raw) == "null" {
				return errNull
			}
			var f float64
			if err := json.Unmarshal(raw, &f); err == nil {
				return set(v, f)
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return bad
			}
			return parse(v, s)
		},
		text:    func(v Values) string { return strconv.FormatFloat(*field(&v), 'f', -1, 64) },
		setText: parse,
	})
}

// amountDef is a positive amount of tokens: a decimal string in the smallest unit as JSON, whole
// or decimal tokens as text.
func amountDef(name string, a about, field func(*Values) *token.Amount) Def {
	bad := errors.New("must be a positive decimal string in the smallest unit")
	a.rng = "a positive amount; REST: in the smallest unit, console: in tokens"
	return a.describe(Def{
		Name: name,
		json: func(v Values) any { return field(&v).Units() },
		setJSON: func(v *Values, raw json.RawMessage) error {
			s, err := jsonString(raw, bad)
			if err != nil {
				return err
			}
			amt, err := token.ParseUnits(s)
			if err != nil || amt.IsZero() {
				return bad
			}
			*field(v) = amt
			return nil
		},
		text: func(v Values) string { return tokensText(*field(&v)) },
		setText: func(v *Values, s string) error {
			amt, err := token.ParsePositive(s)
			if err != nil {
				return errors.New("must be a positive amount of tokens such as 1 or 0.5")
			}
			*field(v) = amt
			return nil
		},
	})
}

// tokensText is an amount as the console writes it: "0.5 tokens", "1 token".
func tokensText(a token.Amount) string {
	if a == token.One {
		return "1 token"
	}
	return a.String() + " tokens"
}

// decimal reports whether s is written as a decimal number: ASCII digits, and a point only
// between digits (the OpenAPI document's pattern ^[0-9]+(\.[0-9]+)?$; what strconv also reads
// as hexadecimal, with exponents, signs or underscores is refused).
func decimal(s string) bool {
	whole, frac, point := strings.Cut(s, ".")
	return whole != "" && (!point || frac != "") && strings.TrimLeft(whole+frac, "0123456789") == ""
}
