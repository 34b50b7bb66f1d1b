package ledger

import (
	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/tickets"
)

// PricePerHop is what each relayer nets per packet in expected value: the ticket it receives is
// worth PricePerHop more than the one it issues (tickets.AmountFor(1), 0.01 token).
var PricePerHop = tickets.AmountFor(1)

// MaxTicketValue is the most a ticket can be worth in expected value: a message's first ticket
// over the most relayers a packet carries (packet.MaxHops-1) with the largest padding,
// tickets.PaddedAmount(packet.MaxHops-1, tickets.PadMax) = 0.10 token. A relayer refuses an
// incoming ticket worth more (no sender that follows the protocol issues one), so it never
// issues more itself, and the Ledger signs nothing above it: what a crash can leave uncounted is
// bounded by it (IssuedSlack).
var MaxTicketValue = tickets.PaddedAmount(packet.MaxHops-1, tickets.PadMax)

// AckedTicket is an incoming ticket with the proof-of-relay response that redeems it.
type AckedTicket struct {
	// Source is the chain address of the ticket's issuer, the channel's source.
	Source common.Address
	// Ticket is the ticket as received.
	Ticket tickets.Ticket
	// Response is own + ack mod n: address(Response·G) == Ticket.Challenge.
	Response [32]byte
	// Unverified says nobody checked yet that Response opens Ticket.Challenge (a recipient's
	// ticket: checking costs a scalar multiplication, which Acknowledge spends only on a
	// winner, the one ticket it keeps). A relayer's ticket was checked against the packet.
	Unverified bool
}

// ChannelLookup finds the channel from src to dst in the node's view of the chain. It must be
// cheap (an in-memory lookup) and safe for concurrent use. *channels.Graph implements it.
type ChannelLookup interface {
	Channel(src, dst common.Address) (channels.Channel, bool)
}

// balanceOf is a channel's balance as a uint256 (a balance above 2^256 cannot exist on chain;
// it reads as the largest value).
func balanceOf(ch *channels.Channel) uint256.Int {
	var b uint256.Int
	if ch.Balance != nil {
		if overflow := b.SetFromBig(ch.Balance); overflow {
			b.SetAllOne()
		}
	}
	return b
}
