package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"github.com/relayd/relayd/internal/testlog"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/wait"
)

const (
	gethNodes    = 4 // a sender, two relayers, a recipient
	nodePassword = "relayd-e2e-geth"
	nodeWait     = 45 * time.Second
)

// relaydNode is one relayd process the test started against geth.
type relaydNode struct {
	index   int
	peerID  string
	address common.Address
	api     string
	token   string
	out     *testlog.Buffer
}

// deployOnGeth funds a new deployer from geth's dev account, deploys the contracts with it and
// returns the deployment and the deployer's client.
func deployOnGeth(t *testing.T, url string, closurePeriod time.Duration) (chain.Deployment, *chain.Client) {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	fundFromDevAccount(t, url, crypto.PubkeyToAddress(key.PublicKey), tokens(1000))
	eth, err := ethclient.DialContext(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	d, err := chain.Deploy(t.Context(), eth, key, closurePeriod, tokens(1_000_000))
	if err != nil {
		t.Fatalf("deploy on geth: %v", err)
	}
	return d, dialGeth(t, url, key, d.Channels)
}

func dialGeth(t *testing.T, url string, key *ecdsa.PrivateKey, channels common.Address) *chain.Client {
	t.Helper()
	c, err := chain.Dial(t.Context(), chain.Config{ProviderURL: url, Key: key, Channels: channels, Logger: quiet,
		ReceiptPoll: 50 * time.Millisecond, StallTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// freePorts returns n distinct ports free for TCP and UDP (a node's p2p port takes both).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		held = append(held, u)
		out = append(out, p)
	}
	return out
}

// startRelayd starts a relayd node process on geth with a fresh identity funded with native
// coins and tokens, and returns it once its REST API answers.
func startRelayd(t *testing.T, bin, url string, d chain.Deployment, index int, id *identity.Identity) *relaydNode {
	t.Helper()
	dir := t.TempDir()
	if err := id.Save(filepath.Join(dir, "identity.json"), nodePassword, identity.LightScrypt); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	n := &relaydNode{index: index, peerID: id.PeerID().String(), address: id.Address(),
		api: "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/api/v2", token: fmt.Sprintf("e2e-geth-token-%d", index), out: &testlog.Buffer{}}
	cmd := exec.Command(bin, "--data", dir, "--identity", filepath.Join(dir, "identity.json"),
		"--apiHost", "127.0.0.1", "--apiPort", strconv.Itoa(ports[0]),
		"--adminHost", "127.0.0.1", "--adminPort", strconv.Itoa(ports[1]),
		"--host", "127.0.0.1:"+strconv.Itoa(ports[2]),
		"--provider", url, "--channelsContract", d.Channels.Hex(),
		// No cover, no stream, no automatic redemption or funding: the test counts each
		// relayer's tickets and redeems them itself.
		"--mixDelayMean", "0", "--mixDelayMax", "5ms", "--relayers", "2", "--coverRate", "0",
		"--sendRate", "0", "--autoRedeem=false", "--autoFund=false")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RELAYD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, config.EnvName("apiToken")+"="+n.token, config.EnvName("password")+"="+nodePassword)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start relayd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("node %d output:\n%s", index, n.out.String())
		}
	})
	wait.For(t, func() bool {
		select {
		case <-done:
			t.Fatalf("node %d exited:\n%s", index, n.out.String())
		default:
		}
		status, _ := n.call(t, http.MethodGet, "/node/info", "")
		return status == http.StatusOK
	}, nodeWait, fmt.Sprintf("node %d answers", index))
	return n
}

// call makes an authenticated REST call and returns the status and body.
func (n *relaydNode) call(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeWait)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.api+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", n.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// must makes call and fails unless the status is want; it decodes the answer into out.
func (n *relaydNode) must(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	status, raw := n.call(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s on node %d: HTTP %d %s, want %d", method, path, n.index, status, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s on node %d: %s: %v", method, path, n.index, raw, err)
		}
	}
}

// info is the part of GET /node/info the test waits on.
type nodeInfo struct {
	ChannelsIndexed int `json:"channelsIndexed"`
	PeersAnnounced  int `json:"peersAnnounced"`
}

func (n *relaydNode) info(t *testing.T) nodeInfo {
	t.Helper()
	var i nodeInfo
	n.must(t, http.MethodGet, "/node/info", "", http.StatusOK, &i)
	return i
}

// statistics is the part of GET /tickets/statistics the test reads.
type statistics struct {
	Pending, Unredeemed, Redeemed int
	RedeemedValue                 string
}

func (n *relaydNode) statistics(t *testing.T) statistics {
	t.Helper()
	var st statistics
	n.must(t, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
	return st
}

func (n *relaydNode) tickets(t *testing.T) int {
	t.Helper()
	var list []json.RawMessage
	n.must(t, http.MethodGet, "/tickets", "", http.StatusOK, &list)
	return len(list)
}

// TestNodesOnGeth runs real relayd node processes on `geth --dev` (1 s blocks) over JSON-RPC,
// the production path of a node: they announce themselves, open a full mesh of channels over
// REST, relay paid messages over two relayers (every relayer's ticket acknowledged), redeem
// their tickets (the chain pays them), and the recipient closes an incoming channel.
func TestNodesOnGeth(t *testing.T) {
	url := sharedGeth(t)
	t.Parallel()
	start := time.Now()
	dir := t.TempDir()
	bin := filepath.Join(dir, "relayd")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/relayd/relayd/cmd/relayd").CombinedOutput(); err != nil {
		t.Fatalf("go build relayd: %v\n%s", err, out)
	}
	t.Logf("built relayd in %v", time.Since(start).Round(time.Millisecond))
	t0 := time.Now()
	d, deployer := deployOnGeth(t, url, 2*time.Second)

	ids := make([]*identity.Identity, gethNodes)
	var g errgroup.Group
	for i := range ids {
		id, err := identity.Generate()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
		g.Go(func() error {
			if _, err := deployer.TransferNative(t.Context(), id.Address(), tokens(10)); err != nil {
				return err
			}
			_, err := deployer.TransferToken(t.Context(), id.Address(), tokens(100))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("fund the nodes: %v", err)
	}
	nodes := make([]*relaydNode, gethNodes)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := startRelayd(t, bin, url, d, i+1, id)
			mu.Lock()
			nodes[i] = n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, n := range nodes {
		wait.For(t, func() bool { return n.info(t).PeersAnnounced == gethNodes }, nodeWait,
			fmt.Sprintf("node %d sees every announcement", n.index))
	}
	t.Logf("deployed, funded, %d nodes announced in %v", gethNodes, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	var og errgroup.Group
	for _, n := range nodes {
		og.Go(func() error {
			for _, peer := range nodes {
				if peer == n {
					continue
				}
				status, raw := n.call(t, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, peer.peerID, tokens(10).String()))
				if status != http.StatusCreated {
					return fmt.Errorf("node %d opens a channel to node %d: HTTP %d %s", n.index, peer.index, status, raw)
				}
			}
			return nil
		})
	}
	if err := og.Wait(); err != nil {
		t.Fatal(err)
	}
	mesh := gethNodes * (gethNodes - 1)
	for _, n := range nodes {
		wait.For(t, func() bool { return n.info(t).ChannelsIndexed == mesh }, nodeWait,
			fmt.Sprintf("node %d indexes the %d channels", n.index, mesh))
	}
	t.Logf("mesh of %d channels open and indexed in %v", mesh, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	sender, recipient := nodes[0], nodes[gethNodes-1]
	const messages = 2
	for i := range messages {
		var ack string
		sender.must(t, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"hello geth %d","recipient":%q}`, i, recipient.peerID), http.StatusAccepted, &ack)
	}
	counts := map[int]int{}
	wait.For(t, func() bool {
		relayed := 0
		for _, n := range nodes {
			counts[n.index] = n.tickets(t)
			if n != recipient {
				relayed += counts[n.index]
			}
		}
		return relayed == 2*messages && recipient.statistics(t).Pending == 0
	}, nodeWait, "every relayer's ticket is acknowledged (the messages arrived)")
	if counts[sender.index] != 0 {
		t.Fatalf("tickets per node %v: the sender is no relayer", counts)
	}
	t.Logf("%d paid messages delivered, tickets per node %v, in %v", messages, counts, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	for _, n := range nodes {
		if counts[n.index] == 0 {
			continue
		}
		before := must[*big.Int](t)(deployer.TokenBalance(t.Context(), n.address))
		n.must(t, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
		st := n.statistics(t)
		if st.Redeemed != counts[n.index] {
			t.Fatalf("node %d statistics %+v, want %d redeemed", n.index, st, counts[n.index])
		}
		paid := new(big.Int).Sub(must[*big.Int](t)(deployer.TokenBalance(t.Context(), n.address)), before)
		if value, ok := new(big.Int).SetString(st.RedeemedValue, 10); !ok || paid.Sign() <= 0 || paid.Cmp(value) != 0 {
			t.Fatalf("node %d was paid %v on chain, its statistics say %s", n.index, paid, st.RedeemedValue)
		}
	}
	t.Logf("tickets redeemed in %v", time.Since(t0).Round(time.Millisecond))

	var r struct{ Receipt string }
	recipient.must(t, http.MethodDelete, "/channels/"+sender.peerID+"/incoming", "", http.StatusOK, &r)
	wait.For(t, func() bool {
		var ch struct{ Status string }
		recipient.must(t, http.MethodGet, "/channels/"+sender.peerID+"/incoming", "", http.StatusOK, &ch)
		return ch.Status == "Closed"
	}, nodeWait, "the closed channel is indexed")
	onChain := must[channels.Channel](t)(deployer.Channel(t.Context(), sender.address, recipient.address))
	if onChain.Status.String() != "Closed" {
		t.Fatalf("channel on chain %+v", onChain)
	}
	t.Logf("real nodes on geth --dev: %v in all", time.Since(start).Round(time.Millisecond))
}
