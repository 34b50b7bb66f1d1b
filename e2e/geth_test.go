// Package e2e holds the end-to-end tests against a separate `geth --dev` process: the
// production path of the settlement, a chain in another process over JSON-RPC.
// TestSettlementOnGeth drives the contracts through the chain client and indexer;
// TestNodesOnGeth runs real relayd node processes on it (the suite on `relayd cluster`'s
// embedded dev chain is in e2e/cluster). Both share one geth with a block every second and run
// in parallel (about 20 s together). They need geth, which scripts/setup.sh installs with
// `go install` of the go-ethereum version go.mod pins; without it they are skipped.
package e2e

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"go/build"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

var (
	oneToken = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	quiet    = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func tokens(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneToken) }

// findGeth returns the geth binary: on PATH, in $GOPATH/bin (where scripts/setup.sh's go install
// puts it) or in the repository's bin/; "" when there is none.
func findGeth() string {
	if p, err := exec.LookPath("geth"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = build.Default.GOPATH
	}
	candidates := []string{filepath.Join(gopath, "bin", "geth"), filepath.Join("..", "bin", "geth")}
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		candidates = append([]string{filepath.Join(gobin, "geth")}, candidates...)
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// geth is the one `geth --dev` process the tests of this package share (they run in parallel,
// each with its own accounts and contracts), started by the first that needs it and stopped by
// TestMain.
var geth struct {
	once sync.Once
	url  string
	err  error
	out  testlog.Buffer
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if geth.stop != nil {
		geth.stop()
	}
	os.Exit(code)
}

// sharedGeth returns the JSON-RPC URL of the shared geth, starting it on first use; it skips
// the test when geth is not installed (or under -short).
func sharedGeth(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test; skipped under -short")
	}
	bin := findGeth()
	if bin == "" {
		t.Skip("geth is not installed: scripts/setup.sh installs it (go install github.com/ethereum/go-ethereum/cmd/geth@<the version in go.mod>)")
	}
	geth.once.Do(func() {
		start := time.Now()
		geth.url, geth.err = startGeth(bin)
		if geth.err == nil {
			t.Logf("geth --dev up in %v", time.Since(start).Round(time.Millisecond))
		}
	})
	if geth.err != nil {
		t.Fatalf("%v\n%s", geth.err, geth.out.String())
	}
	return geth.url
}

// startGeth runs `geth --dev` with a block every second in a temporary data directory, serving
// HTTP JSON-RPC on a free port of 127.0.0.1, and returns its URL once it answers. geth.stop
// stops it and removes the directory.
func startGeth(bin string) (string, error) {
	dir, err := os.MkdirTemp("", "relayd-geth-")
	if err != nil {
		return "", err
	}
	port, err := freeTCPPort()
	if err != nil {
		return "", err
	}
	authPort, err := freeTCPPort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--dev", "--dev.period", "1", "--datadir", dir,
		"--http", "--http.addr", "127.0.0.1", "--http.port", strconv.Itoa(port), "--http.api", "eth,net,web3",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", strconv.Itoa(authPort),
		"--port", "0", "--nodiscover", "--maxpeers", "0", "--ipcdisable", "--verbosity", "2")
	cmd.Stdout, cmd.Stderr = &geth.out, &geth.out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("start geth: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	geth.stop = func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dir)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	exited := false
	up := wait.Until(func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		eth, err := ethclient.DialContext(ctx, url)
		if err != nil {
			return false
		}
		defer eth.Close()
		_, err = eth.ChainID(ctx)
		return err == nil
	}, 30*time.Second)
	switch {
	case exited:
		return "", errors.New("geth exited at start")
	case !up:
		return "", fmt.Errorf("geth does not answer on %s", url)
	}
	return url, nil
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// fundFromDevAccount sends wei from geth's pre-funded, unlocked dev account to addr with
// eth_sendTransaction and waits until it is mined.
func fundFromDevAccount(t *testing.T, url string, addr common.Address, wei *big.Int) {
	t.Helper()
	rc, err := rpc.DialContext(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var accounts []common.Address
	if err := rc.CallContext(t.Context(), &accounts, "eth_accounts"); err != nil || len(accounts) == 0 {
		t.Fatalf("geth's dev account: %v %v", accounts, err)
	}
	var h common.Hash
	if err := rc.CallContext(t.Context(), &h, "eth_sendTransaction", map[string]any{
		"from": accounts[0], "to": addr, "value": (*hexutil.Big)(wei),
	}); err != nil {
		t.Fatalf("fund from the dev account: %v", err)
	}
	eth := ethclient.NewClient(rc)
	wait.For(t, func() bool { _, err := eth.TransactionReceipt(t.Context(), h); return err == nil }, 30*time.Second, "the funding is mined")
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// ticket signs a winning ticket of the channel src→dst with the proof-of-relay response that
// opens it.
func ticket(t *testing.T, srcKey *ecdsa.PrivateKey, dst, channelsAddr common.Address, chainID uint64, amount *big.Int, index uint64, seed byte) (tickets.Ticket, [32]byte) {
	t.Helper()
	var s1, s2 [32]byte
	s1[0], s2[0] = seed, seed+1
	own := must[por.Scalar](t)(por.DeriveOwn(s1))
	ack := must[por.Scalar](t)(por.DeriveAck(s2))
	challenge := must[por.Challenge](t)(por.TicketChallenge(own, ack))
	tk := tickets.Ticket{
		ChannelID: tickets.ChannelID(crypto.PubkeyToAddress(srcKey.PublicKey), dst),
		Index:     index, Epoch: 1, WinProb: tickets.MaxWinProb, Challenge: [20]byte(challenge),
	}
	tk.Amount.SetFromBig(amount)
	if err := tk.Sign(srcKey, chainID, channelsAddr); err != nil {
		t.Fatal(err)
	}
	return tk, por.Response(own, ack)
}

// TestSettlementOnGeth runs the settlement against `geth --dev` in its own process, over
// JSON-RPC: deploy the contracts with a deployer funded from geth's dev account, announce, open
// a channel, redeem a ticket alone and two in a batch, close the channel, with an indexer
// (confirmations as chain.DefaultConfirmations gives for the chain) following every step into
// its graph and store.
func TestSettlementOnGeth(t *testing.T) {
	url := sharedGeth(t)
	t.Parallel()
	start := time.Now()
	ctx := t.Context()

	deployerKey := must[*ecdsa.PrivateKey](t)(crypto.GenerateKey())
	fundFromDevAccount(t, url, crypto.PubkeyToAddress(deployerKey.PublicKey), tokens(1000))
	eth := must[*ethclient.Client](t)(ethclient.DialContext(ctx, url))
	defer eth.Close()
	const closurePeriod = 2 * time.Second
	d, err := chain.Deploy(ctx, eth, deployerKey, closurePeriod, tokens(1_000_000))
	if err != nil {
		t.Fatalf("deploy on geth: %v", err)
	}
	dial := func(key *ecdsa.PrivateKey) *chain.Client {
		c, err := chain.Dial(ctx, chain.Config{ProviderURL: url, Key: key, Channels: d.Channels, Logger: quiet,
			ReceiptPoll: 50 * time.Millisecond, StallTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	deployer := dial(deployerKey)
	if deployer.ChainID() != chain.DevChainID || deployer.ClosurePeriod() != closurePeriod {
		t.Fatalf("geth --dev: chain id %d, closure period %v", deployer.ChainID(), deployer.ClosurePeriod())
	}
	aliceKey := must[*ecdsa.PrivateKey](t)(crypto.GenerateKey())
	bobKey := must[*ecdsa.PrivateKey](t)(crypto.GenerateKey())
	a, b := crypto.PubkeyToAddress(aliceKey.PublicKey), crypto.PubkeyToAddress(bobKey.PublicKey)
	for _, addr := range []common.Address{a, b} {
		must[common.Hash](t)(deployer.TransferNative(ctx, addr, tokens(10)))
	}
	must[common.Hash](t)(deployer.TransferToken(ctx, a, tokens(100)))
	alice, bob := dial(aliceKey), dial(bobKey)

	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := channels.NewGraph()
	ix, err := chain.NewIndexer(chain.IndexerConfig{
		Source: alice, Store: db, Graph: g, ChainID: alice.ChainID(), Channels: d.Channels, StartBlock: d.Block,
		Confirmations: chain.DefaultConfirmations(alice.ChainID()), PollInterval: 100 * time.Millisecond, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	ixDone := make(chan error, 1)
	go func() { ixDone <- ix.Run(ictx) }()
	defer func() {
		cancel()
		if err := <-ixDone; err != nil {
			t.Errorf("indexer: %v", err)
		}
	}()
	synced := func(what string) {
		t.Helper()
		head := must[uint64](t)(alice.BlockNumber(ctx))
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := ix.WaitSynced(wctx, head); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	matches := func(status channels.Status) channels.Channel {
		t.Helper()
		onChain := must[channels.Channel](t)(alice.Channel(ctx, a, b))
		got, ok := g.Channel(a, b)
		if !ok || !got.Equal(onChain) || got.Status != status {
			t.Fatalf("graph %+v (known %v), chain %+v, want %v", got, ok, onChain, status)
		}
		return got
	}

	settle := time.Now()
	// Announce both (concurrently: one block for both).
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*chain.Client{alice, bob} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Announce(ctx, []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 9100+i)})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	synced("announcements")
	if len(g.Peers()) != 2 {
		t.Fatalf("peers %+v", g.Peers())
	}

	must[common.Hash](t)(alice.FundChannel(ctx, b, tokens(10)))
	synced("opening")
	matches(channels.Open)

	// One ticket alone, two in a batch.
	price := tickets.AmountFor(2)
	amount := price.ToBig()
	before := must[*big.Int](t)(bob.TokenBalance(ctx, b))
	tk, resp := ticket(t, aliceKey, b, d.Channels, alice.ChainID(), amount, 1, 1)
	must[common.Hash](t)(bob.RedeemTicket(ctx, tk, resp))
	var batch []chain.Redemption
	for i := range 2 {
		tk, resp := ticket(t, aliceKey, b, d.Channels, alice.ChainID(), amount, uint64(2+i), byte(10+2*i))
		batch = append(batch, chain.Redemption{Ticket: tk, Response: resp, Source: a})
	}
	out, err := bob.RedeemTickets(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if !o.Redeemed {
			t.Fatalf("batch ticket %d: %+v", i, o)
		}
	}
	paid := new(big.Int).Sub(must[*big.Int](t)(bob.TokenBalance(ctx, b)), before)
	if want := new(big.Int).Mul(amount, big.NewInt(3)); paid.Cmp(want) != 0 {
		t.Fatalf("bob was paid %v, want %v", paid, want)
	}
	synced("redemptions")
	if ch := matches(channels.Open); ch.TicketIndex != 3 {
		t.Fatalf("ticket index %d after three redemptions", ch.TicketIndex)
	}

	must[common.Hash](t)(alice.InitiateClosure(ctx, b))
	synced("closure")
	ch := matches(channels.PendingToClose)
	wait.For(t, func() bool {
		h, err := eth.HeaderByNumber(ctx, nil)
		return err == nil && int64(h.Time) > ch.ClosureTime.Unix()
	}, 15*time.Second, "chain time passes the closure time")
	must[common.Hash](t)(alice.FinalizeClosure(ctx, b))
	synced("finalization")
	matches(channels.Closed)
	t.Logf("settlement on geth --dev (1 s blocks): %v; whole test %v",
		time.Since(settle).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
