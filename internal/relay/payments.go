package relay

import (
	"context"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// Payments is the relay's view of the node's payment channels: a *ledger.Ledger implements it;
// the node may wrap it. Amounts here are expected values (tickets.Value): the relay prices a hop
// at ledger.PricePerHop in expected value, whatever win probability the tickets carry. Methods
// are called concurrently from the relay's workers.
type Payments interface {
	// AcceptTicket validates t, received from the node with chain address from, for a packet
	// this node relays (final false) or receives as the recipient (final true), and records it
	// as pending. A rejection is one of the ledger's ticket sentinels; the relay wraps it in
	// ErrInvalidTicket. The proof-of-relay challenge is the caller's to check.
	AcceptTicket(from common.Address, t *tickets.Ticket, final bool) error

	// IssueTicket signs a ticket of expected value `value` with the given challenge on this
	// node's channel to `to`. It fails with ledger.ErrChannelNotFound,
	// ledger.ErrChannelNotOpen, ledger.ErrNotEnoughBalance or ledger.ErrTicketAmount before
	// using an index.
	IssueTicket(ctx context.Context, to common.Address, value *uint256.Int, challenge por.Challenge) (tickets.Ticket, error)

	// Acknowledge records pending tickets as acknowledged, with their responses, durably: when
	// it returns nil the winners survive a crash. The relay batches acknowledgements.
	Acknowledge(ctx context.Context, acks []ledger.AckedTicket) error

	// Neglect gives up a pending ticket whose packet was never acknowledged (it expired, or the
	// packet could not be forwarded).
	Neglect(from common.Address, t *tickets.Ticket)
}

// splitPayments is what a Payments offers when the public-key work of its tickets can run apart
// from their bookkeeping, which needs each link's order (turns.go); *ledger.Ledger does. The
// relay then verifies incoming tickets and signs outgoing ones in parallel.
type splitPayments interface {
	// VerifyTicket checks t's signature by from and nothing else.
	VerifyTicket(from common.Address, t *tickets.Ticket) error
	// AcceptVerified is AcceptTicket for a ticket VerifyTicket passed with the same from.
	AcceptVerified(from common.Address, t *tickets.Ticket, final bool) error
	// ReserveTicket is IssueTicket without the signature: the index is used.
	ReserveTicket(ctx context.Context, to common.Address, value *uint256.Int, challenge por.Challenge) (tickets.Ticket, error)
	// SignTicket signs a ticket ReserveTicket returned.
	SignTicket(t *tickets.Ticket) error
}
