package chain_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
)

const testStall = 300 * time.Millisecond

// dialStall dials a client for key whose transactions count as stalled after testStall.
func (e *env) dialStall(key *ecdsa.PrivateKey) *chain.Client {
	e.t.Helper()
	c, err := chain.Dial(e.t.Context(), chain.Config{
		ProviderURL: e.chain.RPCURL(), Key: key, Channels: e.chain.ChannelsAddress(), Logger: quiet,
		ReceiptPoll: 5 * time.Millisecond, CallTimeout: 2 * time.Second, StallTimeout: testStall,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// TestStalledTransactionReplaced sends a transfer whose first version offers a fee cap of 1 wei,
// below the base fee, so that no block takes it: after the stall timeout the client replaces it
// with the same nonce at higher fees, and the transfer is mined once.
func TestStalledTransactionReplaced(t *testing.T) {
	e := newEnv(t)
	_, key := e.account("stall", nil)
	c := e.dialStall(key)
	chain.UnderpayFirst(c)
	dst := common.Address{0xd5}
	nonce := pendingNonce(t, e, c.Address())
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h, err := c.TransferNative(ctx, dst, big.NewInt(3))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < testStall {
		t.Fatalf("mined after %v, before the stall timeout: the first version was not underpriced", took)
	}
	if got := pendingNonce(t, e, c.Address()); got != nonce+1 {
		t.Fatalf("nonce %d after one transfer from %d", got, nonce)
	}
	if got := must[*big.Int](t)(c.NativeBalance(t.Context(), dst)); got.Int64() != 3 {
		t.Fatalf("balance %v, want 3 (the transfer once)", got)
	}
	if h == (common.Hash{}) {
		t.Fatal("no hash")
	}
	t.Logf("underpriced transfer mined %v after sending (stall timeout %v)", took.Round(time.Millisecond), testStall)
}

// TestRestartWithStuckTransaction: a node sent a transaction that is stuck in the pool (fee cap
// below the base fee) and crashed. The restarted node starts from the pending nonce, above the
// stuck one, so its own transaction waits behind it; after the stall timeout it fills the stuck
// nonce with a transfer of nothing to itself at higher fees, and its own transaction is mined.
func TestRestartWithStuckTransaction(t *testing.T) {
	e := newEnv(t)
	_, key := e.account("crash", nil)
	dst := common.Address{0xd6}
	crashed := e.dialStall(key)
	chain.UnderpayFirst(crashed)
	nonce := pendingNonce(t, e, crashed.Address())
	if _, err := chain.SendOnly(t.Context(), crashed, dst, big.NewInt(5)); err != nil {
		t.Fatal(err)
	}
	if got := pendingNonce(t, e, crashed.Address()); got != nonce+1 {
		t.Fatalf("the stuck transaction is not pending: nonce %d, want %d", got, nonce+1)
	}
	crashed.Close()

	restarted := e.dialStall(key)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := restarted.TransferNative(ctx, dst, big.NewInt(7)); err != nil {
		t.Fatal(err)
	}
	if got := pendingNonce(t, e, restarted.Address()); got != nonce+2 {
		t.Fatalf("nonce %d, want %d (the filled one and the transfer)", got, nonce+2)
	}
	if got := must[*big.Int](t)(restarted.NativeBalance(t.Context(), dst)); got.Int64() != 7 {
		t.Fatalf("balance %v, want 7 (the restarted node's transfer only)", got)
	}
	// The client goes on with the right nonce.
	if _, err := restarted.TransferNative(t.Context(), dst, big.NewInt(1)); err != nil {
		t.Fatal(err)
	}
}
