package node

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/identity"
)

// childConfigEnv names the configuration file of a node this test binary runs as a child
// process (TestRelayerKilledMidTraffic), until it is killed.
const childConfigEnv = "RELAYD_NODE_TEST_CHILD_CONFIG"

// childOneTicketBatchesEnv makes a child node redeem one ticket a transaction
// (TestRedeemerKilledMidBatch).
const childOneTicketBatchesEnv = "RELAYD_NODE_TEST_ONE_TICKET_BATCHES"

func TestMain(m *testing.M) {
	if path := os.Getenv(childConfigEnv); path != "" {
		os.Exit(runChild(path))
	}
	os.Exit(m.Run())
}

func runChild(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	var opts Options
	if os.Getenv(childOneTicketBatchesEnv) != "" {
		opts.RedeemOptions = []chain.RedeemOption{chain.WithRedeemBatchGas(chain.EstimateRedeemGas(1, 1))}
	}
	var cfg config.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	n, err := New(cfg, os.Stderr, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	if err := n.Run(context.Background()); err != nil { // until killed
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// onFixedPorts gives cfg's REST, admin and p2p servers ports that were free a moment ago, so that a
// node restarted on the same configuration comes back where it was announced.
func onFixedPorts(t *testing.T, cfg config.Config) config.Config {
	t.Helper()
	cfg.APIPort, cfg.AdminPort = freePort(t), freePort(t)
	cfg.Host = "127.0.0.1:" + strconv.Itoa(freePort(t))
	return cfg
}

// childNode is a node running as its own process (this test binary, see TestMain) until it is
// killed with SIGKILL, at the latest when the test ends.
type childNode struct {
	id   *identity.Identity
	url  string // REST server, http://127.0.0.1:port
	kill func()
}

// startChild starts a node process on cfg (fixed ports: onFixedPorts), with env added to its
// environment.
func startChild(t *testing.T, cfg config.Config, env ...string) *childNode {
	t.Helper()
	id, err := identity.Load(cfg.Identity, cfg.Password)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(t.TempDir(), "node.json")
	if err := os.WriteFile(cfgPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(append(os.Environ(), childConfigEnv+"="+cfgPath), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	c := &childNode{id: id, url: "http://127.0.0.1:" + strconv.Itoa(cfg.APIPort), kill: func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		})
	}}
	t.Cleanup(c.kill)
	return c
}

// TestRelayerKilledMidTraffic: a relayer running as its own process is killed with SIGKILL while
// paid messages flow through it. Every ticket it had reported acknowledged is in its store when
// it starts again from the same data directory, and it relays again: its incoming indexes
// continue, its outgoing ones never go back, and the messages it forwards are delivered.
func TestRelayerKilledMidTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain, three nodes and a node process")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	node := func() *Node { return startNode(t, fundedNodeConfig(t, ch, tokens(100))) }
	a, r2, b := node(), node(), node()
	net.nodes = []*Node{a, r2, b}

	// R1: its own process, on fixed ports so that it comes back where it was announced.
	r1cfg := onFixedPorts(t, fundedNodeConfig(t, ch, tokens(100)))
	child := startChild(t, r1cfg)
	r1id, r1url, kill := child.id, child.url, child.kill

	net.eventually("every node sees the four announcements", func() bool {
		for _, n := range net.nodes {
			if info := nodeInfo(n); info.PeersAnnounced != 4 {
				return false
			}
		}
		return true
	})
	openTo := func(fromURL string, from common.Address, to *identity.Identity, amount *big.Int) {
		t.Helper()
		if s := net.callURL(fromURL, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, to.PeerID(), amount.String()), nil); s != http.StatusCreated {
			t.Fatalf("open channel: %d", s)
		}
		net.eventually("the channel is indexed", func() bool {
			c, ok := a.chain.graph.Channel(from, to.Address())
			return ok && c.Balance.Cmp(amount) == 0
		})
	}
	apiURL := func(n *Node) string { return "http://" + n.APIAddr().String() }
	openTo(apiURL(a), a.id.Address(), r1id, tokens(50))
	// After a crash R1 counts up to ledger.IssuedSlack of tickets as signed (PROTOCOL.md §4.5):
	// 77 × 0.10, 7.70 of the 50 tokens.
	openTo(r1url, r1id.Address(), r2.id, tokens(50))
	openTo(apiURL(r2), r2.id.Address(), b.id, tokens(50))

	delivered := func() int {
		v, _ := strconv.Atoi(net.metricURL(apiURL(b), "relayd_message_latency_seconds_count"))
		return v
	}
	post := func(text string) int {
		return net.call(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, b.id.PeerID()), nil)
	}

	// Traffic until R1 has acknowledged tickets to lose, then SIGKILL right after reading how many
	// it reported stored.
	stopTraffic := traffic(func(i int) { post(fmt.Sprintf("before the crash %d", i)) })
	var reported int
	net.eventually("R1 reports acknowledged tickets", func() bool {
		reported, _ = strconv.Atoi(net.metricURL(r1url, "relayd_relay_tickets_acknowledged_total"))
		return reported >= 50
	})
	kill()
	stopTraffic()

	r1 := startNode(t, r1cfg)
	var stored []ticketView
	net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &stored)
	if len(stored) < reported {
		t.Fatalf("R1 reported %d acknowledged tickets before SIGKILL, %d are stored", reported, len(stored))
	}
	seen := map[string]bool{}
	for _, tk := range stored {
		// A's PeerId: the restarted R1 knows A's announcement from its store at once.
		if tk.Counterparty != a.id.PeerID().String() || seen[tk.Index] {
			t.Fatalf("stored ticket %+v (duplicate index: %v)", tk, seen[tk.Index])
		}
		seen[tk.Index] = true
	}

	// R1 relays again once A has reconnected: a probe message gets through, then every one of
	// ten more accepted messages arrives, and R2 acknowledges each to R1 (its stream to the old
	// R1 died with it: internal/p2p repeats the write on a new one instead of backing off).
	net.eventually("a message gets through the restarted R1", func() bool {
		before := delivered()
		if post("probe") != http.StatusAccepted {
			return false
		}
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if delivered() > before {
				return true
			}
			time.Sleep(20 * time.Millisecond) // polling B's counter, bounded by the deadline
		}
		return false
	})
	before := delivered()
	for i := range 10 {
		if s := post(fmt.Sprintf("after the restart %d", i)); s != http.StatusAccepted {
			t.Fatalf("message %d after the restart: %d", i, s)
		}
	}
	net.eventually("all ten arrive", func() bool { return delivered() >= before+10 })
	var after []ticketView
	net.eventually("R1 stores the new tickets", func() bool {
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &after)
		return len(after) >= len(stored)+10
	})
}
