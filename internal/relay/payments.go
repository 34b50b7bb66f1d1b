package relay

import (
	"context"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// PricePerHop is what each relayer nets per packet: the ticket it receives is worth PricePerHop
// more than the one it issues (tickets.AmountFor(1)).
var PricePerHop = tickets.AmountFor(1)

// MaxTicketAmount is the most a ticket can be worth: a message's first ticket over the most
// relayers a packet carries (packet.MaxHops-1) with the largest padding,
// tickets.PaddedAmount(packet.MaxHops-1, tickets.PadMax) = 0.10 token. A relayer refuses an
// incoming ticket worth more (no sender that follows the protocol issues one), so it never
// issues more itself, and the Ledger signs nothing above it: what a crash can leave uncounted is
// bounded by it (IssuedSlack).
var MaxTicketAmount = tickets.PaddedAmount(packet.MaxHops-1, tickets.PadMax)

// Payments is the relay's view of the node's payment channels. Ledger implements it; the node
// may wrap it. Methods are called concurrently from the relay's workers.
type Payments interface {
	// AcceptTicket validates t, received from the node with chain address from, for a packet
	// this node relays (final false: t.Amount must be between PricePerHop and
	// MaxTicketAmount) or receives as the recipient (final true: any amount, the sender's
	// padding): t is signed by from, for the channel from → this node, which is open, in the
	// channel's epoch, with an index above the last one accepted, and worth no more than the
	// balance minus what from already owes this node. On success a relayer's ticket, and a
	// recipient's worth more than 0, is recorded as pending until Acknowledge stores it (the
	// recipient knows its response at once and acknowledges it itself). Rejections wrap
	// ErrInvalidTicket and the reason's sentinel. The proof-of-relay challenge is the caller's
	// to check.
	AcceptTicket(from common.Address, t *tickets.Ticket, final bool) error

	// IssueTicket signs a ticket worth amount with the given challenge on this node's channel
	// to to, with the channel's next outgoing index, which is never issued again (also after a
	// crash). It fails with ErrChannelNotFound, ErrChannelNotOpen, ErrNotEnoughBalance
	// (balance below amount) or ErrTicketAmount (amount above MaxTicketAmount) before using an
	// index.
	IssueTicket(ctx context.Context, to common.Address, amount *uint256.Int, challenge por.Challenge) (tickets.Ticket, error)

	// Acknowledge records pending tickets as acknowledged, with their responses, durably: when
	// it returns nil the tickets survive a crash. The relay batches acknowledgements.
	Acknowledge(ctx context.Context, acks []AckedTicket) error

	// Neglect gives up a pending ticket whose packet was never acknowledged (it expired, or the
	// packet could not be forwarded).
	Neglect(from common.Address, t *tickets.Ticket)
}

// AckedTicket is an incoming ticket with the proof-of-relay response that redeems it.
type AckedTicket struct {
	// Source is the chain address of the ticket's issuer, the channel's source.
	Source common.Address
	// Ticket is the ticket as received.
	Ticket tickets.Ticket
	// Response is own + ack mod n: address(Response·G) == Ticket.Challenge.
	Response [32]byte
}

// ChannelStatus is a channel's on-chain status (docs/PROTOCOL.md §4.1).
type ChannelStatus uint8

// Channel statuses, with the contract's values.
const (
	StatusClosed ChannelStatus = iota
	StatusOpen
	StatusPendingToClose
)

// ChannelState is what the Ledger needs to know about a channel, as the chain indexer sees it.
type ChannelState struct {
	// ID is keccak256(source ‖ destination).
	ID [32]byte
	// Balance is the channel's balance in the token's smallest unit.
	Balance uint256.Int
	// Epoch is the channel's current epoch (1 after the first opening).
	Epoch uint32
	// Status is the channel's status.
	Status ChannelStatus
	// TicketIndex is the index of the last ticket redeemed in the current epoch (0: none).
	TicketIndex uint64
}

// ChannelLookup finds the channel from src to dst in the node's view of the chain. It must be
// cheap (an in-memory lookup) and safe for concurrent use.
type ChannelLookup interface {
	Channel(src, dst common.Address) (ChannelState, bool)
}

// Redeemer submits a ticket to the channels contract and waits for it to be mined.
type Redeemer interface {
	// RedeemTicket redeems t with response and returns the transaction hash once it succeeded.
	// When the contract reports the index as already redeemed (IndexNotIncreasing) it returns
	// an error wrapping ErrAlreadyRedeemed.
	RedeemTicket(ctx context.Context, t tickets.Ticket, response [32]byte) (common.Hash, error)
}
