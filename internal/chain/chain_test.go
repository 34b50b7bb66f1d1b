package chain_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

var (
	oneToken = big.NewInt(1e18)
	quiet    = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func tokens(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneToken) }

// env is a dev chain with funded accounts and a client per account.
type env struct {
	t     *testing.T
	chain *devchain.Chain
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c, err := devchain.New(t.Context(), devchain.Config{ClosurePeriod: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &env{t: t, chain: c}
}

// account funds a new account with 10 ether and the given tokens and dials a client for it.
func (e *env) account(seed string, tokenAmount *big.Int) (*chain.Client, *ecdsa.PrivateKey) {
	e.t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("relayd chain test " + seed)))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.chain.Fund(e.t.Context(), crypto.PubkeyToAddress(key.PublicKey), tokens(10), tokenAmount); err != nil {
		e.t.Fatal(err)
	}
	return e.dial(key, e.chain.RPCURL()), key
}

func (e *env) dial(key *ecdsa.PrivateKey, url string) *chain.Client {
	e.t.Helper()
	c, err := chain.Dial(e.t.Context(), chain.Config{
		ProviderURL: url, Key: key, Channels: e.chain.ChannelsAddress(), Logger: quiet,
		ReceiptPoll: 5 * time.Millisecond, CallTimeout: 10 * time.Second, // a 190-ticket batch's gas estimate takes seconds on a loaded 2-core machine
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
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

func TestDialProviderDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	key, _ := crypto.GenerateKey()
	start := time.Now()
	_, err = chain.Dial(t.Context(), chain.Config{ProviderURL: url, Key: key, Channels: common.Address{1}})
	if !errors.Is(err, chain.ErrProviderUnavailable) {
		t.Fatalf("Dial on a closed port: %v, want ErrProviderUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v to notice a closed port", d)
	}
}

func TestDialChecks(t *testing.T) {
	e := newEnv(t)
	key, _ := crypto.GenerateKey()
	_, err := chain.Dial(t.Context(), chain.Config{ProviderURL: e.chain.RPCURL(), Key: key, Channels: common.Address{0x42}})
	if !errors.Is(err, chain.ErrNoContract) {
		t.Fatalf("no contract: %v", err)
	}
	// Another contract (the token's address given as the channels contract) is no channels
	// contract either.
	_, err = chain.Dial(t.Context(), chain.Config{ProviderURL: e.chain.RPCURL(), Key: key, Channels: e.chain.TokenAddress()})
	if !errors.Is(err, chain.ErrNoContract) || !strings.Contains(err.Error(), "is not a RelayChannels contract") {
		t.Fatalf("token address as channels contract: %v", err)
	}
	for name, cfg := range map[string]chain.Config{
		"no url":      {Key: key, Channels: common.Address{1}},
		"no key":      {ProviderURL: e.chain.RPCURL(), Channels: common.Address{1}},
		"no channels": {ProviderURL: e.chain.RPCURL(), Key: key},
	} {
		if _, err := chain.Dial(t.Context(), cfg); !errors.Is(err, chain.ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
	c := e.dial(key, e.chain.WSURL())
	if c.ChainID() != devchain.ChainID || c.TokenAddress() != e.chain.TokenAddress() || c.ClosurePeriod() != time.Hour || c.TokenSymbol() != "RELAY" {
		t.Fatalf("client over ws: chain %d token %s closure %v symbol %q", c.ChainID(), c.TokenAddress(), c.ClosurePeriod(), c.TokenSymbol())
	}
}

// TestConcurrentSends sends 20 transfers at once from one client: the local nonce counter must
// give each its own nonce and every one must be mined.
func TestConcurrentSends(t *testing.T) {
	for _, url := range []string{"http", "ws"} {
		t.Run(url, func(t *testing.T) {
			e := newEnv(t)
			c, key := e.account("sender", tokens(100))
			if url == "ws" {
				c = e.dial(key, e.chain.WSURL())
			}
			dst := common.Address{0xd0}
			const n = 20
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					var err error
					if i%2 == 0 {
						_, err = c.TransferNative(t.Context(), dst, big.NewInt(1000))
					} else {
						_, err = c.TransferToken(t.Context(), dst, big.NewInt(1000))
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if b := must[*big.Int](t)(c.NativeBalance(t.Context(), dst)); b.Int64() != n/2*1000 {
				t.Fatalf("native balance %v", b)
			}
			if b := must[*big.Int](t)(c.TokenBalance(t.Context(), dst)); b.Int64() != n/2*1000 {
				t.Fatalf("token balance %v", b)
			}
		})
	}
}

// TestNonceResync uses one key from two clients: each one's local nonce goes stale when the
// other sends, and the provider's rejection makes it re-read the nonce and succeed.
func TestNonceResync(t *testing.T) {
	e := newEnv(t)
	a, key := e.account("shared", nil)
	b := e.dial(key, e.chain.RPCURL())
	dst := common.Address{0xd1}
	for i, c := range []*chain.Client{a, b, a, b, a} {
		if _, err := c.TransferNative(t.Context(), dst, big.NewInt(1)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if got := must[*big.Int](t)(a.NativeBalance(t.Context(), dst)); got.Int64() != 5 {
		t.Fatalf("balance %v, want 5", got)
	}
}

// pendingNonce is the account's next nonce as the chain sees it.
func pendingNonce(t *testing.T, e *env, addr common.Address) uint64 {
	t.Helper()
	eth, err := ethclient.DialContext(t.Context(), e.chain.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	n, err := eth.PendingNonceAt(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRevertsSendNothing(t *testing.T) {
	e := newEnv(t)
	c, _ := e.account("reverter", tokens(1))
	bob := common.Address{0xb0}
	tests := []struct {
		name    string
		op      func() error
		reason  string
		decoded any
		funds   bool
	}{
		{"initiate closure of no channel", func() error { _, err := c.InitiateClosure(t.Context(), bob); return err },
			"ChannelNotOpen", &contracts.RelayChannelsChannelNotOpen{}, false},
		{"finalize what is not closing", func() error { _, err := c.FinalizeClosure(t.Context(), bob); return err },
			"ChannelNotPendingToClose", &contracts.RelayChannelsChannelNotPendingToClose{}, false},
		{"close an incoming channel that is closed", func() error { _, err := c.CloseIncoming(t.Context(), bob); return err },
			"ChannelNotOpen", nil, false},
		{"transfer more tokens than held", func() error { _, err := c.TransferToken(t.Context(), bob, tokens(2)); return err },
			"ERC20InsufficientBalance", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := pendingNonce(t, e, c.Address())
			err := tc.op()
			if !errors.Is(err, chain.ErrReverted) {
				t.Fatalf("err %v, want ErrReverted", err)
			}
			var rev *chain.RevertError
			if !errors.As(err, &rev) || len(rev.Reason) < len(tc.reason) || rev.Reason[:len(tc.reason)] != tc.reason || rev.Sent {
				t.Fatalf("revert %+v, want reason %s, not sent", rev, tc.reason)
			}
			if tc.decoded != nil && (rev.Decoded == nil || errorType(rev.Decoded) != errorType(tc.decoded)) {
				t.Fatalf("decoded %T, want %T", rev.Decoded, tc.decoded)
			}
			if errors.Is(err, chain.ErrInsufficientFunds) != tc.funds {
				t.Fatalf("ErrInsufficientFunds = %v, want %v", !tc.funds, tc.funds)
			}
			if after := pendingNonce(t, e, c.Address()); after != before {
				t.Fatalf("nonce moved from %d to %d: something was sent", before, after)
			}
		})
	}
	// Funding beyond the token balance is refused before approving anything.
	before := pendingNonce(t, e, c.Address())
	if _, err := c.FundChannel(t.Context(), bob, tokens(5)); !errors.Is(err, chain.ErrInsufficientFunds) || !strings.Contains(err.Error(), " below 5 RELAY") {
		t.Fatalf("fund beyond balance: %v (want the amounts in tokens)", err)
	}
	if after := pendingNonce(t, e, c.Address()); after != before {
		t.Fatalf("fund beyond balance sent %d transactions", after-before)
	}
	// Not enough ether for the value: insufficient funds, nothing sent.
	if _, err := c.TransferNative(t.Context(), bob, tokens(1000)); !errors.Is(err, chain.ErrInsufficientFunds) {
		t.Fatalf("transfer beyond native balance: %v", err)
	}
	// The client still works, with the right nonce.
	if _, err := c.TransferNative(t.Context(), bob, big.NewInt(1)); err != nil {
		t.Fatal(err)
	}
}

func errorType(v any) string { return fmt.Sprintf("%T", v) }

// porFixture is one hop's proof-of-relay material: the challenge and the response opening it.
func porFixture(t *testing.T, seed byte) (por.Challenge, [32]byte) {
	t.Helper()
	var s1, s2 [32]byte
	s1[0], s2[0] = seed, seed+1
	own := must[por.Scalar](t)(por.DeriveOwn(s1))
	ack := must[por.Scalar](t)(por.DeriveAck(s2))
	c := must[por.Challenge](t)(por.TicketChallenge(own, ack))
	return c, por.Response(own, ack)
}

func signedTicket(t *testing.T, e *env, srcKey *ecdsa.PrivateKey, dst common.Address, amount *big.Int, index uint64, epoch uint32, seed byte) (tickets.Ticket, [32]byte) {
	t.Helper()
	challenge, response := porFixture(t, seed)
	tk := tickets.Ticket{
		ChannelID: tickets.ChannelID(crypto.PubkeyToAddress(srcKey.PublicKey), dst),
		Index:     index, Epoch: epoch, WinProb: tickets.MaxWinProb, Challenge: [20]byte(challenge),
	}
	tk.Amount.SetFromBig(amount)
	if err := tk.Sign(srcKey, devchain.ChainID, e.chain.ChannelsAddress()); err != nil {
		t.Fatal(err)
	}
	return tk, response
}

// newIndexer returns an indexer over c's provider into a fresh graph and the store db.
func newIndexer(t *testing.T, e *env, c *chain.Client, db *store.DB, onEvent func(chain.Event), opts ...func(*chain.IndexerConfig)) (*chain.Indexer, *channels.Graph) {
	t.Helper()
	g := channels.NewGraph()
	cfg := chain.IndexerConfig{
		Source: c, Store: db, Graph: g, ChainID: c.ChainID(), Channels: c.ChannelsAddress(),
		StartBlock: e.chain.Deployment().Block, PollInterval: 10 * time.Millisecond,
		MaxBackoff: 100 * time.Millisecond, OnEvent: onEvent, Logger: quiet,
	}
	for _, o := range opts {
		o(&cfg)
	}
	ix, err := chain.NewIndexer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ix, g
}

// runIndexer runs ix until the returned stop is called (or the test ends) and fails the test if
// Run returns an error.
func runIndexer(t *testing.T, ix *chain.Indexer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("indexer Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func syncTo(t *testing.T, ix *chain.Indexer, c *chain.Client) {
	t.Helper()
	head := must[uint64](t)(c.BlockNumber(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := ix.WaitSynced(ctx, head); err != nil {
		t.Fatal(err)
	}
}

// wantGraphMatchesChain compares the graph's channel src→dst with the contract's.
func wantGraphMatchesChain(t *testing.T, g *channels.Graph, c *chain.Client, src, dst common.Address, status channels.Status) {
	t.Helper()
	onChain := must[channels.Channel](t)(c.Channel(t.Context(), src, dst))
	got, ok := g.Channel(src, dst)
	if !ok || !got.Equal(onChain) || got.Status != status {
		t.Fatalf("graph %+v (known %v), chain %+v, want status %v", got, ok, onChain, status)
	}
}
