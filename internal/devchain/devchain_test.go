package devchain

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/tickets"
)

func TestDevChainServesDeploysAndFunds(t *testing.T) {
	var logs testlog.Buffer
	c, err := New(t.Context(), Config{ClosurePeriod: 90 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The start line names the contracts by their EIP-55 addresses (slog alone would write them
	// in lower case).
	if l := logs.String(); !strings.Contains(l, "token="+c.TokenAddress().Hex()) || !strings.Contains(l, "channels="+c.ChannelsAddress().Hex()) {
		t.Fatalf("start log %q lacks the checksummed addresses", l)
	}

	for _, url := range []string{c.RPCURL(), c.WSURL()} {
		eth, err := ethclient.DialContext(t.Context(), url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		id, err := eth.ChainID(t.Context())
		if err != nil || id.Uint64() != ChainID {
			t.Fatalf("%s: chain id %v, %v", url, id, err)
		}
		for _, a := range []common.Address{c.TokenAddress(), c.ChannelsAddress()} {
			if code, err := eth.CodeAt(t.Context(), a, nil); err != nil || len(code) == 0 {
				t.Fatalf("%s: no code at %s: %v", url, a, err)
			}
		}
		eth.Close()
	}

	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey)
	native, tokens := big.NewInt(1e18), big.NewInt(5e18)
	if err := c.Fund(t.Context(), addr, native, tokens); err != nil {
		t.Fatal(err)
	}
	cl, err := chain.Dial(t.Context(), chain.Config{ProviderURL: c.RPCURL(), Key: key, Channels: c.ChannelsAddress()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if cl.TokenAddress() != c.TokenAddress() || cl.ClosurePeriod() != 90*time.Second || cl.TokenSymbol() != "RELAY" {
		t.Fatalf("client sees token %s, closure %v, symbol %q", cl.TokenAddress(), cl.ClosurePeriod(), cl.TokenSymbol())
	}
	if b, err := cl.NativeBalance(t.Context(), addr); err != nil || b.Cmp(native) != 0 {
		t.Fatalf("native balance %v, %v", b, err)
	}
	if b, err := cl.TokenBalance(t.Context(), addr); err != nil || b.Cmp(tokens) != 0 {
		t.Fatalf("token balance %v, %v", b, err)
	}
}

func TestDevChainRunStopsOnCancel(t *testing.T) {
	c, err := New(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	conn, err := net.DialTimeout("tcp", c.RPCURL()[len("http://"):], time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("RPC port still open after Run returned")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestDevChainPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = New(t.Context(), Config{Port: l.Addr().(*net.TCPAddr).Port})
	if err == nil {
		t.Fatal("New on a busy port succeeded")
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestIdleBlocksFollowWallClock checks that an idle chain seals empty blocks and keeps its
// timestamps within a second or two of the wall clock.
func TestIdleBlocksFollowWallClock(t *testing.T) {
	c, err := New(t.Context(), Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eth := c.sim.Client()
	start, err := eth.BlockNumber(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := eth.BlockNumber(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n >= start+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no idle blocks: still at %d", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	head, err := eth.HeaderByNumber(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if lead := int64(head.Time) - time.Now().Unix(); lead > 2 || lead < -2 {
		t.Fatalf("chain time is %d s off the wall clock", lead)
	}
}

// BenchmarkReceiptLatency measures one native transfer from send to receipt through
// chain.Client over HTTP (receipt poll 5 ms), with instant sealing and with sealing only every
// 200 ms block interval:
//
//	go test -run '^$' -bench BenchmarkReceiptLatency -benchtime 50x ./internal/devchain/
func BenchmarkReceiptLatency(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"instant seal", Config{}},
		{"200ms blocks", Config{BlockInterval: 200 * time.Millisecond, NoInstantSeal: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.cfg.Logger = slogDiscard()
			c, err := New(b.Context(), bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cl, err := chain.Dial(b.Context(), chain.Config{ProviderURL: c.RPCURL(), Key: c.DeployerKey(),
				Channels: c.ChannelsAddress(), ReceiptPoll: 5 * time.Millisecond, Logger: slogDiscard()})
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			dst := common.Address{0xbe}
			b.ResetTimer()
			for b.Loop() {
				if _, err := cl.TransferNative(b.Context(), dst, big.NewInt(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestBlockTime runs the chain with a 1 s block time: transactions wait for the next block
// instead of being sealed at once, so three transfers sent one after the other land in three
// blocks about a second apart, and the chain keeps sealing after AdjustTime moved it ahead of
// the wall clock.
func TestBlockTime(t *testing.T) {
	const blockTime = time.Second
	c, err := New(t.Context(), Config{BlockTime: blockTime, Logger: slogDiscard()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := chain.Dial(t.Context(), chain.Config{ProviderURL: c.RPCURL(), Key: c.DeployerKey(),
		Channels: c.ChannelsAddress(), ReceiptPoll: 5 * time.Millisecond, Logger: slogDiscard()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	eth := c.sim.Client()
	var blocks []uint64
	var first time.Time
	for i := range 3 {
		h, err := cl.TransferNative(t.Context(), common.Address{0xbe}, big.NewInt(1))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = time.Now()
		}
		r, err := eth.TransactionReceipt(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, r.BlockNumber.Uint64())
	}
	elapsed := time.Since(first)
	if blocks[0] == blocks[1] || blocks[1] == blocks[2] {
		t.Fatalf("sequential transactions in blocks %v", blocks)
	}
	// The second and third transfers each waited for a block of their own after the first's.
	if elapsed < 3*blockTime/2 {
		t.Fatalf("two more transfers took %v with a %v block time: sealed at once", elapsed, blockTime)
	}
	if err := c.AdjustTime(time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.TransferNative(t.Context(), common.Address{0xbe}, big.NewInt(1)); err != nil {
		t.Fatalf("after AdjustTime: %v", err)
	}
}

// TestReorg replaces the blocks after an ancestor with a longer branch: a transaction of the
// removed blocks is gone with drop, and mined again in the new branch without it.
func TestReorg(t *testing.T) {
	c, err := New(t.Context(), Config{Logger: slogDiscard()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eth := c.sim.Client()
	dst := common.Address{0xbe}
	// Dropping last: the deployer's client keeps the nonce of the dropped transaction as used.
	for _, drop := range []bool{false, true} {
		ancestor, err := eth.HeaderByNumber(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		before, err := eth.BalanceAt(t.Context(), dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Fund(t.Context(), dst, big.NewInt(7), nil); err != nil {
			t.Fatal(err)
		}
		oldHead, err := eth.BlockNumber(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		head, err := c.Reorg(t.Context(), ancestor.Hash(), drop)
		if err != nil {
			t.Fatal(err)
		}
		// The idle seal loop may have added an empty block since: head must be on the
		// canonical chain, above the old head.
		h, err := eth.HeaderByHash(t.Context(), head)
		if err != nil || h.Number.Uint64() <= oldHead {
			t.Fatalf("head after the reorg %v (%v), want %s above %d", h, err, head, oldHead)
		}
		if canon, err := eth.HeaderByNumber(t.Context(), h.Number); err != nil || canon.Hash() != head {
			t.Fatalf("the reorg's head %s is not canonical (%v)", head, err)
		}
		if old, err := eth.HeaderByNumber(t.Context(), new(big.Int).SetUint64(ancestor.Number.Uint64()+1)); err != nil || old.ParentHash != ancestor.Hash() {
			t.Fatalf("the new branch does not start at the ancestor: %v", err)
		}
		after, err := eth.BalanceAt(t.Context(), dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Set(before)
		if !drop {
			want.Add(want, big.NewInt(7))
		}
		if after.Cmp(want) != 0 {
			t.Fatalf("drop=%v: balance %v after the reorg, want %v", drop, after, want)
		}
	}
}

// TestDevChainMinWinProb: the contract is deployed with the configured network minimum.
func TestDevChainMinWinProb(t *testing.T) {
	w, err := tickets.ParseWinProb("0.01")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(t.Context(), Config{MinWinProb: w, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := chain.Dial(t.Context(), chain.Config{ProviderURL: c.RPCURL(), Key: c.DeployerKey(), Channels: c.ChannelsAddress()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got, err := cl.MinWinProb(t.Context()); err != nil || got != w {
		t.Fatalf("minimum %d, %v; want %d", got, err, w)
	}
}
