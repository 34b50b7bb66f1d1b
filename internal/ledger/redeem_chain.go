package ledger

import (
	"context"
	"errors"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/tickets"
)

// TicketRedeemer is what ChainRedeemer needs of the chain; *chain.Client implements it.
type TicketRedeemer interface {
	RedeemTicket(ctx context.Context, t tickets.Ticket, response [32]byte) (common.Hash, error)
}

// ChainRedeemer is the Redeemer of a node: it sends the tickets to the channels contract with
// the chain client and turns the contract's verdicts into this package's sentinels.
type ChainRedeemer struct {
	Chain TicketRedeemer
}

// RedeemBatch implements Redeemer.
func (c ChainRedeemer) RedeemBatch(ctx context.Context, batch []AckedTicket) ([]RedeemResult, error) {
	out := make([]RedeemResult, 0, len(batch))
	for _, a := range batch {
		h, err := c.Chain.RedeemTicket(ctx, a.Ticket, a.Response)
		var rev *chain.RevertError
		if err != nil && !errors.As(err, &rev) {
			return out, FromChain(err) // no verdict: this ticket and the rest are unknown
		}
		out = append(out, RedeemResult{Tx: h, Err: FromChain(err)})
	}
	return out, nil
}
