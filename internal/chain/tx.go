package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// maxNonceRetries bounds how often send re-reads the nonce after the provider rejected one.
const maxNonceRetries = 3

// maxFeeBumps bounds how often a stalled transaction is replaced with higher fees (each bump
// adds 12.5 %, so ten bumps pay at most 3.3 times the fees first offered); after that wait keeps
// waiting for one of the versions sent.
const maxFeeBumps = 10

// errNonceTaken means a transaction's nonce was used by another transaction of the same account
// (another process with the same key): the transaction was dropped and will never be mined.
var errNonceTaken = errors.New("nonce used by another transaction of the account; this one was dropped")

// transact sends a transaction calling to with value and data, waits for its receipt and returns
// the transaction's hash. A revert at estimation or in the block is a *RevertError.
func (c *Client) transact(ctx context.Context, to common.Address, value *big.Int, data []byte) (common.Hash, error) {
	tx, err := c.send(ctx, to, value, data)
	if err != nil {
		return common.Hash{}, err
	}
	r, err := c.wait(ctx, tx.Hash())
	if err != nil {
		return tx.Hash(), err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r.TxHash, c.failedInBlock(ctx, to, value, data, r)
	}
	return r.TxHash, nil // the hash of the version mined: a replacement has another one
}

// send estimates, signs and submits one transaction with the next local nonce.
func (c *Client) send(ctx context.Context, to common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	if value == nil {
		value = new(big.Int)
	}
	msg := ethereum.CallMsg{From: c.addr, To: &to, Value: value, Data: data}
	c.mu.Lock()
	defer c.mu.Unlock()

	gas, err := withTimeout(ctx, c, func(ctx context.Context) (uint64, error) { return c.eth.EstimateGas(ctx, msg) })
	if err != nil {
		if rev := revertFrom(err); rev != nil {
			return nil, rev
		}
		return nil, fmt.Errorf("estimate gas: %w", err)
	}
	gas += gas / 5 // state may change between estimation and inclusion (e.g. a first token balance)

	fees, err := c.fees(ctx)
	if err != nil {
		return nil, err
	}
	if c.firstFees != nil {
		fees = c.firstFees(fees)
	}
	for attempt := 0; ; attempt++ {
		if !c.nonceKnown {
			n, err := withTimeout(ctx, c, func(ctx context.Context) (uint64, error) { return c.eth.PendingNonceAt(ctx, c.addr) })
			if err != nil {
				return nil, fmt.Errorf("read nonce: %w", err)
			}
			c.nonce, c.nonceKnown = n, true
		}
		tx, err := types.SignNewTx(c.key, c.signer, fees.tx(c.chainID, c.nonce, to, value, gas, data))
		if err != nil {
			return nil, fmt.Errorf("sign transaction: %w", err)
		}
		_, err = withTimeout(ctx, c, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, c.eth.SendTransaction(ctx, tx)
		})
		switch {
		case err == nil, errText(err, "already known"):
			c.track(tx, &sentTx{nonce: c.nonce, to: to, value: value, data: data, gas: gas, fees: fees})
			c.nonce++
			return tx, nil
		case (errText(err, "nonce too low") || errText(err, "replacement transaction underpriced")) && attempt < maxNonceRetries:
			c.log.Debug("nonce rejected, resyncing", "nonce", c.nonce, "err", err)
			c.nonceKnown = false
			continue
		}
		// Re-read the nonce before the next send: after a timeout the transaction may or may
		// not have arrived, and a rejection leaves the nonce unused either way.
		c.nonceKnown = false
		return nil, fmt.Errorf("send transaction: %w", err)
	}
}

func errText(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// fees are a transaction's fee parameters: EIP-1559 when base is set (fee cap 2 × base + tip,
// or feeCap when set), legacy gas price otherwise.
type fees struct {
	base, tip, price, feeCap *big.Int
}

// cap returns the EIP-1559 fee cap.
func (f fees) cap() *big.Int {
	if f.feeCap != nil {
		return f.feeCap
	}
	return new(big.Int).Add(new(big.Int).Mul(f.base, big.NewInt(2)), f.tip)
}

// bump returns f raised by 12.5 % (geth's pool takes a replacement only when it raises both the
// tip and the fee cap, or the gas price, by at least 10 %), and to at least what now suggests
// (the fees the chain asks for at the moment).
func (f fees) bump(now fees) fees {
	up := func(v *big.Int) *big.Int {
		return new(big.Int).Add(v, new(big.Int).Add(new(big.Int).Rsh(v, 3), big.NewInt(1)))
	}
	maxOf := func(a, b *big.Int) *big.Int {
		if b != nil && b.Cmp(a) > 0 {
			return b
		}
		return a
	}
	if f.base == nil {
		return fees{price: maxOf(up(f.price), now.price)}
	}
	tip := maxOf(up(f.tip), now.tip)
	base := f.base
	if now.base != nil {
		base = now.base
	}
	feeCap := maxOf(up(f.cap()), new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip))
	return fees{base: base, tip: tip, feeCap: feeCap}
}

func (c *Client) fees(ctx context.Context) (fees, error) {
	head, err := withTimeout(ctx, c, func(ctx context.Context) (*types.Header, error) { return c.eth.HeaderByNumber(ctx, nil) })
	if err != nil {
		return fees{}, fmt.Errorf("read latest header: %w", err)
	}
	if head.BaseFee == nil {
		price, err := withTimeout(ctx, c, c.eth.SuggestGasPrice)
		if err != nil {
			return fees{}, fmt.Errorf("suggest gas price: %w", err)
		}
		return fees{price: price}, nil
	}
	tip, err := withTimeout(ctx, c, c.eth.SuggestGasTipCap)
	if err != nil {
		return fees{}, fmt.Errorf("suggest gas tip: %w", err)
	}
	return fees{base: head.BaseFee, tip: tip}, nil
}

func (f fees) tx(chainID *big.Int, nonce uint64, to common.Address, value *big.Int, gas uint64, data []byte) types.TxData {
	if f.base == nil {
		return &types.LegacyTx{Nonce: nonce, GasPrice: f.price, Gas: gas, To: &to, Value: value, Data: data}
	}
	return &types.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: f.tip, GasFeeCap: f.cap(), Gas: gas, To: &to, Value: value, Data: data,
	}
}

// wait polls for the receipt of hash every c.poll (and at every new head over a WebSocket) until
// it is mined or ctx ends, then waits for the provider's head to reach the receipt's block
// (waitHead). Provider errors are retried for up to c.callTimeout in a row, then returned as
// ErrProviderUnavailable. A transaction this client sent that is not mined within c.stall is
// replaced (unstall): the receipt returned is then that of whichever version was mined, whose
// TxHash may differ from hash.
func (c *Client) wait(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	st := c.tracked(hash)
	defer c.untrack(hash)
	ticker := time.NewTicker(c.poll)
	defer ticker.Stop()
	var heads chan *types.Header
	if c.ws {
		heads = make(chan *types.Header, 1)
		if sub, err := c.eth.SubscribeNewHead(ctx, heads); err == nil {
			defer sub.Unsubscribe()
		} else {
			heads = nil
		}
	}
	var failingSince time.Time
	for {
		r, err := c.receipt(ctx, hash, st)
		switch {
		case err == nil:
			c.waitHead(ctx, r)
			return r, nil
		case notYet(err):
			failingSince = time.Time{}
		case errors.Is(err, ErrProviderUnavailable):
			if failingSince.IsZero() {
				failingSince = time.Now()
			} else if time.Since(failingSince) > c.callTimeout {
				return nil, fmt.Errorf("wait for receipt of %s: %w", hash, err)
			}
		default:
			return nil, fmt.Errorf("wait for receipt of %s: %w", hash, err)
		}
		if st != nil && time.Since(st.last) >= c.stall {
			if err := c.unstall(ctx, st); err != nil {
				return nil, fmt.Errorf("wait for receipt of %s: %w", hash, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for receipt of %s: %w", hash, ctx.Err())
		case <-ticker.C:
		case <-heads:
		}
	}
}

// waitHead waits until the provider's latest block is at least r's, so that what the transaction
// changed is what the caller reads next at "latest" (eth_call, eth_estimateGas, eth_blockNumber):
// a read of its effects, the indexer's WaitHead, or the next transaction that depends on it (fund
// after approve). The receipt alone does not promise that: go-ethereum makes a block's receipts
// readable when it writes the block's canonical hash and transaction lookup entries, and moves
// the head it answers "latest" from only after that (core.BlockChain.writeHeadBlock), so a
// client polling for the receipt can read it while "latest" is still the block before; a
// load-balanced provider can answer the receipt from a node ahead of the one answering the next
// call. The head is polled every c.poll for up to c.callTimeout; past that, or when ctx ends, the
// receipt is returned all the same: the transaction is mined, and only reads may lag.
func (c *Client) waitHead(ctx context.Context, r *types.Receipt) {
	if r.BlockNumber == nil || !r.BlockNumber.IsUint64() {
		return
	}
	block := r.BlockNumber.Uint64()
	deadline := time.Now().Add(c.callTimeout)
	ticker := time.NewTicker(c.poll)
	defer ticker.Stop()
	for {
		head, err := withTimeout(ctx, c, c.eth.BlockNumber)
		if err == nil && head >= block {
			return
		}
		if time.Now().After(deadline) {
			c.log.Warn("the provider's head stays below a mined transaction's block; reads may not show it yet",
				"tx", r.TxHash, "block", block, "head", head, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// failedInBlock explains a mined transaction that failed: it replays the call on the state before
// its block to recover the revert reason (best effort: earlier transactions of the same block are
// not replayed).
func (c *Client) failedInBlock(ctx context.Context, to common.Address, value *big.Int, data []byte, r *types.Receipt) error {
	rev := &RevertError{Reason: "unknown", Sent: true}
	if r.BlockNumber != nil && r.BlockNumber.Sign() > 0 {
		parent := new(big.Int).Sub(r.BlockNumber, big.NewInt(1))
		_, err := withTimeout(ctx, c, func(ctx context.Context) ([]byte, error) {
			return c.eth.CallContract(ctx, ethereum.CallMsg{From: c.addr, To: &to, Value: value, Data: data, Gas: r.GasUsed * 2}, parent)
		})
		if got := revertFrom(err); got != nil {
			rev = got
			rev.Sent = true
		}
	}
	return fmt.Errorf("transaction %s in block %s: %w", r.TxHash, r.BlockNumber, rev)
}
