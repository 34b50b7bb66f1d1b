package node

import (
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/wait"
)

// TestSettingsCommandAndRestart: the admin `settings` command shows and changes the settings,
// refuses what is not a setting or not a value of it, and a changed setting survives a restart,
// where it wins over the flag's first value.
func TestSettingsCommandAndRestart(t *testing.T) {
	cfg := testConfig(t)
	n, stop := runNode(t, cfg)
	a := dialAdmin(t, n)
	defs := settings.Defs()
	last := func(s string) bool { return strings.HasPrefix(s, defs[len(defs)-1].Name) }
	if out := a.run("settings", last); len(out) != len(defs) || !strings.Contains(out[0], "strategy") || !strings.Contains(out[0], "passive") {
		t.Fatalf("settings: %q", out)
	}
	first := func(string) bool { return true }
	for line, want := range map[string]string{
		"settings strategy promiscuous": "Strategy is now promiscuous",
		"settings maxChannels 7":        `You have set your "maxChannels" settings to "7".`,
		"settings channelFunding 2.5":   `You have set your "channelFunding" settings to "2.5 tokens".`,
		"settings maxChannels 0":        "maxChannels must be a whole number from 1 to 100",
		"settings maxChannels many":     "maxChannels must be a whole number from 1 to 100",
		"settings strategy aggressive":  "strategy must be passive or promiscuous",
		"settings colour blue":          `Setting "colour" does not exist`,
		"settings a b c":                "settings takes a name and a value",
	} {
		if out := a.run(line, first); !strings.Contains(out[0], want) {
			t.Errorf("%s: %q, want %q", line, out[0], want)
		}
	}
	if s := n.settings.Get(); s.Strategy != strategy.Promiscuous || s.MaxChannels != 7 || s.ChannelFunding != parseTokensMust(t, "2.5") {
		t.Fatalf("settings after the commands: %+v", s)
	}
	stop()

	cfg.Strategy, cfg.MaxChannels = "passive", 3 // flags of the first start only
	cfg.APIToken = testToken
	n2 := startNode(t, cfg)
	if s := n2.settings.Get(); s.Strategy != strategy.Promiscuous || s.MaxChannels != 7 || s.ChannelFunding != parseTokensMust(t, "2.5") {
		t.Fatalf("settings after the restart: %+v", s)
	}

	// The same settings over REST.
	net := &testNet{t: t}
	var got map[string]any
	net.mustCall(n2, http.MethodGet, "/settings", "", http.StatusOK, &got)
	if got["strategy"] != "promiscuous" || got["maxChannels"] != float64(7) || got["channelFunding"] != "2500000000000000000" || got["includeRecipient"] != false {
		t.Fatalf("GET /settings: %v", got)
	}
	net.mustCall(n2, http.MethodPut, "/settings", `{"maxChannels":9,"includeRecipient":true}`, http.StatusOK, &got)
	if got["maxChannels"] != float64(9) || got["includeRecipient"] != true {
		t.Fatalf("PUT /settings answered %v", got)
	}
	var e struct{ Status string }
	for body, code := range map[string]string{
		`{"colour":"blue"}`:                   "INVALID_SETTING",
		`{"maxChannels":0}`:                   "INVALID_SETTING_VALUE",
		`{"channelFunding":"0"}`:              "INVALID_SETTING_VALUE",
		`{"strategy":"passive","colour":"x"}`: "INVALID_SETTING", // all or none: strategy stays
	} {
		if st := net.call(n2, http.MethodPut, "/settings", body, &e); st != http.StatusBadRequest || e.Status != code {
			t.Errorf("PUT /settings %s: %d %s, want 400 %s", body, st, e.Status, code)
		}
	}
	if s := n2.settings.Get(); s.Strategy != strategy.Promiscuous {
		t.Fatalf("a refused PUT changed the strategy: %+v", s)
	}
	net.mustCall(n2, http.MethodPut, "/settings/strategy", `{"settingValue":"passive"}`, http.StatusNoContent, nil)
	if s := n2.settings.Get(); s.Strategy != strategy.Passive || s.MaxChannels != 9 || !s.IncludeRecipient {
		t.Fatalf("settings after PUT: %+v", s)
	}
}

func parseTokensMust(t *testing.T, s string) token.Amount {
	t.Helper()
	v, err := token.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPromiscuousStrategy: four funded nodes without channels, each promiscuous with
// maxChannels 2, open two channels each on their own; when one node stops, the others close
// their channels to it once it stays unreachable and open channels to the nodes still there.
func TestPromiscuousStrategy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain and four nodes")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	var stops []func()
	for range 4 {
		cfg := fundedNodeConfig(t, ch, tokens(100))
		cfg.Strategy, cfg.MaxChannels, cfg.ChannelFunding = "promiscuous", 2, "5"
		cfg.StrategyInterval, cfg.HeartbeatInterval = 200*time.Millisecond, 200*time.Millisecond
		n, stop := runNode(t, cfg)
		stops = append(stops, stop)
		net.nodes = append(net.nodes, n)
	}
	openTo := func(n *Node) map[common.Address]bool {
		out := map[common.Address]bool{}
		for _, c := range n.chain.graph.Outgoing(n.id.Address()) {
			if c.Status == channels.Open {
				out[c.Destination] = true
			}
		}
		return out
	}
	net.eventually("every node opened two channels by itself", func() bool {
		for _, n := range net.nodes {
			if len(openTo(n)) != 2 {
				return false
			}
		}
		return true
	})
	for _, n := range net.nodes {
		for _, c := range n.chain.graph.Outgoing(n.id.Address()) {
			if c.Balance.Cmp(tokens(5)) != 0 {
				t.Fatalf("a strategy channel holds %v, want the 5 tokens of channelFunding", c.Balance)
			}
		}
	}

	gone := net.nodes[3]
	stops[3]()
	alive := net.nodes[:3]
	// A stopped peer's quality falls below closeQuality after several failed heartbeats, each
	// waiting for its dial to time out: 12–17 s here on a quiet machine, longer on a busy one.
	wait.For(t, func() bool {
		for _, n := range alive {
			open := openTo(n)
			if open[gone.id.Address()] || len(open) != 2 {
				return false
			}
		}
		return true
	}, 90*time.Second, "the others dropped the stopped node and reopened among themselves")
}

// TestAutoRedeem: with autoRedeem on, R1 redeems its tickets by itself once 3 wait; R2, with
// autoRedeem off, redeems the tickets of its incoming channel from R1 as soon as R1 starts closing
// that channel, since they are void once it is closed.
func TestAutoRedeem(t *testing.T) {
	net := newTestNet(t, 4, Options{AutoRedeemInterval: 100 * time.Millisecond})
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(1))
	net.open(r1, r2, tokens(1))
	net.open(r2, b, tokens(1))
	net.mustCall(r1, http.MethodPut, "/settings", `{"autoRedeem":true,"autoRedeemCount":3}`, http.StatusOK, nil)
	bFrames := watch(t, b)
	type stats struct{ Unredeemed, Redeemed uint64 }
	statsOf := func(n *Node) (s stats) {
		net.mustCall(n, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &s)
		return s
	}
	for i := range 2 {
		net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"m%d","recipient":%q}`, i, b.id.PeerID()), http.StatusAccepted, nil)
		expectMessage(t, bFrames, fmt.Sprintf("m%d", i))
	}
	net.eventually("R1 holds two tickets", func() bool { return statsOf(r1).Unredeemed == 2 })
	if s := statsOf(r1); s.Redeemed != 0 {
		t.Fatalf("R1 redeemed below its threshold: %+v", s)
	}
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"m2","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, nil)
	expectMessage(t, bFrames, "m2")
	net.eventually("R1 redeemed its three tickets by itself", func() bool {
		s := statsOf(r1)
		return s.Redeemed == 3 && s.Unredeemed == 0
	})
	if s := statsOf(r2); s.Redeemed != 0 || s.Unredeemed != 3 {
		t.Fatalf("R2 before the closure: %+v, want 3 unredeemed", s)
	}
	net.mustCall(r1, http.MethodDelete, "/channels/"+r2.id.PeerID().String()+"/outgoing", "", http.StatusOK, nil)
	net.eventually("R2 redeemed the closing channel's tickets", func() bool {
		s := statsOf(r2)
		return s.Redeemed == 3 && s.Unredeemed == 0
	})
}

// TestAutoFund: with autoFund on, an outgoing channel below half of channelFunding is topped up
// to channelFunding from the node's token balance, under the passive strategy.
func TestAutoFund(t *testing.T) {
	net := newTestNet(t, 2)
	a, b := net.nodes[0], net.nodes[1]
	net.open(a, b, tokens(2))
	net.eventually("A sees B answer its heartbeats", func() bool { return a.disc.Qualities()[b.id.Address()] > 0.5 })
	before := net.tokenBalance(a)
	net.mustCall(a, http.MethodPut, "/settings", `{"autoFund":true,"channelFunding":"6000000000000000000"}`, http.StatusOK, nil)
	net.eventually("A topped its channel up to 6 tokens", func() bool {
		c, ok := a.chain.graph.Channel(a.id.Address(), b.id.Address())
		return ok && c.Balance.Cmp(tokens(6)) == 0
	})
	if spent := new(big.Int).Sub(before, net.tokenBalance(a)); spent.Cmp(tokens(4)) != 0 {
		t.Fatalf("A's token balance fell by %v, want the 4 tokens of the top-up", spent)
	}
	if c, ok := b.chain.graph.Channel(a.id.Address(), b.id.Address()); !ok || c.Status != channels.Open {
		t.Fatalf("B's view of the channel: %+v", c)
	}
}
