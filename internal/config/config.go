// Package config owns the node's configuration: the flags of `relayd`, their
// environment variables (RELAYD_<UPPER_SNAKE>), the config file (--config, TOML
// or YAML, keys = flag names), read in that precedence with koanf (Load), the
// defaults, validation, and the effective configuration with each key's source
// and secrets redacted (Loaded.Effective). It does no I/O beyond reading the
// environment and files it is pointed at. Of relayd's packages it imports only internal/settings, whose
// definitions give the defaults and ranges of the flags that set a setting at
// a node's start, internal/origin, which checks --allowedHosts and
// --corsOrigins, internal/exit, which reads --service, and internal/token.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ethereum/go-ethereum/common"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/origin"
	"github.com/relayd/relayd/internal/settings"
)

// MinTokenLength is the shortest API token a node accepts.
const MinTokenLength = 8

// ClusterDefaultToken is the API token `relayd cluster` uses when none is
// given. It is published in the README, so a node refuses it whenever its API
// or admin server listens on a non-loopback address.
const ClusterDefaultToken = "relayd-local-cluster"

// publishedTokens are tokens anybody can read in public documentation.
var publishedTokens = []string{ClusterDefaultToken, "^^LOCAL-testing-123^^"}

// Config is everything a node needs to start. Fields are filled by Parse;
// Validate checks them.
type Config struct {
	APIToken          string        // required unless DisableAPIAuth; at least MinTokenLength characters
	DisableAPIAuth    bool          // serve REST and admin without a token; only with loopback API and admin hosts
	APIHost           string        // REST server host, default 127.0.0.1
	APIPort           int           // REST server port, default 3001
	AdminHost         string        // WebSocket admin server host, default 127.0.0.1
	AdminPort         int           // WebSocket admin server port, default 3000
	Host              string        // p2p listen address host:port, default 127.0.0.1:9091
	Identity          string        // keystore file; default <Data>/identity.json
	Password          string        // keystore password; required (set by LoadPasswordFile with PasswordFile)
	PasswordFile      string        // file holding the keystore password instead of Password; see LoadPasswordFile
	Init              bool          // create identity and data directory when missing
	Data              string        // data directory, default ./relayd-data
	Provider          string        // chain JSON-RPC URL; empty runs the node without a chain
	ChannelsContract  string        // address of the RelayChannels contract; "": the network's (NetworksFile or shipped)
	NetworksFile      string        // the operator's networks file (docs/NETWORKS.md); "": the shipped networks only
	ReindexOnNewChain bool          // drop the chain index and re-index when the provider serves another chain
	Confirmations     int           // blocks behind the head the indexer trusts events at; -1: chain.DefaultConfirmations
	WeakCrypto        bool          // light scrypt parameters for new keystores (tests, local clusters)
	Network           string        // relay network name, part of every protocol ID; default "local"
	Peers             []string      // static peer multiaddrs with /p2p/<id> (tests, private networks)
	Announce          []string      // multiaddrs announced on chain; nil: the reachable ones the node listens on
	HeartbeatInterval time.Duration // how often every known peer is pinged
	MixDelayMin       time.Duration // per-hop mixing delay, lower bound
	MixDelayMean      time.Duration // initial mixDelayMean setting: mean of the exponential per-hop delay (settings.Defaults); 0: uniform up to MixDelayMax
	MixDelayMax       time.Duration // cap of each per-hop delay, at most 30 s (relay.MaxMixDelay); 0: min + 10 × the mean, at most 30 s (relay.MixingFor)
	CoverRate         float64       // initial coverRate setting: loop cover packets per second (0 to settings.MaxCoverRate; 0: off)
	SendRate          float64       // initial sendRate setting: the constant-rate stream's packets per second (0 to settings.MaxSendRate; 0: off)
	AutoRedeem        bool          // initial autoRedeem setting
	AutoFund          bool          // initial autoFund setting: top up outgoing channels below half of channelFunding
	Relayers          int           // initial relayers setting: relayers of the node's own paths (settings.MinRelayers to settings.MaxRelayers; 0: the default)
	ShutdownTimeout   time.Duration
	Strategy          string        // initial channel strategy setting: passive (default) or promiscuous
	MaxChannels       int           // initial maxChannels setting; 0: the strategy's default
	ChannelFunding    string        // initial channelFunding setting in tokens; empty: the default
	StrategyInterval  time.Duration // time between channel strategy ticks; 0: the default
	LogLevel          string        // debug, info, warn or error
	LogFormat         string        // text (default) or json: one JSON object per line
	ProfileAddress    string        // loopback host:port serving Go's pprof profiles; empty (default) = off
	AllowedHosts      []string      // names REST and admin also answer to (Host header) beside IP literals and localhost
	CORSOrigins       []string      // other origins whose pages may call REST and open the admin WebSocket; "*" only with a token
	ExitAllow         []string      // initial exitAllow setting: the rules (exit.ParseRules); nil: the default (no rule: no exit)
	Services          []string      // named services name=host:port the node offers without being an exit (ExitServices reads them)
	SOCKS5Listen      string        // host:port of the SOCKS5 entry; empty (default) = off
	SOCKS5Exit        string        // the exit (PeerId or alias) every SOCKS5 CONNECT goes to
	identitySetByUser bool
}

// defaults are the settings' defaults, which the settings' flags default to.
var defaults = settings.Defaults()

// InitialSettings are the settings a node starts with where none was changed over the API or
// console (the stored value of a changed one wins): the defaults, with what the flags
// say. It refuses a flag's value the setting cannot take.
func (c Config) InitialSettings() (settings.Values, error) {
	v := settings.Defaults()
	v.MixDelayMean, v.CoverRate, v.SendRate = c.MixDelayMean, c.CoverRate, c.SendRate
	v.AutoRedeem, v.AutoFund = c.AutoRedeem, c.AutoFund
	if c.Relayers != 0 {
		v.Relayers = c.Relayers
	}
	if c.MaxChannels != 0 {
		v.MaxChannels = c.MaxChannels
	}
	for flag, text := range map[string]string{"strategy": c.Strategy, "maxChannels": strconv.Itoa(v.MaxChannels), "channelFunding": c.ChannelFunding,
		"exitAllow": strings.Join(c.ExitAllow, ","), "socks5Listen": c.SOCKS5Listen, "socks5Exit": c.SOCKS5Exit} {
		if text == "" {
			continue
		}
		var err error
		if v, err = settings.SetText(v, flag, text); err != nil {
			var se *settings.Error
			if errors.As(err, &se) {
				err = errors.New(se.Reason)
			}
			return v, &FieldError{flag, err.Error()}
		}
	}
	return v, nil
}

// ExitServices are the named services of --service. A bad one is a *FieldError that names it.
func (c Config) ExitServices() ([]exit.Service, error) {
	svcs, err := exit.ParseServices(c.Services)
	if err != nil {
		return nil, &FieldError{"service", strings.TrimPrefix(err.Error(), "service ")}
	}
	return svcs, nil
}

// Origins is the policy of the REST API's and admin server's Host names and origins
// (--allowedHosts, --corsOrigins, the listen hosts when they are names); the web console's
// origins are added once the admin port is known (origin.Policy.AllowConsole).
func (c Config) Origins() (*origin.Policy, error) {
	hosts := append([]string(nil), c.AllowedHosts...)
	for _, h := range []string{c.APIHost, c.AdminHost} {
		if net.ParseIP(strings.Trim(h, "[]")) == nil && h != "" {
			hosts = append(hosts, h)
		}
	}
	p, err := origin.New(origin.Config{Hosts: hosts, Origins: c.CORSOrigins, TokenRequired: !c.DisableAPIAuth})
	switch {
	case errors.Is(err, origin.ErrBadHost):
		return nil, &FieldError{"allowedHosts", err.Error()}
	case err != nil:
		return nil, &FieldError{"corsOrigins", err.Error()}
	}
	return p, nil
}

// FieldError is a configuration error about one flag. Its text names the
// flag so a user can fix it from a single line.
type FieldError struct {
	Flag string
	Msg  string
}

func (e *FieldError) Error() string { return "--" + e.Flag + " " + e.Msg }

// flags defines the flags of `relayd` on a new FlagSet, each bound to its field of c.
// Their names are the keys of the config file and, in upper snake case, of the environment.
func flags(c *Config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("relayd", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.APIToken, "apiToken", "", "API token for REST and the admin WebSocket (min 8 characters)")
	fs.BoolVar(&c.DisableAPIAuth, "disableApiAuthentication", false, "serve REST and WebSocket without a token (local testing only)")
	fs.StringVar(&c.APIHost, "apiHost", "127.0.0.1", "REST API listen host")
	fs.IntVar(&c.APIPort, "apiPort", 3001, "REST API listen port")
	fs.StringVar(&c.AdminHost, "adminHost", "127.0.0.1", "WebSocket admin server listen host")
	fs.IntVar(&c.AdminPort, "adminPort", 3000, "WebSocket admin server listen port")
	fs.StringVar(&c.Host, "host", "127.0.0.1:9091", "p2p listen address (host:port)")
	fs.StringVar(&c.Identity, "identity", "", "identity keystore file (default <data>/identity.json)")
	fs.StringVar(&c.Password, "password", "", "password of the identity keystore (visible in the process list: prefer --passwordFile)")
	fs.StringVar(&c.PasswordFile, "passwordFile", "", "file holding the password of the identity keystore (one line; must not be readable by other users)")
	fs.BoolVar(&c.Init, "init", false, "create the identity and the data directory if missing")
	fs.StringVar(&c.Data, "data", "relayd-data", "data directory")
	fs.StringVar(&c.Provider, "provider", "", "chain JSON-RPC URL (http, https, ws or wss)")
	fs.StringVar(&c.ChannelsContract, "channelsContract", "", "address of the RelayChannels contract on that chain (default: the one --network's entry names)")
	fs.StringVar(&c.NetworksFile, "networksFile", "", "the operator's networks file (written by relayd deploy), searched for --network before the shipped networks")
	fs.IntVar(&c.Confirmations, "confirmations", -1, "blocks a channel event must be deep before the node trusts it; -1: 0 on the dev chain (chain id 1337), 8 elsewhere")
	fs.BoolVar(&c.ReindexOnNewChain, "reindexOnNewChain", false, "when the provider serves another chain than the one indexed (a dev chain restarted fresh), drop the index and re-index instead of stopping")
	fs.BoolVar(&c.WeakCrypto, "testUseWeakCrypto", false, "use light scrypt parameters for a new keystore (tests and local clusters only)")
	fs.StringVar(&c.Network, "network", "local", "relay network name (nodes talk only within one network)")
	fs.Var(listValue{&c.Peers}, "peers", "comma-separated multiaddrs of peers to know at start, each ending in /p2p/<peerId>")
	fs.Var(listValue{&c.Announce}, "announce", "comma-separated multiaddrs announced on chain (default: the reachable ones the node listens on)")
	fs.Var(listValue{&c.AllowedHosts}, "allowedHosts", "comma-separated host names the REST API and admin server also answer to (their Host header), beside IP addresses and localhost: the node's DNS name behind a reverse proxy; other names are refused (DNS rebinding)")
	fs.Var(listValue{&c.CORSOrigins}, "corsOrigins", "comma-separated origins (http://host:port) of other web pages that may call the REST API and open the admin WebSocket, beside the node's own web console; \"*\" allows every page and needs a token; pages of other origins are refused")
	fs.DurationVar(&c.HeartbeatInterval, "heartbeatInterval", 10*time.Second, "how often every known peer is pinged")
	fs.DurationVar(&c.MixDelayMin, "mixDelayMin", 0, "per-hop mixing delay, lower bound")
	fs.DurationVar(&c.MixDelayMean, "mixDelayMean", defaults.MixDelayMean, "mean of the exponential per-hop mixing delay (Poisson mixing) added to --mixDelayMin and capped at --mixDelayMax (until the mixDelayMean setting is changed over the API or console: then the stored value wins); 0: uniform between --mixDelayMin and --mixDelayMax, no delay when both are 0")
	fs.DurationVar(&c.MixDelayMax, "mixDelayMax", 0, "cap of each per-hop mixing delay, at most 30 s (half the acknowledgement timeout); 0: --mixDelayMin + 10 × --mixDelayMean, at most 30 s")
	c.CoverRate, c.SendRate = defaults.CoverRate, defaults.SendRate
	fs.Var(rateValue{&c.CoverRate}, "coverRate", fmt.Sprintf("loop cover packets per second this node sends over random paths back to itself (0 to %d, 0: off) (until the coverRate setting is changed over the API or console: then the stored value wins)", settings.MaxCoverRate))
	fs.Var(rateValue{&c.SendRate}, "sendRate", fmt.Sprintf("packets per second of the constant-rate stream: messages wait for its Poisson slots, drop cover fills the others, received messages are re-emitted (0 to %d, 0: off; docs/TRAFFIC.md) (until the sendRate setting is changed over the API or console: then the stored value wins)", settings.MaxSendRate))
	fs.IntVar(&c.Relayers, "relayers", defaults.Relayers, fmt.Sprintf("relayers of this node's own messages and cover loops (%d or %d; where no such path exists the other count is tried) (until the relayers setting is changed over the API or console: then the stored value wins)", settings.MinRelayers, settings.MaxRelayers))
	fs.StringVar(&c.Strategy, "strategy", string(defaults.Strategy), "channel strategy, passive or promiscuous (until the strategy setting is changed over the API or console: then the stored value wins)")
	fs.IntVar(&c.MaxChannels, "maxChannels", defaults.MaxChannels, fmt.Sprintf("outgoing channels the promiscuous strategy keeps open, 1 to %d (until the maxChannels setting is changed over the API or console)", settings.MaxChannelsLimit))
	fs.StringVar(&c.ChannelFunding, "channelFunding", defaults.ChannelFunding.String(), "tokens each channel the strategy opens is funded with, and what --autoFund tops a channel up to (until the channelFunding setting is changed over the API or console)")
	fs.BoolVar(&c.AutoRedeem, "autoRedeem", defaults.AutoRedeem, "redeem acknowledged tickets by themselves past the autoRedeemCount or autoRedeemValue setting (until the autoRedeem setting is changed over the API or console)")
	fs.BoolVar(&c.AutoFund, "autoFund", defaults.AutoFund, "top up an outgoing channel to --channelFunding once its balance fell below half of it, from the node's token balance (until the autoFund setting is changed over the API or console)")
	fs.Var(listValue{&c.ExitAllow}, "exitAllow", "comma-separated exitAllow rules: the destinations this node connects to as an exit for the sessions that reach it, such as *.example.org:443, example.org:*, *:80, 10.0.0.0/8 or 192.0.2.0/24:53 (docs/SESSIONS.md); loopback, private and other local ranges and the node's own ports only when a rule names them; none by default: no exit (until the exitAllow setting is changed over the API or console: then the stored value wins)")
	fs.Var(listValue{&c.Services}, "service", "a named service name=host:port that this node offers without being an exit, dialled whatever range its address lies in (repeatable, or comma-separated)")
	fs.DurationVar(&c.StrategyInterval, "strategyInterval", 30*time.Second, "time between channel strategy ticks")
	fs.DurationVar(&c.ShutdownTimeout, "shutdownTimeout", 10*time.Second, "how long a graceful shutdown may take")
	fs.StringVar(&c.LogLevel, "logLevel", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "logFormat", LogText, "log format: text (key=value) or json (one object per line)")
	fs.StringVar(&c.SOCKS5Listen, "socks5Listen", "", "serve a SOCKS5 entry on this host:port (such as 127.0.0.1:1080): each CONNECT becomes a session to --socks5Exit, its name resolved there (socks5h); no authentication, so loopback only; off when empty")
	fs.StringVar(&c.SOCKS5Exit, "socks5Exit", "", "the exit (PeerId or alias) of the SOCKS5 entry's sessions; required with --socks5Listen")
	fs.StringVar(&c.ProfileAddress, "profileAddress", "", "serve Go's pprof profiles (/debug/pprof/) on this loopback host:port, without a token; off when empty")
	return fs
}

// listValue is a flag of comma-separated items: each use appends its items.
type listValue struct{ list *[]string }

func (v listValue) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*v.list = append(*v.list, p)
		}
	}
	return nil
}

func (v listValue) String() string {
	if v.list == nil {
		return ""
	}
	return strings.Join(*v.list, ",")
}

func (v listValue) Get() any { return *v.list }

// rateValue is a flag of a rate in packets per second.
type rateValue struct{ rate *float64 }

func (v rateValue) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return errors.New("must be a number of packets per second")
	}
	*v.rate = x
	return nil
}

func (v rateValue) String() string {
	if v.rate == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.rate, 'g', -1, 64)
}

func (v rateValue) Get() any { return *v.rate }

// EnvName returns the environment variable that stands in for a flag:
// RELAYD_ followed by the flag name in upper snake case (apiToken →
// RELAYD_API_TOKEN).
func EnvName(flagName string) string {
	var b strings.Builder
	b.WriteString("RELAYD_")
	for i, r := range flagName {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// Validate checks the configuration and returns the first problem as a
// *FieldError. It does not touch the file system.
func (c Config) Validate() error {
	if c.DisableAPIAuth {
		// Without a token anybody who reaches the port controls the node and its funds.
		if !isLoopback(c.APIHost) {
			return &FieldError{"disableApiAuthentication", "serves the API without a token and cannot be used with a non-loopback --apiHost; set --apiToken instead"}
		}
		if !isLoopback(c.AdminHost) {
			return &FieldError{"disableApiAuthentication", "serves the admin WebSocket without a token and cannot be used with a non-loopback --adminHost; set --apiToken instead"}
		}
	} else {
		switch {
		case c.APIToken == "":
			return &FieldError{"apiToken", "is required (or pass --disableApiAuthentication for local testing)"}
		case len(c.APIToken) < MinTokenLength:
			return &FieldError{"apiToken", fmt.Sprintf("must be at least %d characters long", MinTokenLength)}
		}
		if c.isPublishedToken() {
			if !isLoopback(c.APIHost) {
				return &FieldError{"apiToken", "is a published default token and cannot be used with a non-loopback --apiHost; choose your own"}
			}
			if !isLoopback(c.AdminHost) {
				return &FieldError{"apiToken", "is a published default token and cannot be used with a non-loopback --adminHost; choose your own"}
			}
		}
	}
	if _, err := c.Origins(); err != nil {
		return err
	}
	if err := checkPort("apiPort", c.APIPort); err != nil {
		return err
	}
	if err := checkPort("adminPort", c.AdminPort); err != nil {
		return err
	}
	if c.APIHost == "" {
		return &FieldError{"apiHost", "must not be empty"}
	}
	if c.AdminHost == "" {
		return &FieldError{"adminHost", "must not be empty"}
	}
	if _, _, err := net.SplitHostPort(c.Host); err != nil {
		return &FieldError{"host", fmt.Sprintf("must be host:port (%v)", err)}
	}
	if c.Data == "" {
		return &FieldError{"data", "must not be empty"}
	}
	if c.Identity == "" {
		return &FieldError{"identity", "must not be empty"}
	}
	if c.Password == "" {
		return &FieldError{"password", "is required: it encrypts the identity keystore (or give --passwordFile)"}
	}
	if c.Provider != "" {
		if u, err := url.Parse(c.Provider); err != nil || u.Host == "" ||
			(u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
			return &FieldError{"provider", "must be an http(s) or ws(s) URL of a JSON-RPC endpoint"}
		}
		if c.ChannelsContract != "" && !common.IsHexAddress(c.ChannelsContract) {
			return &FieldError{"channelsContract", "must be the 0x address of the RelayChannels contract"}
		}
	}
	if c.Network == "" {
		return &FieldError{"network", "must not be empty"}
	}
	for _, a := range c.Announce {
		if _, err := ma.NewMultiaddr(a); err != nil {
			return &FieldError{"announce", fmt.Sprintf("%q is not a multiaddr such as /ip4/203.0.113.7/tcp/9091 (%v)", a, err)}
		}
	}
	if c.HeartbeatInterval <= 0 {
		return &FieldError{"heartbeatInterval", "must be positive"}
	}
	if c.Confirmations < -1 || c.Confirmations > 1000 {
		return &FieldError{"confirmations", "must be -1 (the chain's default) or 0 to 1000"}
	}
	if c.MixDelayMin < 0 || c.MixDelayMax < 0 || (c.MixDelayMax != 0 && c.MixDelayMax < c.MixDelayMin) {
		return &FieldError{"mixDelayMax", "must be at least --mixDelayMin (or 0: 10 × the mean), and both not negative"}
	}
	if c.MixDelayMean < 0 || c.MixDelayMean > settings.MaxMixDelayMean {
		return &FieldError{"mixDelayMean", fmt.Sprintf("must be between 0 and %v", settings.MaxMixDelayMean)}
	}
	if c.MixDelayMean > 0 && c.MixDelayMax != 0 && c.MixDelayMax < c.MixDelayMin+c.MixDelayMean {
		return &FieldError{"mixDelayMax", "must be at least --mixDelayMin plus --mixDelayMean: it caps each exponential draw (0: 10 × the mean)"}
	}
	if !(c.SendRate >= 0 && c.SendRate <= settings.MaxSendRate) { // also refuses NaN
		return &FieldError{"sendRate", fmt.Sprintf("must be between 0 and %d packets per second", settings.MaxSendRate)}
	}
	if !(c.CoverRate >= 0 && c.CoverRate <= settings.MaxCoverRate) { // also refuses NaN
		return &FieldError{"coverRate", fmt.Sprintf("must be between 0 and %d packets per second", settings.MaxCoverRate)}
	}
	if c.Relayers != 0 && (c.Relayers < settings.MinRelayers || c.Relayers > settings.MaxRelayers) { // 0: the default
		return &FieldError{"relayers", fmt.Sprintf("must be %d or %d", settings.MinRelayers, settings.MaxRelayers)}
	}
	if c.ShutdownTimeout <= 0 {
		return &FieldError{"shutdownTimeout", "must be positive"}
	}
	if _, err := c.InitialSettings(); err != nil {
		return err
	}
	if _, err := c.ExitServices(); err != nil {
		return err
	}
	if c.StrategyInterval < 0 {
		return &FieldError{"strategyInterval", "must not be negative"}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return &FieldError{"logLevel", "must be one of debug, info, warn, error"}
	}
	if err := c.validateOperator(); err != nil {
		return err
	}
	if c.SOCKS5Listen != "" {
		// The SOCKS5 entry has no authentication: whoever reaches it uses the node's sessions.
		host, _, err := net.SplitHostPort(c.SOCKS5Listen)
		if err != nil || host == "" || !isLoopback(host) {
			return &FieldError{"socks5Listen", "must be a loopback host:port such as 127.0.0.1:1080"}
		}
		if c.SOCKS5Exit == "" {
			return &FieldError{"socks5Exit", "must name the exit (a PeerId or an alias) with --socks5Listen"}
		}
	}
	if c.ProfileAddress != "" {
		// Profiles show memory contents and have no token: never beyond this machine.
		host, _, err := net.SplitHostPort(c.ProfileAddress)
		if err != nil || host == "" || !isLoopback(host) {
			return &FieldError{"profileAddress", "must be a loopback host:port such as 127.0.0.1:6060"}
		}
	}
	return nil
}

func (c Config) isPublishedToken() bool {
	for _, t := range publishedTokens {
		if c.APIToken == t {
			return true
		}
	}
	return false
}

func checkPort(flagName string, p int) error {
	if p < 0 || p > 65535 {
		return &FieldError{flagName, "must be between 0 and 65535"}
	}
	return nil
}

// isLoopback reports whether host names only the local machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
