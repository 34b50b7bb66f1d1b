package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/relayd/relayd/internal/chain"
)

// BatchRedeemer is what ChainRedeemer needs of the chain; *chain.Client implements it.
type BatchRedeemer interface {
	RedeemTickets(ctx context.Context, rs []chain.Redemption, opts ...chain.RedeemOption) ([]chain.RedeemOutcome, error)
}

// ChainRedeemer is the Redeemer of a node: it sends the tickets to the channels contract's
// batched redeemTickets with the chain client (as many transactions as the gas budget needs)
// and turns the contract's verdicts into this package's sentinels, by the bindings' error types.
type ChainRedeemer struct {
	Chain BatchRedeemer
	// Options are passed on to every RedeemTickets call (e.g. chain.WithRedeemBatchGas).
	Options []chain.RedeemOption
}

// RedeemBatch implements Redeemer.
func (c ChainRedeemer) RedeemBatch(ctx context.Context, batch []AckedTicket) ([]RedeemResult, error) {
	rs := make([]chain.Redemption, len(batch))
	for i, a := range batch {
		rs[i] = chain.Redemption{Ticket: a.Ticket, Response: a.Response, Source: a.Source}
	}
	outcomes, err := c.Chain.RedeemTickets(ctx, rs, c.Options...)
	if outcomes == nil { // nothing was sent
		return nil, FromChain(err)
	}
	out := make([]RedeemResult, len(outcomes))
	for i, o := range outcomes {
		out[i].Tx = o.TxHash
		switch {
		case o.Redeemed:
		case o.Reason != nil:
			out[i].Err = fmt.Errorf("%w: %s", revertSentinel(o.Reason), reasonName(o.Reason))
		default:
			out[i].Err = fmt.Errorf("%w: %w", ErrNoVerdict, FromChain(o.Err))
		}
	}
	return out, FromChain(err)
}

// reasonName names a contract error for a message: "IndexNotIncreasing{TicketIndex:3 …}".
func reasonName(reason any) string {
	s := strings.TrimPrefix(fmt.Sprintf("%T%+v", reason, reason), "*contracts.")
	s = strings.TrimPrefix(s, "RelayChannels")
	return strings.Replace(s, "&", "", 1)
}
