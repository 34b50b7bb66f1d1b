package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/wait"
)

const testToken = "S3cret!token"

// testNet is an in-process network: the dev chain and funded nodes that
// have announced themselves.
type testNet struct {
	t     *testing.T
	chain *devchain.Chain
	nodes []*Node
}

var (
	oneToken  = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	centToken = new(big.Int).Exp(big.NewInt(10), big.NewInt(16), nil) // 0.01
)

func tokens(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneToken) }

// newTestNet starts the dev chain and count funded nodes (10 native coins,
// 100 tokens each) and waits until every node sees every announcement.
func newTestNet(t *testing.T, count int, opts ...Options) *testNet {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a dev chain and several nodes")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	for i := 0; i < count; i++ {
		cfg := fundedNodeConfig(t, ch, tokens(100))
		cfg.Network, cfg.HeartbeatInterval = "test", 500*time.Millisecond
		net.nodes = append(net.nodes, startNode(t, cfg, opts...))
	}
	net.eventually("every node sees every announcement", func() bool {
		for _, n := range net.nodes {
			info := nodeInfo(n)
			if info.PeersAnnounced != count {
				return false
			}
		}
		return true
	})
	return net
}

// startDevChain starts an in-process dev chain (60 s closure period, quiet) for the test.
func startDevChain(tb testing.TB) *devchain.Chain {
	tb.Helper()
	ch, err := devchain.New(tb.Context(), devchain.Config{ClosurePeriod: 60 * time.Second, Logger: quietLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ch.Close() })
	return ch
}

// fundedNodeConfig creates an identity funded on ch with 10 native coins
// and tok tokens, and returns the configuration of a node that uses it
// (loopback, no mixing delay, quiet logs).
func fundedNodeConfig(tb testing.TB, ch *devchain.Chain, tok *big.Int) config.Config {
	tb.Helper()
	dir := tb.TempDir()
	id, err := identity.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	if err := id.Save(filepath.Join(dir, "id.json"), "pw", identity.LightScrypt); err != nil {
		tb.Fatal(err)
	}
	if err := ch.Fund(tb.Context(), id.Address(), tokens(10), tok); err != nil {
		tb.Fatal(err)
	}
	return config.Config{
		APIToken: testToken, APIHost: "127.0.0.1", AdminHost: "127.0.0.1", Host: "127.0.0.1:0",
		Data: filepath.Join(dir, "data"), Identity: filepath.Join(dir, "id.json"), Password: "pw",
		Init: true, ShutdownTimeout: 5 * time.Second, LogLevel: "warn", Network: "test",
		HeartbeatInterval: time.Second, MixDelayMax: 0,
		Provider: ch.RPCURL(), ChannelsContract: ch.ChannelsAddress().Hex(),
	}
}

// eventually polls cond until it holds or 30 s pass.
func (net *testNet) eventually(what string, cond func() bool) {
	net.t.Helper()
	wait.For(net.t, cond, 30*time.Second, what)
}

// call makes a REST call on n and decodes a JSON answer into out (if not nil).
func (net *testNet) call(n *Node, method, path, body string, out any) int {
	net.t.Helper()
	return net.callURL("http://"+n.APIAddr().String(), method, path, body, out)
}

// callURL is call on the node whose REST server is at base (http://host:port).
func (net *testNet) callURL(base, method, path, body string, out any) int {
	net.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(net.t.Context(), method, base+"/api/v2"+path, rd)
	req.Header.Set("x-auth-token", testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		net.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			net.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// mustCall is call that fails the test unless the status is want.
func (net *testNet) mustCall(n *Node, method, path, body string, want int, out any) {
	net.t.Helper()
	var raw json.RawMessage
	if got := net.call(n, method, path, body, &raw); got != want {
		net.t.Fatalf("%s %s: status %d (%s), want %d", method, path, got, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			net.t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
}

func (net *testNet) tokenBalance(n *Node) *big.Int {
	var b struct{ Native, Relay string }
	net.mustCall(n, http.MethodGet, "/account/balances", "", http.StatusOK, &b)
	v, ok := new(big.Int).SetString(b.Relay, 10)
	if !ok {
		net.t.Fatalf("balance %q", b.Relay)
	}
	return v
}

func (net *testNet) open(from, to *Node, amount *big.Int) {
	net.t.Helper()
	net.mustCall(from, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, to.id.PeerID(), amount.String()), http.StatusCreated, nil)
	net.eventually("every node indexed the channel", func() bool {
		for _, n := range net.nodes {
			if c, ok := n.chain.graph.Channel(from.id.Address(), to.id.Address()); !ok || c.Balance.Cmp(amount) != 0 {
				return false
			}
		}
		return true
	})
}

// channel returns from's view of its outgoing channel to to.
type channelView struct{ Type, ChannelID, PeerID, Status, Balance string }

func (net *testNet) channel(n, other *Node, dir string) (channelView, int) {
	var c channelView
	status := net.call(n, http.MethodGet, "/channels/"+other.id.PeerID().String()+"/"+dir, "", &c)
	return c, status
}

// frames collects the admin WebSocket frames of a node.
type frames struct {
	t  *testing.T
	c  *websocket.Conn
	ch chan struct{ Type, Msg string }
}

func watch(t *testing.T, n *Node) *frames {
	t.Helper()
	a := dialAdmin(t, n)
	f := &frames{t: t, c: a.c, ch: make(chan struct{ Type, Msg string }, 4096)}
	go func() {
		for {
			_, b, err := a.c.Read(context.Background())
			if err != nil {
				close(f.ch)
				return
			}
			var fr struct{ Type, Msg string }
			json.Unmarshal(b, &fr)
			f.ch <- fr
		}
	}()
	return f
}

// next returns the next frame that is not one of the node's own log lines.
func (f *frames) next() (string, string) {
	f.t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case fr, ok := <-f.ch:
			if !ok {
				f.t.Fatal("admin connection closed")
			}
			if strings.HasPrefix(fr.Msg, "level=") {
				continue
			}
			return fr.Type, fr.Msg
		case <-timeout:
			f.t.Fatal("no frame within 15 s")
		}
	}
}

// drain returns every frame received so far.
func (f *frames) drain() []string {
	var out []string
	for {
		select {
		case fr := <-f.ch:
			out = append(out, fr.Type+" "+fr.Msg)
		default:
			return out
		}
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// metric returns the value of the first sample line starting with prefix in
// n's /node/metrics, or "" when there is none.
func (net *testNet) metric(n *Node, prefix string) string {
	net.t.Helper()
	return net.metricURL("http://"+n.APIAddr().String(), prefix)
}

// metricURL is metric on the node whose REST server is at base (http://host:port).
func (net *testNet) metricURL(base, prefix string) string {
	net.t.Helper()
	req, _ := http.NewRequestWithContext(net.t.Context(), http.MethodGet, base+"/api/v2/node/metrics", nil)
	req.Header.Set("x-auth-token", testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		net.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			return strings.TrimPrefix(line, prefix+" ")
		}
	}
	return ""
}

// logRelayMetricsIfFailed logs every node's relay and cover counters that are not zero when the
// test has failed (deferred in the test, so before the nodes stop): where its packets went.
func (net *testNet) logRelayMetricsIfFailed() {
	if !net.t.Failed() {
		return
	}
	for i, n := range net.nodes {
		req, _ := http.NewRequest(http.MethodGet, "http://"+n.APIAddr().String()+"/api/v2/node/metrics", nil)
		req.Header.Set("x-auth-token", testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, l := range strings.Split(string(body), "\n") {
			if (strings.HasPrefix(l, "relayd_relay") || strings.HasPrefix(l, "relayd_cover")) && !strings.HasSuffix(l, " 0") && !strings.Contains(l, "bucket") {
				net.t.Logf("node %d: %s", i, l)
			}
		}
	}
}

// info is what a test reads of a node's view of the chain.
type info struct {
	PeersAnnounced     int
	AnnouncedAddresses []string
}

// nodeInfo is n's view: the nodes announced on chain, and its own announced addresses.
func nodeInfo(n *Node) info {
	if n.chain == nil {
		return info{}
	}
	snap := n.chain.graph.Snapshot()
	out := info{PeersAnnounced: len(snap.Peers())}
	if a, ok := snap.Announced(n.id.Address()); ok {
		out.AnnouncedAddresses = a.Multiaddrs
	}
	return out
}
