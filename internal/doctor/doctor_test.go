package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/token"
)

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// setup starts a dev chain (its defaults: the shipped `local` network) and returns the config of
// a node whose keystore exists, funded with native coin and tokens as given.
func setup(t *testing.T, native, tokens *big.Int) (config.Config, *devchain.Chain) {
	t.Helper()
	ch, err := devchain.New(t.Context(), devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	dir := t.TempDir()
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := id.Save(filepath.Join(dir, "id.json"), "pw", identity.LightScrypt); err != nil {
		t.Fatal(err)
	}
	if native.Sign() > 0 || tokens.Sign() > 0 {
		if err := ch.Fund(t.Context(), id.Address(), native, tokens); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	return config.Config{Identity: filepath.Join(dir, "id.json"), Password: "pw", Data: filepath.Join(dir, "data"),
		APIHost: "127.0.0.1", APIPort: freePort(t), AdminHost: "127.0.0.1", AdminPort: freePort(t),
		Host: "127.0.0.1:" + itoa(freePort(t)), Network: "local", Provider: ch.RPCURL(), ChannelFunding: "10"}, ch
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func result(rs []Result, name string) Result {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return Result{}
}

func TestEverythingPasses(t *testing.T) {
	cfg, ch := setup(t, token.Tokens(10).Big(), token.Tokens(100).Big())
	var out bytes.Buffer
	rs, err := Run(t.Context(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	for _, name := range []string{"keystore", "data", "api", "admin", "p2p", "announce", "provider", "contracts", "gas", "tokens"} {
		if r := result(rs, name); r.Status != Pass {
			t.Errorf("%s: %+v, want pass\n%s", name, r, out.String())
		}
	}
	if !strings.Contains(result(rs, "contracts").Detail, ch.ChannelsAddress().Hex()) {
		t.Errorf("contracts line %q does not name the dev chain's channels contract", result(rs, "contracts").Detail)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(line, "pass ") {
			t.Errorf("line %q: every line passes", line)
		}
	}
}

// TestEachFailureSaysItsFix: each thing that can stop a start fails its own line, with a fix, and
// Run reports ErrFailed.
func TestEachFailureSaysItsFix(t *testing.T) {
	base, _ := setup(t, big.NewInt(0), big.NewInt(0))
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name  string
		edit  func(*config.Config)
		check string
		want  string // in the detail
	}{
		{"unfunded account: gas", func(*config.Config) {}, "gas", "holds 0 wei"},
		{"unfunded account: tokens", func(*config.Config) {}, "tokens", "less than one channel's funding"},
		{"wrong password", func(c *config.Config) { c.Password = "wrong" }, "keystore", "does not decrypt"},
		{"no keystore", func(c *config.Config) { c.Identity += ".missing" }, "keystore", "does not exist"},
		{"API port taken", func(c *config.Config) { c.APIPort = taken.Addr().(*net.TCPAddr).Port }, "api", "is taken"},
		{"private announce on a public network", func(c *config.Config) {
			c.Network, c.Announce = "mainnet", []string{"/ip4/192.168.1.7/tcp/9091"}
		}, "announce", "not reachable"},
		{"unknown network", func(c *config.Config) { c.Network = "nosuch" }, "network", "nosuch"},
		{"provider down", func(c *config.Config) { c.Provider = "http://127.0.0.1:" + itoa(freePort(t)) }, "provider", "127.0.0.1"},
		{"no contract at the address given", func(c *config.Config) { c.ChannelsContract = "0x00000000000000000000000000000000000000aa" }, "contracts", "no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			var out bytes.Buffer
			rs, err := Run(t.Context(), cfg, &out)
			r := result(rs, tc.check)
			if !errors.Is(err, ErrFailed) || r.Status != Fail || r.Fix == "" || !strings.Contains(r.Detail, tc.want) {
				t.Fatalf("%s: %+v (err %v), want a failure mentioning %q with a fix\n%s", tc.check, r, err, tc.want, out.String())
			}
			if !strings.Contains(out.String(), "fix: "+r.Fix) {
				t.Fatalf("the output does not show the fix:\n%s", out.String())
			}
		})
	}
}

// TestStore: a missing store will be created; one a running node holds is reported as held
// (not waited for), one of this format passes with its version.
func TestStore(t *testing.T) {
	cfg, _ := setup(t, big.NewInt(0), big.NewInt(0))
	cfg.Provider = ""
	var out bytes.Buffer
	rs, _ := Run(t.Context(), cfg, &out)
	if r := result(rs, "data"); r.Status != Pass || !strings.Contains(r.Detail, "will be created") {
		t.Fatalf("data: %+v", r)
	}
	if r := result(rs, "provider"); r.Status != Skip {
		t.Fatalf("provider without --provider: %+v", r)
	}
	db, err := store.Open(cfg.Data)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ = Run(t.Context(), cfg, &out)
	if r := result(rs, "data"); r.Status != Fail || !strings.Contains(r.Detail, "held by a running node") {
		t.Fatalf("data while a node holds the store: %+v", r)
	}
	db.Close()
	rs, _ = Run(t.Context(), cfg, &out)
	if r := result(rs, "data"); r.Status != Pass || !strings.Contains(r.Detail, fmt.Sprintf("store format %d", store.FormatVersion)) {
		t.Fatalf("data after the node stopped: %+v", r)
	}
}

func TestInert(t *testing.T) {
	if got := inert("pass  x \x1b[31mred\x07\nfix: y\r"); got != "pass  x ?[31mred?\nfix: y?" {
		t.Fatalf("inert: %q", got)
	}
}
