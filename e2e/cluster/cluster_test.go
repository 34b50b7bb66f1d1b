package cluster_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// authFailureBody is the 403 body of DESIGN.md section 2.1.
const authFailureBody = `{"status":403,"challenge":"Basic realm=relayd","message":"You must authenticate to access relayd."}`

// TestCluster starts one cluster and runs the suite against it in order
// (later steps depend on the balances earlier ones leave), then stops it.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes")
	}
	c := startCluster(t, "--restartNodes", "--restartDelay", "200ms")
	steps := []struct {
		name string
		run  func(*testing.T, *testCluster)
	}{
		{"Authentication", testAuthentication},
		{"Addresses", testAddresses},
		{"Balances", testBalances},
		{"PaidMessagesOverTwoRelayers", testPaidMessages},
		{"DirectSend", testDirectSend},
		{"ClosedChannelsAreRoutedAround", testRouteAround},
		{"Withdraw", testWithdraw},
		{"NodeKilledIsRestarted", testNodeKilledIsRestarted},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) {
			c.t = t
			defer func() { c.t = nil }()
			s.run(t, c)
		}) {
			break // later steps rely on this one's effects
		}
	}
	c.t = t
	t.Run("StopWithSIGINT", func(t *testing.T) { c.t = t; testStop(t, c) })
}

// testAuthentication: REST without a token, with a wrong one (both header
// forms, and the token Base64-encoded with a trailing newline) get 403 and
// exactly the failure body; the WebSocket with a wrong token gets one
// auth-failed frame and is closed; the right token works on both.
func testAuthentication(t *testing.T, c *testCluster) {
	n := c.nodes[0]
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"no token", http.Header{}},
		{"wrong x-auth-token", http.Header{"X-Auth-Token": {c.token + "x"}}},
		{"wrong Basic", http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("wrong-token"))}}},
		{"Basic with a trailing newline", http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(c.token+"\n"))}}},
	} {
		status, body := c.request(n, http.MethodGet, "/account/addresses", "", tc.header)
		// The node ends its JSON bodies with one newline; the rest must match byte for byte.
		if status != http.StatusForbidden || strings.TrimSuffix(string(body), "\n") != authFailureBody {
			t.Errorf("%s: HTTP %d %q, want 403 %s", tc.name, status, body, authFailureBody)
		}
	}
	if status, body := c.request(n, http.MethodGet, "/account/address", "", http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(c.token))}}); status != http.StatusOK {
		t.Errorf("right token as Basic: HTTP %d %s", status, body)
	}

	bad := c.dialAdmin(n, c.token+"-wrong")
	f, ok := bad.next()
	if !ok || f.Type != "auth-failed" || f.Msg != "authentication failed" || !tsFormat.MatchString(f.Ts) {
		t.Errorf("wrong WebSocket token: first frame %+v (open %v), want auth-failed", f, ok)
	}
	if f, ok := bad.next(); ok {
		t.Errorf("socket with a wrong token still open, sent %+v", f)
	}
	c.watchAdmin(n) // fails unless this client's connected notice arrives
}

// testAddresses: both address operations name the node cluster.env names.
func testAddresses(t *testing.T, c *testCluster) {
	for _, n := range c.nodes {
		var a struct{ NativeAddress, RelayAddress string }
		c.mustCall(n, http.MethodGet, "/account/address", "", http.StatusOK, &a)
		if a.NativeAddress != n.address || a.RelayAddress != n.peerID {
			t.Errorf("node %d /account/address %+v, want %s %s", n.index, a, n.address, n.peerID)
		}
		var b struct{ NativeAddress, Native, RelayAddress, Relay string }
		c.mustCall(n, http.MethodGet, "/account/addresses", "", http.StatusOK, &b)
		if b.NativeAddress != n.address || b.Native != n.address || b.RelayAddress != n.peerID || b.Relay != n.peerID {
			t.Errorf("node %d /account/addresses %+v", n.index, b)
		}
	}
}

// testBalances: every node holds the cluster's funding: 100 tokens besides
// four channels of 100 tokens, and native coins for gas.
func testBalances(t *testing.T, c *testCluster) {
	for _, n := range c.nodes {
		native, token := c.balances(n)
		if token.Cmp(tokens(100)) != 0 {
			t.Errorf("node %d token balance %s, want 100 tokens", n.index, token)
		}
		if native.Cmp(tokens(99)) < 0 || native.Cmp(tokens(100)) >= 0 {
			t.Errorf("node %d native balance %s, want just under 100 coins (gas paid)", n.index, native)
		}
		var list struct{ Incoming, Outgoing []channelView }
		c.mustCall(n, http.MethodGet, "/channels", "", http.StatusOK, &list)
		if len(list.Outgoing) != nodeCount-1 || len(list.Incoming) != nodeCount-1 {
			t.Fatalf("node %d channels %+v, want a full mesh", n.index, list)
		}
		for _, ch := range list.Outgoing {
			if ch.Status != "Open" || ch.Balance != tokens(100).String() {
				t.Errorf("node %d outgoing channel %+v", n.index, ch)
			}
		}
	}
}

// testPaidMessages: node 1 sends three messages to node 5 over REST; each
// arrives on node 5's WebSocket with its four frames. The relayers are the
// nodes other than the recipient whose tickets are not empty afterwards: two
// per message, neither the sender nor the recipient, worth 0.02 plus the
// sender's padding and 0.01 less (PROTOCOL.md §4.5); the recipient holds the
// padding, as tickets worth more than 0. After redeeming, each relayer's
// holdings (wallet plus outgoing channels) rose by 0.01 per message it
// relayed, the recipient's by the padding, and the sender's fell by 0.02 per
// message plus the padding.
func testPaidMessages(t *testing.T, c *testCluster) {
	sender, recipient := c.nodes[0], c.nodes[nodeCount-1]
	before := map[int]*big.Int{}
	for _, n := range c.nodes {
		before[n.index] = c.holdings(n)
	}
	watch := c.watchAdmin(recipient)
	const messages = 3
	for i := range messages {
		text := fmt.Sprintf("hello private world %d", i)
		c.sendMessage(sender, recipient, text)
		watch.expectMessage(text)
	}

	counts := map[int]int{}
	c.eventually("every relayer's ticket is acknowledged, the recipient's stored", func() bool {
		relayed := 0
		for _, n := range c.nodes {
			counts[n.index] = len(c.tickets(n))
			if n != recipient {
				relayed += counts[n.index]
			}
		}
		var st struct{ Pending int }
		c.mustCall(recipient, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
		return relayed == 2*messages && st.Pending == 0
	})
	if counts[sender.index] != 0 || counts[recipient.index] > messages {
		t.Fatalf("tickets per node %v: the sender is no relayer, the recipient holds at most one per message", counts)
	}
	maxFirst := new(big.Int).Mul(cent, big.NewInt(9)) // 0.02 plus the largest padding, 0.07
	maxPad := new(big.Int).Mul(cent, big.NewInt(7))
	for _, n := range c.nodes {
		for _, tk := range c.tickets(n) {
			a := parseWei(t, tk.Amount)
			if n == recipient && (a.Sign() <= 0 || a.Cmp(maxPad) > 0) {
				t.Errorf("recipient's ticket amount %s, want 0.01 to 0.07", tk.Amount)
			}
			if n != recipient && (a.Cmp(cent) < 0 || a.Cmp(maxFirst) > 0) {
				t.Errorf("node %d ticket amount %s, want 0.01 to 0.09", n.index, tk.Amount)
			}
		}
	}
	t.Logf("tickets per node after %d messages: %v", messages, counts)

	padding := new(big.Int)
	for _, n := range c.nodes {
		if counts[n.index] > 0 {
			c.mustCall(n, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
			if left := c.tickets(n); len(left) != 0 {
				t.Errorf("node %d still lists %d tickets after redeeming", n.index, len(left))
			}
			var st struct {
				Redeemed      int
				RedeemedValue string
			}
			c.mustCall(n, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
			if st.Redeemed != counts[n.index] {
				t.Errorf("node %d statistics %+v, want %d redeemed", n.index, st, counts[n.index])
			}
			if n == recipient {
				padding = parseWei(t, st.RedeemedValue)
			}
		}
	}
	want := func(n node) *big.Int {
		d := new(big.Int).Mul(cent, big.NewInt(int64(counts[n.index])))
		switch n {
		case recipient:
			d.Set(padding)
		case sender:
			d.Sub(d, new(big.Int).Mul(cent, big.NewInt(2*messages)))
			d.Sub(d, padding)
		}
		return d.Add(d, before[n.index])
	}
	for _, n := range c.nodes {
		var got *big.Int
		c.eventually(fmt.Sprintf("node %d's holdings settle", n.index), func() bool {
			got = c.holdings(n)
			return got.Cmp(want(n)) == 0
		})
	}
}

// testDirectSend: the admin command `send ,<peer> <msg>` delivers a 0-hop
// message for free: it arrives and nobody gets a ticket.
func testDirectSend(t *testing.T, c *testCluster) {
	sender, recipient := c.nodes[1], c.nodes[2]
	watch := c.watchAdmin(recipient)
	a := c.watchAdmin(sender)
	out := a.command("send ,"+recipient.peerID+" direct hello", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+recipient.peerID+" over 0 relayers") {
		t.Fatalf("send 0-hop: %q", out)
	}
	watch.expectMessage("direct hello")
	for _, n := range c.nodes {
		if tk := c.tickets(n); len(tk) != 0 {
			t.Errorf("node %d holds %d tickets after a 0-hop message", n.index, len(tk))
		}
	}
}

// testRouteAround: node 5 closes its incoming channels from nodes 2 and 3
// (a recipient closes at once). Once every node indexed that, every message
// from node 1 to node 5 still arrives, and node 4, the only node left with
// an open channel into node 5 besides the sender, relays each of them last.
func testRouteAround(t *testing.T, c *testCluster) {
	sender, recipient, last := c.nodes[0], c.nodes[4], c.nodes[3]
	for _, closed := range []node{c.nodes[1], c.nodes[2]} {
		var r struct{ Receipt, ChannelStatus string }
		c.mustCall(recipient, http.MethodDelete, "/channels/"+closed.peerID+"/incoming", "", http.StatusOK, &r)
		if r.Receipt == "" {
			t.Fatalf("closing node %d → 5 sent nothing: %+v", closed.index, r)
		}
		c.waitIndexed(r.Receipt)
		var ch channelView
		c.mustCall(recipient, http.MethodGet, "/channels/"+closed.peerID+"/incoming", "", http.StatusOK, &ch)
		if ch.Status != "Closed" {
			t.Fatalf("node %d → 5 after closing: %+v", closed.index, ch)
		}
	}
	var list struct{ Incoming, Outgoing []channelView }
	c.mustCall(recipient, http.MethodGet, "/channels", "", http.StatusOK, &list)
	if len(list.Incoming) != nodeCount-3 {
		t.Fatalf("node 5's open incoming channels %+v, want 2", list.Incoming)
	}

	watch := c.watchAdmin(recipient)
	const messages = 4
	for i := range messages {
		text := fmt.Sprintf("around %d", i)
		c.sendMessage(sender, recipient, text)
		watch.expectMessage(text)
	}
	c.eventually("node 4 holds a ticket for every message", func() bool { return len(c.tickets(last)) == messages })
}

// testWithdraw: node 2 withdraws tokens and native coins to node 3's
// address; node 3's wallet rises by exactly the amounts; too much is refused.
func testWithdraw(t *testing.T, c *testCluster) {
	from, to := c.nodes[1], c.nodes[2]
	fromNative, fromToken := c.balances(from)
	toNative, toToken := c.balances(to)
	for _, w := range []struct {
		currency string
		amount   *big.Int
	}{{c.symbol, tokens(2)}, {"NATIVE", tokens(1)}} {
		var r struct{ Receipt string }
		c.mustCall(from, http.MethodPost, "/account/withdraw", fmt.Sprintf(`{"amount":%q,"currency":%q,"recipient":%q}`, w.amount.String(), w.currency, to.address), http.StatusOK, &r)
		if len(r.Receipt) != 66 {
			t.Fatalf("withdraw %s: receipt %q", w.currency, r.Receipt)
		}
	}
	native, token := c.balances(to)
	if d := new(big.Int).Sub(token, toToken); d.Cmp(tokens(2)) != 0 {
		t.Errorf("recipient's tokens rose by %s, want 2 tokens", d)
	}
	if d := new(big.Int).Sub(native, toNative); d.Cmp(tokens(1)) != 0 {
		t.Errorf("recipient's native coins rose by %s, want 1", d)
	}
	native, token = c.balances(from)
	if d := new(big.Int).Sub(fromToken, token); d.Cmp(tokens(2)) != 0 {
		t.Errorf("sender's tokens fell by %s, want 2 tokens", d)
	}
	if d := new(big.Int).Sub(fromNative, native); d.Cmp(tokens(1)) <= 0 || d.Cmp(new(big.Int).Add(tokens(1), cent)) > 0 {
		t.Errorf("sender's native coins fell by %s, want 1 plus a little gas", d)
	}
	status, body := c.request(from, http.MethodPost, "/account/withdraw", fmt.Sprintf(`{"amount":%q,"currency":%q,"recipient":%q}`, tokens(1000).String(), c.symbol, to.address), http.Header{"X-Auth-Token": {c.token}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "NOT_ENOUGH_BALANCE") {
		t.Errorf("withdraw over balance: HTTP %d %s", status, body)
	}
}

// testStop: SIGINT stops the cluster with exit status 0 within a bound,
// removes cluster.env, keeps the --data directory with the nodes' logs, and
// no node answers any more.
func testStop(t *testing.T, c *testCluster) {
	took, err := c.stop(30 * time.Second)
	if err != nil {
		t.Fatalf("relayd cluster exited with %v after SIGINT:\n%s", err, c.output.String())
	}
	t.Logf("stopped in %s", took.Round(time.Millisecond))
	if _, err := os.Stat(c.envPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster.env still there after the stop: %v", err)
	}
	for i := 1; i <= nodeCount; i++ {
		if _, err := os.Stat(filepath.Join(c.dataDir, fmt.Sprintf("node-%d", i), "relayd.log")); err != nil {
			t.Errorf("--data not kept: %v", err)
		}
	}
	for _, n := range c.nodes {
		if resp, err := http.Get(n.apiURL + "/api/v2/node/version"); err == nil {
			resp.Body.Close()
			t.Errorf("node %d still answers after the stop", n.index)
		}
	}
}

// TestClusterInNamespaces starts `relayd cluster --netns` (root only): every node in its own
// network namespace on a bridge, so nodes announce and dial 10.77.0.x addresses as on separate
// hosts. Paid and direct messages cross the hosts, every announced address is the node's own,
// and a stop removes every namespace and link the command made.
func TestClusterInNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("relayd cluster --netns creates network namespaces: needs root")
	}
	c := startCluster(t, "--netns", "--linkRate", "100mbit")
	if !strings.HasPrefix(c.chainRPC, "http://10.77.0.1:") {
		t.Fatalf("RELAY_CHAIN_RPC %s, want the bridge's address", c.chainRPC)
	}
	for _, n := range c.nodes {
		var peers struct {
			Connected []struct {
				PeerID     string   `json:"peerId"`
				MultiAddrs []string `json:"multiAddrs"`
			} `json:"connected"`
		}
		c.eventually(fmt.Sprintf("node %d is connected to every other node", n.index), func() bool {
			c.mustCall(n, http.MethodGet, "/node/peers", "", http.StatusOK, &peers)
			return len(peers.Connected) == nodeCount-1
		})
		for _, p := range peers.Connected {
			for _, a := range p.MultiAddrs {
				if !strings.HasPrefix(a, "/ip4/10.77.0.") {
					t.Fatalf("node %d knows peer %s at %s, not at its namespace address", n.index, p.PeerID, a)
				}
			}
		}
	}
	for _, s := range []struct {
		name string
		run  func(*testing.T, *testCluster)
	}{{"PaidMessagesOverTwoRelayers", testPaidMessages}, {"DirectSend", testDirectSend}} {
		if !t.Run(s.name, func(t *testing.T) {
			c.t = t
			defer func() { c.t = nil }()
			s.run(t, c)
		}) {
			break
		}
	}
	c.t = t
	if _, err := c.stop(30 * time.Second); err != nil {
		t.Fatalf("relayd cluster exited with %v after SIGINT:\n%s", err, c.output.String())
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "rlyd-") {
			t.Errorf("namespace %s left after the stop", e.Name())
		}
	}
	if _, err := os.Stat("/sys/class/net/rlyd0"); err == nil {
		t.Error("bridge rlyd0 left after the stop")
	}
}

// testNodeKilledIsRestarted: node 3 is killed with SIGKILL; the cluster says so and keeps the
// other nodes running, restarts node 3 on its data (--restartNodes), and node 3 serves, reaches
// its peers and receives a direct message again within seconds.
func testNodeKilledIsRestarted(t *testing.T, c *testCluster) {
	victim := c.nodes[2]
	pid := c.nodePID(victim)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.eventually("the cluster reports the restart", func() bool {
		return strings.Contains(c.output.String(), "node 3 restarted")
	})
	if c.exited() {
		t.Fatalf("relayd cluster stopped when one node died:\n%s", c.output.String())
	}
	if c.nodePID(victim) == pid {
		t.Fatal("node 3 runs under its old pid")
	}
	c.eventually("node 3 reaches its peers again", func() bool {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, victim.apiURL+"/api/v2/node/peers", nil)
		req.Header.Set("x-auth-token", c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false // not serving yet
		}
		defer resp.Body.Close()
		var peers struct{ Connected []struct{ PeerID string } }
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&peers) == nil && len(peers.Connected) == nodeCount-1
	})
	watch := c.watchAdmin(victim)
	out := c.watchAdmin(c.nodes[0]).command("send ,"+victim.peerID+" back again", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+victim.peerID) {
		t.Fatalf("send 0-hop: %q", out)
	}
	watch.expectMessage("back again")
}
