package node

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/ledger"
)

// redeemOptions are passed to every batched redemption; tests make batches small.
var redeemOptions []chain.RedeemOption

// redeemer is the node's ledger.Redeemer: the contract's batched redemption through the client.
func (s *settlement) redeemer() ledger.Redeemer {
	return ledger.ChainRedeemer{Chain: s.client, Options: redeemOptions}
}

// redeemTickets redeems every acknowledged ticket (from == nil) or those of the channel from
// *from, for why ("requested", "threshold reached", …), through the chain client
// (ledger.Ledger.Redeem logs the run).
func (s *settlement) redeemTickets(ctx context.Context, from *common.Address, why string) (ledger.RedeemReport, error) {
	return s.n.msg.ledger.Redeem(ctx, s.redeemer(), from, why)
}
