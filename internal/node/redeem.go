package node

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/ledger"
)

// redeemTickets redeems every acknowledged ticket (from == nil) or those of the channel from
// *from, for why ("requested", "threshold reached", …), through the chain client
// (ledger.Ledger.Redeem logs the run).
func (s *settlement) redeemTickets(ctx context.Context, from *common.Address, why string) (ledger.RedeemReport, error) {
	return s.n.msg.ledger.Redeem(ctx, ledger.ChainRedeemer{Chain: s.client}, from, why)
}
