package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Stalled transactions. A transaction can sit in the pool unmined: its fee cap fell below a
// rising base fee, its tip is below what block builders take, or an earlier nonce of the account
// is missing (a transaction of a previous run of the node, sent before a crash, that was dropped
// or is itself stuck). A Client tracks every transaction it sends until its receipt is read;
// when one is not mined within StallTimeout, wait calls unstall, which
//   - fills the nonces below it that no transaction of this client holds (a previous run's) with
//     a transfer of nothing to the account itself, at fees raised until the pool takes it;
//   - replaces the transaction itself with the same nonce, gas and call, at fees raised by
//     12.5 % (at least what the chain asks now), and sends it again;
// and wait then accepts the receipt of any version sent. A nonce used by another transaction of
// the account (another process with the same key) with none of ours mined is errNonceTaken.

// sentTx is a transaction the client sent and waits for: every version (replacement) sent under
// its nonce and the fees of the last.
type sentTx struct {
	nonce uint64
	to    common.Address
	value *big.Int
	data  []byte
	gas   uint64

	// guarded by Client.sentMu
	fees       fees
	hashes     []common.Hash
	last       time.Time // when the last version was sent
	bumps      int
	takenSince time.Time // when the nonce was first seen used with none of ours mined
}

// track records a transaction just sent under its nonce.
func (c *Client) track(tx *types.Transaction, st *sentTx) {
	st.hashes, st.last = []common.Hash{tx.Hash()}, time.Now()
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	if c.sent == nil {
		c.sent = map[common.Hash]*sentTx{}
	}
	c.sent[tx.Hash()] = st
}

func (c *Client) tracked(h common.Hash) *sentTx {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	return c.sent[h]
}

func (c *Client) untrack(h common.Hash) {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	delete(c.sent, h)
}

// inflight reports whether a transaction this client waits for holds nonce n.
func (c *Client) inflight(n uint64) bool {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	for _, st := range c.sent {
		if st.nonce == n {
			return true
		}
	}
	return false
}

// receipt returns the receipt of hash, or of any version of st (nil: only hash).
func (c *Client) receipt(ctx context.Context, hash common.Hash, st *sentTx) (*types.Receipt, error) {
	hashes := []common.Hash{hash}
	if st != nil {
		c.sentMu.Lock()
		hashes = slices.Clone(st.hashes)
		c.sentMu.Unlock()
	}
	var firstErr error
	for i := len(hashes) - 1; i >= 0; i-- { // the newest version is the likeliest mined
		h := hashes[i]
		r, err := withTimeout(ctx, c, func(ctx context.Context) (*types.Receipt, error) { return c.eth.TransactionReceipt(ctx, h) })
		if err == nil {
			return r, nil
		}
		if firstErr == nil || !notYet(err) {
			firstErr = err
		}
	}
	return nil, firstErr
}

// unstall handles a transaction not mined within the stall timeout (see the comment at the top
// of the file). Provider errors leave it for the next round; only errNonceTaken is returned.
func (c *Client) unstall(ctx context.Context, st *sentTx) error {
	mined, err := withTimeout(ctx, c, func(ctx context.Context) (uint64, error) { return c.eth.NonceAt(ctx, c.addr, nil) })
	if err != nil {
		c.touch(st)
		return nil
	}
	if mined > st.nonce {
		// The nonce is used: by one of our versions (its receipt is on the way) or by another
		// transaction of the account. Give the receipt one more stall timeout.
		c.sentMu.Lock()
		defer c.sentMu.Unlock()
		if st.takenSince.IsZero() {
			st.takenSince = time.Now()
		} else if time.Since(st.takenSince) >= c.stall {
			return fmt.Errorf("nonce %d: %w", st.nonce, errNonceTaken)
		}
		st.last = time.Now()
		return nil
	}
	now, err := c.fees(ctx)
	if err != nil {
		c.touch(st)
		return nil
	}
	for n := mined; n < st.nonce; n++ {
		if !c.inflight(n) {
			c.fillNonce(ctx, n, now)
		}
	}
	c.sentMu.Lock()
	if st.bumps >= maxFeeBumps {
		st.last = time.Now()
		c.sentMu.Unlock()
		return nil
	}
	f := st.fees.bump(now)
	st.fees, st.bumps, st.last = f, st.bumps+1, time.Now()
	c.sentMu.Unlock()
	tx, err := types.SignNewTx(c.key, c.signer, f.tx(c.chainID, st.nonce, st.to, st.value, st.gas, st.data))
	if err != nil {
		return nil
	}
	_, err = withTimeout(ctx, c, func(ctx context.Context) (struct{}, error) { return struct{}{}, c.eth.SendTransaction(ctx, tx) })
	switch {
	case err == nil, errText(err, "already known"):
		c.sentMu.Lock()
		st.hashes = append(st.hashes, tx.Hash())
		c.sentMu.Unlock()
		c.log.Info("transaction not mined in time; replaced with higher fees", "nonce", st.nonce, "bump", st.bumps,
			"after", c.stall, "tx", tx.Hash())
	case errText(err, "nonce too low"):
		// A version was mined meanwhile: its receipt comes with the next poll.
	default:
		// "replacement transaction underpriced" (the pool holds a dearer version: the next bump
		// starts from these fees), or a provider error: the next round tries again.
		c.log.Debug("replacing a stalled transaction failed", "nonce", st.nonce, "err", err)
	}
	return nil
}

func (c *Client) touch(st *sentTx) {
	c.sentMu.Lock()
	st.last = time.Now()
	c.sentMu.Unlock()
}

// fillNonce sends a transfer of nothing to the account itself under nonce n, a nonce below the
// client's own that no transaction of this client holds (a previous run's, stuck or dropped),
// raising the fees until the pool takes it in place of what it holds under n.
func (c *Client) fillNonce(ctx context.Context, n uint64, now fees) {
	f := now
	for range maxFeeBumps {
		tx, err := types.SignNewTx(c.key, c.signer, f.tx(c.chainID, n, c.addr, new(big.Int), 21000, nil))
		if err != nil {
			return
		}
		_, err = withTimeout(ctx, c, func(ctx context.Context) (struct{}, error) { return struct{}{}, c.eth.SendTransaction(ctx, tx) })
		switch {
		case err == nil, errText(err, "already known"):
			c.log.Warn("replaced a stuck transaction of an earlier run that held up this one", "nonce", n, "tx", tx.Hash())
			return
		case errText(err, "nonce too low"):
			return // mined meanwhile
		case errText(err, "replacement transaction underpriced"), errText(err, "underpriced"):
			f = f.bump(now)
		default:
			if !errors.Is(err, ErrProviderUnavailable) {
				c.log.Debug("filling a nonce gap failed", "nonce", n, "err", err)
			}
			return
		}
	}
}
