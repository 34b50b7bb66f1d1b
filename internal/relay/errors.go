package relay

import "errors"

// Errors returned by this package. Match them with errors.Is; a rejected ticket's error matches
// both ErrInvalidTicket and the reason's sentinel.
var (
	// ErrInvalidConfig reports a Config or LedgerConfig that New or NewLedger refuses; the
	// wrapping error names the field.
	ErrInvalidConfig = errors.New("relay: invalid config")

	// ErrBadRoute reports a route Send refuses: no hops, more than packet.MaxHops, this node
	// on it, the same node twice in a row, or a peer ID without a secp256k1 key.
	ErrBadRoute = errors.New("relay: bad route")

	// ErrFrameSize reports a msg or ack frame of a length no frame has.
	ErrFrameSize = errors.New("relay: bad frame length")
	// ErrFrameVersion reports a frame whose version byte this node does not speak.
	ErrFrameVersion = errors.New("relay: unknown frame version")

	// ErrInvalidTicket reports an incoming ticket that is rejected; the packet is dropped.
	ErrInvalidTicket = errors.New("relay: invalid ticket")
	// ErrTicketMissing reports a packet for a relayer without a ticket in paid mode.
	ErrTicketMissing = errors.New("relay: ticket missing")
	// ErrTicketMalformed reports ticket bytes that do not decode (tickets.UnmarshalBinary).
	ErrTicketMalformed = errors.New("relay: malformed ticket")
	// ErrTicketChannel reports a ticket whose channel id is not the channel from its sender.
	ErrTicketChannel = errors.New("relay: ticket for another channel")
	// ErrTicketEpoch reports a ticket of another epoch than the channel's current one.
	ErrTicketEpoch = errors.New("relay: ticket epoch is not the channel's")
	// ErrTicketSigner reports a ticket not signed by the channel's source.
	ErrTicketSigner = errors.New("relay: ticket not signed by channel source")
	// ErrTicketIndex reports a ticket index not above the last one accepted (or redeemed).
	ErrTicketIndex = errors.New("relay: ticket index not increasing")
	// ErrTicketAmount reports a relayer's ticket below the price per hop or above
	// MaxTicketAmount, or a ticket this node was asked to sign above MaxTicketAmount.
	ErrTicketAmount = errors.New("relay: wrong ticket amount")
	// ErrTicketBalance reports a ticket worth more than the channel's balance minus what its
	// source already owes this node.
	ErrTicketBalance = errors.New("relay: ticket exceeds channel balance")
	// ErrTicketChallenge reports a ticket whose proof-of-relay challenge does not match the
	// challenge T_i the packet's sender put in this hop's routing information.
	ErrTicketChallenge = errors.New("relay: ticket challenge mismatch")

	// ErrChannelNotFound reports that no channel exists between the two nodes.
	ErrChannelNotFound = errors.New("relay: channel not found")
	// ErrChannelNotOpen reports a channel that is closed or pending to close.
	ErrChannelNotOpen = errors.New("relay: channel not open")
	// ErrNotEnoughBalance reports that this node's outgoing channel cannot cover the ticket it
	// would issue (depleted or underfunded): Send refuses before anything leaves the node and a
	// relayer drops the packet. The API maps it to NOT_ENOUGH_BALANCE.
	ErrNotEnoughBalance = errors.New("relay: not enough balance in channel")

	// ErrUnknownAck reports an acknowledgement that matches no pending packet, or WaitAck on
	// a message this node does not know (never sent, or forgotten after AckTimeout).
	ErrUnknownAck = errors.New("relay: unknown acknowledgement")
	// ErrBadAck reports an acknowledgement that does not open the pending ack challenge, or
	// comes from another peer than the packet's next hop.
	ErrBadAck = errors.New("relay: bad acknowledgement")
	// ErrAckTimeout reports that a message's first hop did not acknowledge within AckTimeout.
	ErrAckTimeout = errors.New("relay: acknowledgement timed out")

	// ErrOverloaded reports that a queue or the pending table is full; the packet is dropped.
	ErrOverloaded = errors.New("relay: overloaded")

	// ErrStopped reports a ticket asked of a Ledger whose Run has ended (the node is stopping):
	// what it issued is already stored, so it signs no more.
	ErrStopped = errors.New("relay: ledger stopped")

	// ErrAlreadyRedeemed is what a Redeemer returns (wrapped) when the chain reports the
	// ticket's index as already redeemed (the contract's IndexNotIncreasing): the Ledger then
	// marks the ticket redeemed instead of retrying it forever.
	ErrAlreadyRedeemed = errors.New("relay: ticket index already redeemed")
)
