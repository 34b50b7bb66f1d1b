package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
)

// Tickets lists the acknowledged, unredeemed tickets of every incoming channel (from nil) or of
// the channel from *from.
func (o *Operations) Tickets(from *common.Address) ([]AckedTicket, error) {
	if from == nil {
		return o.Ledger.Tickets()
	}
	return o.Ledger.TicketsFrom(*from)
}

// Statistics counts this node's tickets by state.
func (o *Operations) Statistics() (Statistics, error) { return o.Ledger.Statistics() }

// RedeemTickets redeems the acknowledged tickets (every channel's, or those of the channel from
// *from) through the Redeemer, for why ("requested", …), and returns once the node's view of the
// chain includes every redemption. A failure after the redemption began is a *RedeemError, which
// says what was redeemed before it.
func (o *Operations) RedeemTickets(ctx context.Context, from *common.Address, why string) (RedeemReport, error) {
	rep, err := o.Ledger.Redeem(ctx, o.Redeemer, from, why)
	if err == nil {
		err = o.synced(ctx)
	}
	if err == nil {
		return rep, nil
	}
	left, lerr := o.Tickets(from)
	if lerr != nil {
		return rep, errors.Join(FromChain(err), fmt.Errorf("count the tickets left: %w", lerr))
	}
	return rep, &RedeemError{Report: rep, Remaining: len(left), Err: FromChain(err)}
}

// RedeemError is a redemption that stopped part way, e.g. when the chain provider failed after
// some redemptions were mined: Report says what it did before, Remaining how many tickets are
// still unredeemed, Err why it stopped (this package's sentinels, matched through Unwrap).
type RedeemError struct {
	Report    RedeemReport
	Remaining int
	Err       error
}

func (e *RedeemError) Error() string {
	return fmt.Sprintf("redeemed %d of %d tickets; %d remain: %v", e.Report.Redeemed, e.Total(), e.Remaining, e.Err)
}

func (e *RedeemError) Unwrap() error { return e.Err }

// Total is how many tickets the redemption had to settle.
func (e *RedeemError) Total() int {
	return e.Report.Redeemed + e.Report.Losing + e.Report.Neglected + e.Remaining
}
