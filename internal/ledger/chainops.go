package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/token"
)

// Chain is what the ledger's chain-facing operations need; *chain.Client implements it. Its
// errors are chain's (RevertError, ErrProviderUnavailable, ErrInsufficientFunds); the
// operations turn them into this package's sentinels.
type Chain interface {
	NativeBalance(ctx context.Context, addr common.Address) (*big.Int, error)
	TokenBalance(ctx context.Context, addr common.Address) (*big.Int, error)
	TransferNative(ctx context.Context, to common.Address, amount *big.Int) (common.Hash, error)
	TransferToken(ctx context.Context, to common.Address, amount *big.Int) (common.Hash, error)
	FundChannel(ctx context.Context, dst common.Address, amount *big.Int) (common.Hash, error)
	InitiateClosure(ctx context.Context, dst common.Address) (common.Hash, error)
	FinalizeClosure(ctx context.Context, dst common.Address) (common.Hash, error)
	CloseIncoming(ctx context.Context, src common.Address) (common.Hash, error)
	TokenSymbol() string
}

// Operations are the node's operations on its accounts, channels and tickets, in the ledger's
// vocabulary, as the REST API, the admin console and the channel strategy call them: they check
// what can be checked before a transaction (balances, the channel's state), send it, wait until
// the node's view of the chain includes it (Synced), and return this package's sentinels.
type Operations struct {
	// Chain sends the transactions.
	Chain Chain
	// Channels is the node's view of the channels.
	Channels ChannelGraph
	// Self is this node's chain address.
	Self common.Address
	// Synced waits until the node's view of the chain has caught up with the chain's head, so
	// that a change this node made is visible in Channels when an operation returns. Optional.
	Synced func(ctx context.Context) error
	// Ledger and Redeemer are the tickets and how they are redeemed (the ticket operations).
	Ledger   *Ledger
	Redeemer Redeemer
}

// ChannelGraph is the node's view of the channels; *channels.Graph implements it.
type ChannelGraph interface {
	ChannelLookup
	// Incoming and Outgoing list the channels to and from an account.
	Incoming(account common.Address) []channels.Channel
	Outgoing(account common.Address) []channels.Channel
}

// Amount renders an amount in the smallest unit for an operator: in tokens (or whole units of
// the native currency) with the symbol, and the smallest unit in brackets.
func (o *Operations) Amount(native bool, v *big.Int) string {
	sym := o.Chain.TokenSymbol()
	if native {
		sym = "native"
	}
	return fmt.Sprintf("%s %s (%s wei)", token.Of(v).String(), sym, v)
}

// Balances returns this node's native and token balances.
func (o *Operations) Balances(ctx context.Context) (native, token *big.Int, err error) {
	if native, err = o.Chain.NativeBalance(ctx, o.Self); err != nil {
		return nil, nil, FromChain(err)
	}
	token, err = o.Chain.TokenBalance(ctx, o.Self)
	return native, token, FromChain(err)
}

// Withdraw sends amount of the native currency (native) or of the token to `to`. It fails with
// ErrNotEnoughBalance, saying both amounts, when the balance is smaller.
func (o *Operations) Withdraw(ctx context.Context, native bool, amount *big.Int, to common.Address) (common.Hash, error) {
	nativeBal, tokenBal, err := o.Balances(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	have, send := tokenBal, o.Chain.TransferToken
	if native {
		have, send = nativeBal, o.Chain.TransferNative
	}
	if amount.Cmp(have) > 0 {
		return common.Hash{}, fmt.Errorf("%w: amount %s is more than the balance %s", ErrNotEnoughBalance, o.Amount(native, amount), o.Amount(native, have))
	}
	tx, err := send(ctx, to, amount)
	return tx, FromChain(err)
}

// OpenChannel opens (funds) the channel from this node to dst with amount tokens. It fails with
// ErrSelf, ErrChannelAlreadyOpen when the channel is open or closing, or ErrNotEnoughBalance.
func (o *Operations) OpenChannel(ctx context.Context, dst common.Address, amount *big.Int) (id [32]byte, tx common.Hash, err error) {
	if dst == o.Self {
		return id, tx, ErrSelf
	}
	if ch, ok := o.Channels.Channel(o.Self, dst); ok && ch.Status != channels.Closed {
		return id, tx, fmt.Errorf("%w: the channel to %s is %s", ErrChannelAlreadyOpen, dst.Hex(), ch.Status)
	}
	if tx, err = o.fund(ctx, dst, amount); err != nil {
		return id, tx, err
	}
	return channels.IDOf(o.Self, dst), tx, nil
}

// fund funds the channel to dst with amount from the token balance (ErrNotEnoughBalance when that
// is lower) and waits until the node's view has it.
func (o *Operations) fund(ctx context.Context, dst common.Address, amount *big.Int) (tx common.Hash, err error) {
	balance, err := o.Chain.TokenBalance(ctx, o.Self)
	if err != nil {
		return tx, FromChain(err)
	}
	if amount.Cmp(balance) > 0 {
		return tx, fmt.Errorf("%w: amount %s is more than the token balance %s", ErrNotEnoughBalance, o.Amount(false, amount), o.Amount(false, balance))
	}
	if tx, err = o.Chain.FundChannel(ctx, dst, amount); err != nil {
		return tx, FromChain(err)
	}
	return tx, o.synced(ctx)
}

// TopUpChannel adds amount to the open outgoing channel to dst (ErrChannelNotFound when it is not
// open), from the node's token balance (ErrNotEnoughBalance when that is lower), and waits until
// the node's view has it.
func (o *Operations) TopUpChannel(ctx context.Context, dst common.Address, amount *big.Int) (tx common.Hash, err error) {
	if ch, ok := o.Channels.Channel(o.Self, dst); !ok || ch.Status != channels.Open {
		return tx, fmt.Errorf("%w: no open channel to %s", ErrChannelNotFound, dst.Hex())
	}
	return o.fund(ctx, dst, amount)
}

// CloseChannel closes the channel with other: outgoing (this node → other) in two steps, first
// initiating the closure, then, once the closure period is over, finalizing it; incoming at
// once. It returns the transaction (zero when there was nothing to send: the channel is closed
// already, or its closure period is not over) and the channel's status before. It fails with
// ErrSelf or ErrChannelNotFound.
func (o *Operations) CloseChannel(ctx context.Context, other common.Address, outgoing bool) (tx common.Hash, before channels.Status, err error) {
	if other == o.Self {
		return tx, before, ErrSelf
	}
	src, dst := other, o.Self
	if outgoing {
		src, dst = o.Self, other
	}
	ch, ok := o.Channels.Channel(src, dst)
	if !ok || ch.Epoch == 0 {
		return tx, before, ErrChannelNotFound
	}
	before = ch.Status
	switch {
	case ch.Status == channels.Closed:
		return tx, before, nil
	case !outgoing:
		tx, err = o.Chain.CloseIncoming(ctx, src)
	case ch.Status == channels.Open:
		tx, err = o.Chain.InitiateClosure(ctx, dst)
	default: // PendingToClose: finalize once the chain allows it
		tx, err = o.Chain.FinalizeClosure(ctx, dst)
		if err = FromChain(err); errors.Is(err, ErrClosureTimeNotReached) {
			return common.Hash{}, before, nil
		}
	}
	if err != nil {
		return tx, before, FromChain(err)
	}
	return tx, before, o.synced(ctx)
}

func (o *Operations) synced(ctx context.Context) error {
	if o.Synced == nil {
		return nil
	}
	return FromChain(o.Synced(ctx))
}

// TokenSymbol is the network token's symbol.
func (o *Operations) TokenSymbol() string { return o.Chain.TokenSymbol() }

// ListChannels lists this node's incoming and outgoing channels, the closed ones only with
// includingClosed.
func (o *Operations) ListChannels(includingClosed bool) (in, out []channels.Channel) {
	keep := func(list []channels.Channel) []channels.Channel {
		var kept []channels.Channel
		for _, c := range list {
			if includingClosed || c.Status != channels.Closed {
				kept = append(kept, c)
			}
		}
		return kept
	}
	return keep(o.Channels.Incoming(o.Self)), keep(o.Channels.Outgoing(o.Self))
}

// Channel is the channel between this node and other, outgoing (this node pays other) or
// incoming; ErrChannelNotFound when it was never opened, ErrSelf for this node.
func (o *Operations) Channel(other common.Address, outgoing bool) (channels.Channel, error) {
	if other == o.Self {
		return channels.Channel{}, ErrSelf
	}
	src, dst := other, o.Self
	if outgoing {
		src, dst = dst, src
	}
	ch, ok := o.Channels.Channel(src, dst)
	if !ok || ch.Epoch == 0 {
		return channels.Channel{}, ErrChannelNotFound
	}
	return ch, nil
}
