package config

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/settings"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"apiToken":                 "RELAYD_API_TOKEN",
		"disableApiAuthentication": "RELAYD_DISABLE_API_AUTHENTICATION",
		"host":                     "RELAYD_HOST",
		"adminPort":                "RELAYD_ADMIN_PORT",
	} {
		if got := EnvName(flag); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", flag, got, want)
		}
	}
}

func TestParseFlagsEnvAndDefaults(t *testing.T) {
	c, err := Parse([]string{"--apiPort", "4001", "--peers", "/ip4/127.0.0.1/tcp/1/p2p/a, /ip4/127.0.0.1/tcp/2/p2p/b"}, env(map[string]string{
		"RELAYD_API_TOKEN": "from-env-token",
		"RELAYD_API_PORT":  "5001", // the flag wins
		"RELAYD_DATA":      "/tmp/d",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.APIToken != "from-env-token" || c.APIPort != 4001 || c.Data != "/tmp/d" {
		t.Fatalf("got token %q port %d data %q", c.APIToken, c.APIPort, c.Data)
	}
	if len(c.Peers) != 2 || c.Peers[1] != "/ip4/127.0.0.1/tcp/2/p2p/b" {
		t.Fatalf("peers %q", c.Peers)
	}
	if c.APIHost != "127.0.0.1" || c.AdminHost != "127.0.0.1" || c.AdminPort != 3000 {
		t.Fatalf("defaults not loopback 3000/3001: %+v", c)
	}
	if want := filepath.Join("/tmp/d", "identity.json"); c.Identity != want {
		t.Fatalf("identity default %q, want %q", c.Identity, want)
	}
}

// TestParseMixingDefaults: without flags a node mixes with an exponential delay of mean
// DefaultMixDelayMean, capped at 10 × the mean (max 0), and sends no cover traffic; the flags
// and their environment variables set both.
func TestParseMixingDefaults(t *testing.T) {
	c, err := Parse(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MixDelayMean != settings.Defaults().MixDelayMean || c.MixDelayMax != 0 || c.MixDelayMin != 0 || c.CoverRate != settings.Defaults().CoverRate {
		t.Fatalf("mixing defaults: min %v mean %v max %v cover %v", c.MixDelayMin, c.MixDelayMean, c.MixDelayMax, c.CoverRate)
	}
	if settings.Defaults().MixDelayMean <= 0 {
		t.Fatal("the default mixing is not exponential")
	}
	c, err = Parse([]string{"--mixDelayMean", "50ms", "--coverRate", "2.5"}, env(map[string]string{"RELAYD_MIX_DELAY_MAX": "1s"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MixDelayMean != 50*time.Millisecond || c.MixDelayMax != time.Second || c.CoverRate != 2.5 {
		t.Fatalf("mixing flags: mean %v max %v cover %v", c.MixDelayMean, c.MixDelayMax, c.CoverRate)
	}
}

// TestParseAnnounce: --announce and RELAYD_ANNOUNCE take comma-separated multiaddrs; the flag wins.
func TestParseAnnounce(t *testing.T) {
	c, err := Parse(nil, env(nil), io.Discard)
	if err != nil || c.Announce != nil {
		t.Fatalf("default announce %q, %v", c.Announce, err)
	}
	c, err = Parse([]string{"--announce", "/ip4/203.0.113.7/tcp/9091, /ip6/2001:db8::7/tcp/9091"},
		env(map[string]string{"RELAYD_ANNOUNCE": "/ip4/198.51.100.1/tcp/1"}), io.Discard)
	if err != nil || len(c.Announce) != 2 || c.Announce[1] != "/ip6/2001:db8::7/tcp/9091" {
		t.Fatalf("--announce: %q, %v", c.Announce, err)
	}
	c, err = Parse(nil, env(map[string]string{"RELAYD_ANNOUNCE": "/ip4/198.51.100.1/tcp/1"}), io.Discard)
	if err != nil || len(c.Announce) != 1 || c.Announce[0] != "/ip4/198.51.100.1/tcp/1" {
		t.Fatalf("RELAYD_ANNOUNCE: %q, %v", c.Announce, err)
	}
}

func TestParseBadEnvValue(t *testing.T) {
	_, err := Parse(nil, env(map[string]string{"RELAYD_API_PORT": "abc"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "RELAYD_API_PORT") {
		t.Fatalf("want error naming RELAYD_API_PORT, got %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := Config{APIToken: "S3cret!token", APIHost: "127.0.0.1", APIPort: 3001, AdminHost: "127.0.0.1",
		AdminPort: 3000, Host: "127.0.0.1:9091", Data: "d", Identity: "d/id", Password: "p",
		ShutdownTimeout: 1, LogLevel: "info", Network: "local", HeartbeatInterval: 1, MixDelayMax: 1}
	tests := []struct {
		name string
		mod  func(*Config)
		flag string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"missing token", func(c *Config) { c.APIToken = "" }, "apiToken"},
		{"short token", func(c *Config) { c.APIToken = "1234567" }, "apiToken"},
		{"auth disabled needs no token", func(c *Config) { c.APIToken = ""; c.DisableAPIAuth = true }, ""},
		{"auth disabled on localhost", func(c *Config) { c.DisableAPIAuth = true; c.APIHost = "localhost"; c.AdminHost = "::1" }, ""},
		{"auth disabled public api", func(c *Config) { c.DisableAPIAuth = true; c.APIHost = "0.0.0.0" }, "disableApiAuthentication"},
		{"auth disabled public api v6", func(c *Config) { c.DisableAPIAuth = true; c.APIHost = "::" }, "disableApiAuthentication"},
		{"auth disabled api hostname", func(c *Config) { c.DisableAPIAuth = true; c.APIHost = "relay.example.org" }, "disableApiAuthentication"},
		{"auth disabled public admin", func(c *Config) { c.DisableAPIAuth = true; c.AdminHost = "192.0.2.1" }, "disableApiAuthentication"},
		{"published token on loopback", func(c *Config) { c.APIToken = ClusterDefaultToken }, ""},
		{"published token on localhost", func(c *Config) { c.APIToken = ClusterDefaultToken; c.APIHost = "localhost" }, ""},
		{"published token public api", func(c *Config) { c.APIToken = ClusterDefaultToken; c.APIHost = "0.0.0.0" }, "apiToken"},
		{"published token public admin", func(c *Config) { c.APIToken = ClusterDefaultToken; c.AdminHost = "192.0.2.1" }, "apiToken"},
		{"own token public", func(c *Config) { c.APIHost = "0.0.0.0" }, ""},
		{"cors origins", func(c *Config) { c.CORSOrigins = []string{"http://localhost:8080", "https://app.example"} }, ""},
		{"any origin with a token", func(c *Config) { c.CORSOrigins = []string{"*"} }, ""},
		{"any origin without a token", func(c *Config) { c.DisableAPIAuth = true; c.CORSOrigins = []string{"*"} }, "corsOrigins"},
		{"cors origin not an origin", func(c *Config) { c.CORSOrigins = []string{"app.example"} }, "corsOrigins"},
		{"cors origin with a path", func(c *Config) { c.CORSOrigins = []string{"https://app.example/ui"} }, "corsOrigins"},
		{"allowed host", func(c *Config) { c.AllowedHosts = []string{"relay.example.org"} }, ""},
		{"allowed host with a scheme", func(c *Config) { c.AllowedHosts = []string{"https://relay.example.org"} }, "allowedHosts"},
		{"allowed host with a port", func(c *Config) { c.AllowedHosts = []string{"relay.example.org:3001"} }, "allowedHosts"},
		{"bad port", func(c *Config) { c.APIPort = 70000 }, "apiPort"},
		{"bad host", func(c *Config) { c.Host = "nope" }, "host"},
		{"no password", func(c *Config) { c.Password = "" }, "password"},
		{"negative mix delay", func(c *Config) { c.MixDelayMin = -1 }, "mixDelayMax"},
		{"negative mix delay cap", func(c *Config) { c.MixDelayMax = -1 }, "mixDelayMax"},
		{"mix delay max below min", func(c *Config) { c.MixDelayMin = 5; c.MixDelayMax = 4 }, "mixDelayMax"},
		{"negative mix delay mean", func(c *Config) { c.MixDelayMean = -1 }, "mixDelayMean"},
		{"mix delay mean above 10s", func(c *Config) { c.MixDelayMean = settings.MaxMixDelayMean + 1 }, "mixDelayMean"},
		{"mix delay cap below the mean", func(c *Config) { c.MixDelayMean = 50 * time.Millisecond; c.MixDelayMax = 20 * time.Millisecond }, "mixDelayMax"},
		{"mix delay mean without a cap", func(c *Config) { c.MixDelayMin = 5; c.MixDelayMean = 50 * time.Millisecond; c.MixDelayMax = 0 }, ""},
		{"no mixing", func(c *Config) { c.MixDelayMean = 0; c.MixDelayMax = 0 }, ""},
		{"cover rate", func(c *Config) { c.CoverRate = 2.5 }, ""},
		{"negative cover rate", func(c *Config) { c.CoverRate = -1 }, "coverRate"},
		{"cover rate above the bound", func(c *Config) { c.CoverRate = settings.MaxCoverRate + 0.5 }, "coverRate"},
		{"cover rate not a number", func(c *Config) { c.CoverRate = math.NaN() }, "coverRate"},
		{"one relayer", func(c *Config) { c.Relayers = 1 }, "relayers"},
		{"four relayers", func(c *Config) { c.Relayers = 4 }, "relayers"},
		{"promiscuous", func(c *Config) { c.Strategy = "promiscuous" }, ""},
		{"strategy not a name", func(c *Config) { c.Strategy = "PASSIVE " }, "strategy"},
		{"too many channels", func(c *Config) { c.MaxChannels = settings.MaxChannelsLimit + 1 }, "maxChannels"},
		{"channel funding", func(c *Config) { c.ChannelFunding = "2.5" }, ""},
		{"channel funding zero", func(c *Config) { c.ChannelFunding = "0" }, "channelFunding"},
		{"channel funding not an amount", func(c *Config) { c.ChannelFunding = "1e18" }, "channelFunding"},
		{"exit rules", func(c *Config) { c.ExitAllow = []string{"*.example.org:443", "10.0.0.0/8"} }, ""},
		{"exit rules none", func(c *Config) { c.ExitAllow = []string{"none"} }, ""},
		{"exit rule without a port", func(c *Config) { c.ExitAllow = []string{"*:443", "example.org"} }, "exitAllow"},
		{"exit rule with host bits", func(c *Config) { c.ExitAllow = []string{"10.0.0.1/8"} }, "exitAllow"},
		{"services", func(c *Config) { c.Services = []string{"web=127.0.0.1:8080", "db=[::1]:5432"} }, ""},
		{"service without a port", func(c *Config) { c.Services = []string{"web=127.0.0.1"} }, "service"},
		{"service named twice", func(c *Config) { c.Services = []string{"web=127.0.0.1:80", "web=127.0.0.1:81"} }, "service"},
		{"provider without a contract: the network's", func(c *Config) { c.Provider = "http://127.0.0.1:8545" }, ""},
		{"provider with a bad contract", func(c *Config) { c.Provider, c.ChannelsContract = "http://127.0.0.1:8545", "0x12" }, "channelsContract"},
		{"provider with contract", func(c *Config) {
			c.Provider = "ws://127.0.0.1:8545"
			c.ChannelsContract = "0x059c779Fd53Eb799aF70Bb720960F6787eB4548D"
		}, ""},
		{"provider not a url", func(c *Config) { c.Provider = "127.0.0.1:8545" }, "provider"},
		{"announce", func(c *Config) {
			c.Announce = []string{"/ip4/203.0.113.7/tcp/9091", "/dns4/relay.example.org/udp/9091/quic-v1"}
		}, ""},
		{"announce not a multiaddr", func(c *Config) { c.Announce = []string{"/ip4/203.0.113.7/tcp/9091", "203.0.113.7:9091"} }, "announce"},
		{"announce bad protocol value", func(c *Config) { c.Announce = []string{"/ip4/203.0.113.999/tcp/9091"} }, "announce"},
		{"bad log level", func(c *Config) { c.LogLevel = "loud" }, "logLevel"},
		{"profiles on loopback", func(c *Config) { c.ProfileAddress = "127.0.0.1:6060" }, ""},
		{"profiles on a public address", func(c *Config) { c.ProfileAddress = "0.0.0.0:6060" }, "profileAddress"},
		{"profiles without a host", func(c *Config) { c.ProfileAddress = ":6060" }, "profileAddress"},
		{"profiles without a port", func(c *Config) { c.ProfileAddress = "localhost" }, "profileAddress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.mod(&c)
			err := c.Validate()
			if tt.flag == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Flag != tt.flag {
				t.Fatalf("want FieldError for %s, got %v", tt.flag, err)
			}
			if !strings.HasPrefix(err.Error(), "--"+tt.flag+" ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line naming the flag: %q", err)
			}
		})
	}
}

func TestParseCoverRateNotANumber(t *testing.T) {
	for _, v := range []string{"NaN", "Inf", "-Inf", "fast"} {
		if _, err := Parse([]string{"--coverRate", v}, env(nil), io.Discard); err == nil {
			t.Errorf("--coverRate %s accepted", v)
		}
	}
}

// TestParseExit: --exitAllow and --service take comma-separated lists, repeated, or their
// environment variables; the rules become the exitAllow setting's first value and the services
// ExitServices; a bad one is named.
func TestParseExit(t *testing.T) {
	c, err := Parse([]string{"--exitAllow", "*.Example.org:443, 10.0.0.0/8:*", "--service", "web=127.0.0.1:8080", "--service", "db=localhost:5432"},
		env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.InitialSettings()
	if err != nil || v.ExitAllow != "*.example.org:443,10.0.0.0/8" {
		t.Fatalf("exitAllow %q, %v", v.ExitAllow, err)
	}
	svcs, err := c.ExitServices()
	if err != nil || len(svcs) != 2 || svcs[1].String() != "db=localhost:5432" {
		t.Fatalf("services %v, %v", svcs, err)
	}
	c, err = Parse(nil, env(map[string]string{"RELAYD_EXIT_ALLOW": "*:80", "RELAYD_SERVICE": "a=127.0.0.1:1,b=127.0.0.1:2"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.InitialSettings(); err != nil || v.ExitAllow != "*:80" || len(c.Services) != 2 {
		t.Fatalf("from the environment: %q, %v, services %q", v.ExitAllow, err, c.Services)
	}
	c.Services = []string{"web=127.0.0.1:0"}
	if _, err := c.ExitServices(); err == nil || err.Error() != `--service "web=127.0.0.1:0": has a bad port: want one number from 1 to 65535` {
		t.Fatalf("a bad service: %v", err)
	}
	c.ExitAllow = []string{"*:443", "example.org"}
	if _, err := c.InitialSettings(); err == nil || !strings.HasPrefix(err.Error(), "--exitAllow rule 2 has no port") {
		t.Fatalf("a bad rule: %v", err)
	}
}
