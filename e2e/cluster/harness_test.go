// Package cluster_test is the end-to-end suite on real processes: it builds
// the relayd binary, starts `relayd cluster` (the dev chain and five nodes as
// separate processes), reads cluster.env and drives the nodes only through
// their public interfaces: REST with net/http, the admin WebSocket with
// github.com/coder/websocket, and the chain's JSON-RPC. It is skipped under
// -short, but for the pure helpers' tests (TestHasRoute, TestPlanChannels).
//
// Ports: the cluster takes 16 consecutive ports from a free base (the chain,
// then 5 REST, 5 admin and 5 p2p ports). RELAY_E2E_PORT_BASE chooses the base.
package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/hostnet"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

const (
	nodeCount    = 5
	portsNeeded  = 1 + 3*nodeCount
	startTimeout = 3 * time.Minute // building the binary included
	waitTimeout  = 30 * time.Second
	pollEvery    = 50 * time.Millisecond
)

var (
	oneToken = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	cent     = new(big.Int).Exp(big.NewInt(10), big.NewInt(16), nil) // 0.01 token
)

func tokens(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneToken) }

// node is one node as cluster.env describes it.
type node struct {
	index                          int
	peerID, address, apiURL, wsURL string
}

// testCluster is a running `relayd cluster` process.
type testCluster struct {
	t        *testing.T
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process exited
	exitErr  error
	output   *testlog.Buffer
	envPath  string
	dataDir  string
	token    string
	chainRPC string
	channels string // RELAYD_CHANNELS_CONTRACT
	bin      string // the relayd binary
	nodes    []node
	symbol   string
	netns    bool        // nodes in network namespaces (--netns)
	count    int         // nodes (nodeCount unless --nodes says otherwise)
	restarts map[int]int // by node: restarts the cluster reported before the last kill
}

// buildRelayd builds cmd/relayd into dir.
func buildRelayd(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "relayd")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/relayd/relayd/cmd/relayd").CombinedOutput()
	if err != nil {
		t.Fatalf("go build relayd: %v\n%s", err, out)
	}
	return bin
}

// portBase returns RELAY_E2E_PORT_BASE or a base with portsNeeded free
// consecutive ports (TCP and UDP) below the usual ephemeral range.
func portBase(t *testing.T) int {
	t.Helper()
	if v := os.Getenv("RELAY_E2E_PORT_BASE"); v != "" {
		base, err := strconv.Atoi(v)
		if err != nil || base < 1024 || base+portsNeeded > 65535 {
			t.Fatalf("RELAY_E2E_PORT_BASE=%q: want a port between 1024 and %d", v, 65535-portsNeeded)
		}
		return base
	}
	for attempt := 0; attempt < 100; attempt++ {
		base := 20000 + rand.IntN(12000)
		free := true
		for p := base; p < base+portsNeeded && free; p++ {
			free = portFree(p)
		}
		if free {
			return base
		}
	}
	t.Fatal("found no free port range; set RELAY_E2E_PORT_BASE")
	return 0
}

func portFree(p int) bool {
	addr := "127.0.0.1:" + strconv.Itoa(p)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	pc.Close()
	return true
}

// startCluster builds relayd, starts `relayd cluster` (with extra flags) and
// waits (bounded) for cluster.env, which it reads.
func startCluster(t *testing.T, extra ...string) *testCluster {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	tmp := t.TempDir()
	t0 := time.Now()
	bin := buildRelayd(t, tmp)
	t.Logf("built relayd in %s", time.Since(t0).Round(time.Millisecond))

	base := portBase(t)
	c := &testCluster{
		t:        t,
		done:     make(chan struct{}),
		output:   &testlog.Buffer{},
		envPath:  filepath.Join(tmp, "cluster.env"),
		dataDir:  filepath.Join(tmp, "data"),
		restarts: map[int]int{},
		bin:      bin,
	}
	c.cmd = exec.Command(bin, "cluster",
		"--nodes", strconv.Itoa(nodeCount),
		"--data", c.dataDir,
		"--env", c.envPath,
		"--chainPort", strconv.Itoa(base),
		"--apiPortBase", strconv.Itoa(base+1),
		"--adminPortBase", strconv.Itoa(base+1+nodeCount),
		"--p2pPortBase", strconv.Itoa(base+1+2*nodeCount),
		"--mixDelayMean", "0", "--mixDelayMax", "5ms", // uniform 0-5 ms: quick tests
		// Paths of two relayers, no cover traffic, no stream and no automatic redemption or
		// funding: the tests count tickets and amounts per message (TestObserver sets the
		// defaults back through the settings; TestStreamAtDefaults runs with the defaults).
		"--relayers", "2", "--coverRate", "0", "--sendRate", "0", "--autoRedeem=false", "--autoFund=false",
	)
	c.cmd.Args = append(c.cmd.Args, extra...)
	c.netns = slices.Contains(extra, "--netns")
	c.count = nodeCount
	if i := slices.Index(extra, "--nodes"); i >= 0 && i+1 < len(extra) {
		c.count, _ = strconv.Atoi(extra[i+1]) // the last --nodes wins
	}
	c.cmd.Stdout, c.cmd.Stderr = c.output, c.output
	t0 = time.Now()
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start relayd cluster: %v", err)
	}
	go func() {
		c.exitErr = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		if !c.exited() {
			c.cmd.Process.Signal(os.Interrupt)
			select {
			case <-c.done:
			case <-time.After(30 * time.Second):
				c.cmd.Process.Kill()
				<-c.done
			}
		}
		if t.Failed() {
			t.Logf("relayd cluster output:\n%s", c.output.String())
		}
	})

	for {
		if _, err := os.Stat(c.envPath); err == nil {
			break
		}
		if c.exited() {
			t.Fatalf("relayd cluster exited before writing cluster.env (%v):\n%s", c.exitErr, c.output.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cluster.env within %s:\n%s", startTimeout, c.output.String())
		}
		time.Sleep(pollEvery) // polling interval, not synchronisation
	}
	t.Logf("cluster ready %s after start", time.Since(t0).Round(time.Millisecond))
	c.readEnv()
	var info struct{ TokenSymbol string }
	c.mustCall(c.nodes[0], http.MethodGet, "/node/info", "", http.StatusOK, &info)
	c.symbol = info.TokenSymbol
	return c
}

func (c *testCluster) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// envLine is one line of cluster.env: export NAME=value, the value bare or
// single-quoted.
var envLine = regexp.MustCompile(`^export ([A-Z0-9_]+)=(.*)$`)

// readEnv parses cluster.env strictly: every line must be an export line,
// and every variable of DESIGN.md section 8 must be there.
func (c *testCluster) readEnv() {
	t := c.t
	raw, err := os.ReadFile(c.envPath)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := envLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("cluster.env line %q is not an export line", sc.Text())
		}
		v := m[2]
		if strings.HasPrefix(v, "'") {
			v = strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'")
		}
		vars[m[1]] = v
	}
	need := func(name string) string {
		v, ok := vars[name]
		if !ok || v == "" {
			t.Fatalf("cluster.env lacks %s:\n%s", name, raw)
		}
		delete(vars, name)
		return v
	}
	c.token = need("RELAY_API_TOKEN")
	c.chainRPC = need("RELAY_CHAIN_RPC")
	// What one more node needs to join, under the names relayd reads.
	if p := need("RELAYD_PROVIDER"); p != c.chainRPC {
		t.Fatalf("RELAYD_PROVIDER %s, RELAY_CHAIN_RPC %s: want the same chain", p, c.chainRPC)
	}
	c.channels = need("RELAYD_CHANNELS_CONTRACT")
	if tok := need("RELAY_TOKEN_ADDRESS"); !regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`).MatchString(tok) || !regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`).MatchString(c.channels) {
		t.Fatalf("RELAYD_CHANNELS_CONTRACT %q, RELAY_TOKEN_ADDRESS %q: want 0x addresses", c.channels, tok)
	}
	if n := need("RELAY_NODE_COUNT"); n != strconv.Itoa(c.count) {
		t.Fatalf("RELAY_NODE_COUNT=%s, want %d", n, c.count)
	}
	for i := 1; i <= c.count; i++ {
		p := fmt.Sprintf("RELAY_NODE_%d_", i)
		n := node{index: i, peerID: need(p + "PEER_ID"), address: need(p + "NATIVE_ADDRESS"), apiURL: need(p + "API_URL"), wsURL: need(p + "WS_URL")}
		host := `127\.0\.0\.1`
		if c.netns { // node N's own address on the bridge
			host = fmt.Sprintf(`10\.77\.0\.%d`, i+1)
		}
		if !regexp.MustCompile(`^http://`+host+`:\d+$`).MatchString(n.apiURL) || !regexp.MustCompile(`^ws://`+host+`:\d+$`).MatchString(n.wsURL) {
			t.Fatalf("node %d URLs %q %q", i, n.apiURL, n.wsURL)
		}
		c.nodes = append(c.nodes, n)
	}
	if len(vars) != 0 {
		t.Fatalf("cluster.env has unexpected variables %v", vars)
	}
}

// request makes a REST call with the given header and returns status and body.
func (c *testCluster) request(n node, method, path, body string, header http.Header) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(c.t.Context(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.apiURL+"/api/v2"+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header = header
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s on node %d: %v", method, path, n.index, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s on node %d: read: %v", method, path, n.index, err)
	}
	return resp.StatusCode, raw
}

// mustCall makes an authenticated REST call, fails unless the status is
// want and decodes the JSON answer into out (when not nil).
func (c *testCluster) mustCall(n node, method, path, body string, want int, out any) {
	c.t.Helper()
	status, raw := c.request(n, method, path, body, http.Header{"X-Auth-Token": {c.token}})
	if status != want {
		c.t.Fatalf("%s %s on node %d: HTTP %d %s, want %d", method, path, n.index, status, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s on node %d: %s: %v", method, path, n.index, raw, err)
		}
	}
}

// eventually polls cond until it holds or waitTimeout passes.
func (c *testCluster) eventually(what string, cond func() bool) {
	c.t.Helper()
	wait.For(c.t, cond, waitTimeout, what)
}

func parseWei(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("amount %q is not a decimal integer", s)
	}
	return v
}

// balances returns a node's wallet: native and token.
func (c *testCluster) balances(n node) (native, token *big.Int) {
	c.t.Helper()
	var b struct{ Native, Relay string }
	c.mustCall(n, http.MethodGet, "/account/balances", "", http.StatusOK, &b)
	return parseWei(c.t, b.Native), parseWei(c.t, b.Relay)
}

type channelView struct{ Type, ChannelID, PeerID, Status, Balance string }

// holdings is a node's token wallet plus the balances of its open outgoing
// channels: what it owns, wherever it sits.
func (c *testCluster) holdings(n node) *big.Int {
	c.t.Helper()
	_, h := c.balances(n)
	var list struct{ Incoming, Outgoing []channelView }
	c.mustCall(n, http.MethodGet, "/channels", "", http.StatusOK, &list)
	for _, ch := range list.Outgoing {
		h.Add(h, parseWei(c.t, ch.Balance))
	}
	return h
}

type ticketView struct {
	ChannelID, Counterparty, Amount, Index, ChannelEpoch, WinProb, Challenge, Signature string
}

func (c *testCluster) tickets(n node) []ticketView {
	c.t.Helper()
	var list []ticketView
	c.mustCall(n, http.MethodGet, "/tickets", "", http.StatusOK, &list)
	return list
}

// sendMessage sends body from one node to another over REST.
func (c *testCluster) sendMessage(from, to node, body string) {
	c.t.Helper()
	var ack string
	c.mustCall(from, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, body, to.peerID), http.StatusAccepted, &ack)
	if !regexp.MustCompile(`^0x0[23][0-9a-f]{64}$`).MatchString(ack) {
		c.t.Fatalf("ack challenge %q", ack)
	}
}

// rpc calls the chain's JSON-RPC.
func (c *testCluster) rpc(method string, params []any, out any) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(c.chainRPC, "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error != nil {
		c.t.Fatalf("%s: %v %+v", method, err, r.Error)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		c.t.Fatalf("%s: %s: %v", method, r.Result, err)
	}
}

// waitIndexed waits until every node has indexed the block of the
// transaction tx (a receipt returned by a REST call).
func (c *testCluster) waitIndexed(tx string) {
	c.t.Helper()
	var rcpt struct{ BlockNumber string }
	c.rpc("eth_getTransactionReceipt", []any{tx}, &rcpt)
	block, err := strconv.ParseUint(strings.TrimPrefix(rcpt.BlockNumber, "0x"), 16, 64)
	if err != nil {
		c.t.Fatalf("receipt of %s: block %q", tx, rcpt.BlockNumber)
	}
	for _, n := range c.nodes {
		c.eventually(fmt.Sprintf("node %d indexed block %d", n.index, block), func() bool {
			var info struct{ IndexedBlock uint64 }
			c.mustCall(n, http.MethodGet, "/node/info", "", http.StatusOK, &info)
			return info.IndexedBlock > block
		})
	}
}

// frame is one admin WebSocket frame.
type frame struct{ Type, Msg, Ts string }

// admin is an admin WebSocket connection that collects frames.
type admin struct {
	t      *testing.T
	conn   *websocket.Conn
	frames chan frame
}

// dialAdmin connects to n's admin WebSocket with token.
func (c *testCluster) dialAdmin(n node, token string) *admin {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), waitTimeout)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, n.wsURL+"/?apiToken="+url.QueryEscape(token), nil)
	if err != nil {
		c.t.Fatalf("dial node %d's admin WebSocket: %v", n.index, err)
	}
	a := &admin{t: c.t, conn: conn, frames: make(chan frame, 4096)}
	c.t.Cleanup(func() { conn.CloseNow() })
	go func() {
		defer close(a.frames)
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var f frame
			if json.Unmarshal(b, &f) != nil {
				f = frame{Type: "invalid", Msg: string(b)}
			}
			a.frames <- f
		}
	}()
	return a
}

// connectedNotice is the frame that ends the replay a new client gets.
const connectedNotice = "ws client connected [ authentication ENABLED ]"

// watchAdmin connects to n's admin WebSocket and skips the replayed frames:
// it returns once this connection's own notice arrived (earlier clients'
// notices in the replay are older than the dial).
func (c *testCluster) watchAdmin(n node) *admin {
	c.t.Helper()
	dialed := time.Now().UTC().Truncate(time.Millisecond)
	a := c.dialAdmin(n, c.token)
	a.until(func(f frame) bool {
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", f.Ts)
		return f.Msg == connectedNotice && err == nil && !ts.Before(dialed)
	})
	return a
}

// next returns the next frame that is not one of the node's own log lines
// ("level=…"), within waitTimeout; ok is false when the socket closed.
func (a *admin) next() (frame, bool) {
	a.t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case f, ok := <-a.frames:
			if !ok {
				return frame{}, false
			}
			if strings.HasPrefix(f.Msg, "level=") {
				continue
			}
			return f, true
		case <-timeout.C:
			a.t.Fatalf("no admin frame within %s", waitTimeout)
		}
	}
}

// until returns the frames up to and including the first that matches.
func (a *admin) until(match func(frame) bool) []frame {
	a.t.Helper()
	var seen []frame
	for {
		f, ok := a.next()
		if !ok {
			a.t.Fatalf("admin socket closed; frames so far %+v", seen)
		}
		seen = append(seen, f)
		if match(f) {
			return seen
		}
	}
}

// command sends one command line and returns the log frames after its echo
// until one matches done.
func (a *admin) command(line string, done func(string) bool) []string {
	a.t.Helper()
	if err := a.conn.Write(a.t.Context(), websocket.MessageText, []byte(line)); err != nil {
		a.t.Fatal(err)
	}
	a.until(func(f frame) bool { return f.Msg == "admin > "+line })
	var out []string
	for {
		f, ok := a.next()
		if !ok {
			a.t.Fatalf("%s: socket closed after %q", line, out)
		}
		out = append(out, f.Msg)
		if done(f.Msg) {
			return out
		}
	}
}

var (
	headerLine  = regexp.MustCompile(`^#### NODE RECEIVED MESSAGE \[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] ####$`)
	latencyLine = regexp.MustCompile(`^Latency: \d+ ms$`)
	tsFormat    = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

// expectMessage reads the four frames of a received message: the header,
// the text, the latency, then the message frame.
func (a *admin) expectMessage(text string) {
	a.t.Helper()
	seen := a.until(func(f frame) bool { return strings.HasPrefix(f.Msg, "#### NODE RECEIVED MESSAGE [") })
	if h := seen[len(seen)-1]; h.Type != "log" || !headerLine.MatchString(h.Msg) || !tsFormat.MatchString(h.Ts) {
		a.t.Fatalf("header frame of %q: %+v", text, h)
	}
	for i, check := range []func(frame) bool{
		func(f frame) bool { return f.Type == "log" && f.Msg == "Message: "+text },
		func(f frame) bool { return f.Type == "log" && latencyLine.MatchString(f.Msg) },
		func(f frame) bool { return f.Type == "message" && f.Msg == text },
	} {
		f, ok := a.next()
		if !ok || !check(f) || !tsFormat.MatchString(f.Ts) {
			a.t.Fatalf("frame %d after the header of %q: %+v", i+2, text, f)
		}
	}
}

// stop sends SIGINT to the cluster and waits (bounded) for it to exit.
func (c *testCluster) stop(bound time.Duration) (time.Duration, error) {
	c.t.Helper()
	t0 := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		c.t.Fatalf("SIGINT: %v", err)
	}
	select {
	case <-c.done:
		return time.Since(t0), c.exitErr
	case <-time.After(bound):
		c.t.Fatalf("relayd cluster still running %s after SIGINT:\n%s", bound, c.output.String())
		return 0, nil
	}
}

// nodePID finds the process of node n by its data directory on the command line (0: none).
func (c *testCluster) nodePID(n node) int {
	c.t.Helper()
	want := filepath.Join(c.dataDir, fmt.Sprintf("node-%d", n.index)) + "\x00"
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "\x00--data\x00"+want) {
			return pid
		}
	}
	return 0
}

// dropIncoming makes n's host (a --netns cluster) drop each packet it receives with probability
// p, at random: `iptables -A INPUT -m statistic --mode random --probability p -j DROP` in n's
// namespace. The returned function removes the rule again and reports how many packets it
// dropped; the rule goes with the namespace at the latest.
func (c *testCluster) dropIncoming(n node, p float64) (remove func() (hits uint64)) {
	c.t.Helper()
	return c.inputRule(n, "-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(p, 'f', -1, 64), "-j", "DROP")
}

// resetIncoming makes n's host answer every nth TCP packet it receives from another node, from
// the (n/2)th on, with a reset instead (`-m statistic --mode nth --every n --packet n/2 -j REJECT
// --reject-with tcp-reset`; a packet may be several segments the veth merged): the
// connection ends, and with it whatever was under way on it, as when a middlebox drops a
// connection. The chain and the test's own requests (from the bridge's address) are spared. The
// returned function removes the rule and reports how many packets it answered so.
func (c *testCluster) resetIncoming(n node, every int) (remove func() (hits uint64)) {
	c.t.Helper()
	return c.inputRule(n, "-p", "tcp", "!", "-s", c.bridgeAddr(), "-m", "statistic", "--mode", "nth",
		"--every", strconv.Itoa(every), "--packet", strconv.Itoa(every/2), "-j", "REJECT", "--reject-with", "tcp-reset")
}

// bridgeAddr is the address of a --netns cluster's bridge (the chain's host).
func (c *testCluster) bridgeAddr() string {
	u, err := url.Parse(c.chainRPC)
	if err != nil {
		c.t.Fatal(err)
	}
	return u.Hostname()
}

// inputRule appends rule to the INPUT chain of n's host (`ip netns exec <host> iptables -A
// INPUT <rule>`) and returns a function that reports how many packets it matched and removes it.
// The rule must be the chain's only one with its target.
func (c *testCluster) inputRule(n node, rule ...string) (remove func() (hits uint64)) {
	c.t.Helper()
	if !c.netns {
		c.t.Fatal("iptables rules need a cluster in network namespaces (--netns)")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		c.t.Fatal("iptables is not installed (scripts/setup.sh installs it as root)")
	}
	ns := fmt.Sprintf("%s-n%d", hostnet.DefaultPrefix, n.index) // hostnet's name of host n
	target := rule[slices.Index(rule, "-j")+1]
	rule = append([]string{"INPUT"}, rule...)
	iptables := func(args ...string) (string, error) {
		out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "iptables"}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("iptables %s in %s: %v: %s", strings.Join(args, " "), ns, err, bytes.TrimSpace(out))
		}
		return string(out), nil
	}
	if _, err := iptables(append([]string{"-A"}, rule...)...); err != nil {
		c.t.Fatal(err)
	}
	t := c.t
	return func() uint64 {
		t.Helper()
		list, err := iptables("-L", "INPUT", "-v", "-x", "-n") // exact counters: pkts bytes target …
		if err != nil {
			t.Fatal(err)
		}
		var hits uint64
		for _, line := range strings.Split(list, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[2] == target {
				hits, _ = strconv.ParseUint(f[0], 10, 64)
			}
		}
		if _, err := iptables(append([]string{"-D"}, rule...)...); err != nil {
			t.Fatal(err)
		}
		return hits
	}
}
