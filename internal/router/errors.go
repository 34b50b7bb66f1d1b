package router

import (
	"errors"
	"fmt"

	"github.com/relayd/relayd/internal/packet"
)

// Errors of Router's sends. Each says, in a sentence an operator or a client reads, why nothing
// was sent; the error returned wraps the cause too (a relay, ledger, path or transport error),
// whose text is for the log, not for clients.
var (
	// ErrNoChain: the node runs without a chain, so it has no payment channels and no path.
	ErrNoChain = errors.New("no path: this node runs without a chain, so it has no payment channels")
	// ErrNoPath: no path of open channels leads to the recipient.
	ErrNoPath = errors.New("no path of open channels to the recipient; nothing was sent")
	// ErrNotEnoughBalance: paths exist, but a channel on them cannot pay its ticket.
	ErrNotEnoughBalance = errors.New("a channel on the path has too little balance for its ticket; nothing was sent")
	// ErrMessageTooLarge: the text does not fit one packet.
	ErrMessageTooLarge = fmt.Errorf("the message is longer than %d bytes, the most a packet carries", packet.MaxMessageSize)
	// ErrBadRoute: a path names a peer without a secp256k1 key, the same peer twice in a row, or
	// more hops than a packet carries.
	ErrBadRoute = errors.New("the path is not a route a packet can take")
	// ErrSelf: the recipient or a relayer of an explicit path is this node.
	ErrSelf = errors.New("the path names this node")
	// ErrUnreachable: the first relayer cannot be reached right now.
	ErrUnreachable = errors.New("the first relayer is unreachable right now; nothing was sent")
	// ErrReplyBlock: a reply block cannot carry the answer: it expired (blocks live 10 to 20
	// minutes), this node used it already, or it is malformed (docs/PROTOCOL.md §3.9).
	ErrReplyBlock = errors.New("the reply block cannot be used: it expired (after 10 to 20 minutes) or was used already; nothing was sent")
	// ErrBusy: the node's queues are full; trying again later may work.
	ErrBusy = errors.New("the node is busy; nothing was sent, try again")
)

// Reasons are the values Reason returns.
var Reasons = []string{"no_path", "no_balance", "send_failed"}

// Reason is the metric label of why a cover or drop packet was not sent, for err from a send:
// "no_path" (no chain, no channels or no path of open channels yet), "no_balance" (paths exist,
// no channel on them pays the tickets) or "send_failed".
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrNoChain), errors.Is(err, ErrNoPath):
		return "no_path"
	case errors.Is(err, ErrNotEnoughBalance):
		return "no_balance"
	}
	return "send_failed"
}
