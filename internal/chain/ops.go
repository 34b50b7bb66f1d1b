package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// Every operation below sends its transactions from the client's account, waits until they are
// mined and returns the hash of the last one. A revert, at estimation (nothing sent) or in the
// block, is a *RevertError.

// TransferNative sends amount wei of the native currency to to.
func (c *Client) TransferNative(ctx context.Context, to common.Address, amount *big.Int) (common.Hash, error) {
	if amount == nil || amount.Sign() <= 0 {
		return common.Hash{}, fmt.Errorf("transfer native: amount must be positive")
	}
	h, err := c.transact(ctx, to, amount, nil)
	if err != nil {
		return h, fmt.Errorf("transfer native: %w", err)
	}
	return h, nil
}

// TransferToken sends amount tokens (smallest unit) to to. A balance below amount fails with
// ErrInsufficientFunds (the token's revert) and sends nothing.
func (c *Client) TransferToken(ctx context.Context, to common.Address, amount *big.Int) (common.Hash, error) {
	if amount == nil || amount.Sign() <= 0 {
		return common.Hash{}, fmt.Errorf("transfer token: amount must be positive")
	}
	h, err := c.transact(ctx, c.token, nil, tokenABI.PackTransfer(to, amount))
	if err != nil {
		return h, fmt.Errorf("transfer token: %w", err)
	}
	return h, nil
}

// Announce binds the client's public key and multiaddrs (text form, joined with
// channels.EncodeMultiaddrs) to its account. The contract takes the key as 64 bytes X ‖ Y and
// checks that it hashes to the sender, so only the client's own key can be announced.
func (c *Client) Announce(ctx context.Context, multiaddrs []string) (common.Hash, error) {
	pub := crypto.FromECDSAPub(&c.key.PublicKey)[1:]
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackAnnounce(pub, channels.EncodeMultiaddrs(multiaddrs)))
	if err != nil {
		return h, fmt.Errorf("announce: %w", err)
	}
	return h, nil
}

// FundChannel opens the channel from the client to dst with amount tokens, or tops it up. It
// first approves the channels contract for amount when the current allowance is lower (one
// transaction more), then funds. A token balance below amount fails with ErrInsufficientFunds
// before anything is sent.
func (c *Client) FundChannel(ctx context.Context, dst common.Address, amount *big.Int) (common.Hash, error) {
	if amount == nil || amount.Sign() <= 0 {
		return common.Hash{}, fmt.Errorf("fund channel: amount must be positive")
	}
	balance, err := c.TokenBalance(ctx, c.addr)
	if err != nil {
		return common.Hash{}, fmt.Errorf("fund channel: %w", err)
	}
	if balance.Cmp(amount) < 0 {
		return common.Hash{}, fmt.Errorf("fund channel: token balance %s %s below %s %s: %w",
			token.Of(balance), c.symbol, token.Of(amount), c.symbol, ErrInsufficientFunds)
	}
	allowance, err := callView(ctx, c, c.token, tokenABI.PackAllowance(c.addr, c.channels), tokenABI.UnpackAllowance)
	if err != nil {
		return common.Hash{}, fmt.Errorf("fund channel: read allowance: %w", err)
	}
	if allowance.Cmp(amount) < 0 {
		if _, err := c.transact(ctx, c.token, nil, tokenABI.PackApprove(c.channels, amount)); err != nil {
			return common.Hash{}, fmt.Errorf("fund channel: approve: %w", err)
		}
	}
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackFundChannel(dst, amount))
	if err != nil {
		return h, fmt.Errorf("fund channel: %w", err)
	}
	return h, nil
}

// InitiateClosure starts closing the channel from the client to dst (Open → PendingToClose).
func (c *Client) InitiateClosure(ctx context.Context, dst common.Address) (common.Hash, error) {
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackInitiateChannelClosure(dst))
	if err != nil {
		return h, fmt.Errorf("initiate channel closure: %w", err)
	}
	return h, nil
}

// FinalizeClosure closes the channel from the client to dst once its closure time has passed
// (reverts with ClosureTimeNotReached before); the balance returns to the client.
func (c *Client) FinalizeClosure(ctx context.Context, dst common.Address) (common.Hash, error) {
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackFinalizeChannelClosure(dst))
	if err != nil {
		return h, fmt.Errorf("finalize channel closure: %w", err)
	}
	return h, nil
}

// CloseIncoming closes the channel from src to the client at once; its balance returns to src
// and its unredeemed tickets become void.
func (c *Client) CloseIncoming(ctx context.Context, src common.Address) (common.Hash, error) {
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackCloseIncomingChannel(src))
	if err != nil {
		return h, fmt.Errorf("close incoming channel: %w", err)
	}
	return h, nil
}

// RedeemTicket redeems tk, a ticket of a channel to the client, with the proof-of-relay response
// that opens its challenge. The channel's source is recovered from the ticket's signature; for a
// ticket below tickets.MaxWinProb the client adds its public key and its VRF proof over the
// ticket hash (the draw of PROTOCOL.md section 4.5). The contract checks everything else (section
// 4.6) and a failed check is a *RevertError with the contract's error, e.g. IndexNotIncreasing.
func (c *Client) RedeemTicket(ctx context.Context, tk tickets.Ticket, response [32]byte) (common.Hash, error) {
	src, err := tk.Signer(c.ChainID(), c.channels)
	if err != nil {
		return common.Hash{}, fmt.Errorf("redeem ticket %d: %w", tk.Index, err)
	}
	proof, err := c.drawProof(&tk)
	if err != nil {
		return common.Hash{}, fmt.Errorf("redeem ticket %d: %w", tk.Index, err)
	}
	ct := contracts.RelayChannelsTicket{
		ChannelId: tk.ChannelID,
		Amount:    tk.Amount.ToBig(),
		Index:     tk.Index,
		Epoch:     tk.Epoch,
		WinProb:   tk.WinProb,
		Challenge: common.Address(tk.Challenge),
		Signature: tk.Signature[:],
	}
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackRedeemTicket(src, ct, response, c.holderKey(), proof))
	if err != nil {
		return h, fmt.Errorf("redeem ticket %d: %w", tk.Index, err)
	}
	return h, nil
}

// MinWinProb returns the network's minimum win probability as the contract holds it now: a
// 56-bit value like a ticket's WinProb (tickets.MaxWinProb: every ticket must win). Relayers
// refuse tickets below it; the contract itself redeems them (raising the minimum does not void
// tickets already accepted).
func (c *Client) MinWinProb(ctx context.Context) (uint64, error) {
	p, err := callView(ctx, c, c.channels, channelsABI.PackMinWinProb(), channelsABI.UnpackMinWinProb)
	if err != nil {
		return 0, fmt.Errorf("read minimum win probability: %w", err)
	}
	return p, nil
}

// SetMinWinProb sets the network's minimum win probability (56-bit). Only the contract's owner,
// the account that deployed it, may: anyone else gets a *RevertError with
// *contracts.RelayChannelsNotOwner, and a value above tickets.MaxWinProb one with
// *contracts.RelayChannelsInvalidWinProb; in both cases nothing is sent.
func (c *Client) SetMinWinProb(ctx context.Context, p uint64) (common.Hash, error) {
	h, err := c.transact(ctx, c.channels, nil, channelsABI.PackSetMinWinProb(p))
	if err != nil {
		return h, fmt.Errorf("set minimum win probability: %w", err)
	}
	return h, nil
}

// GasPrice returns what a unit of gas costs now, in wei of the native currency: the latest
// base fee plus the suggested tip (the legacy gas price on a chain without base fees), for
// deciding whether a transaction is worth sending.
func (c *Client) GasPrice(ctx context.Context) (*big.Int, error) {
	f, err := c.fees(ctx)
	if err != nil {
		return nil, fmt.Errorf("gas price: %w", err)
	}
	if f.base == nil {
		return new(big.Int).Set(f.price), nil
	}
	return new(big.Int).Add(f.base, f.tip), nil
}
