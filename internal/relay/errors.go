package relay

import "errors"

// Errors returned by this package. Match them with errors.Is; a rejected ticket's error matches
// both ErrInvalidTicket and the reason's sentinel: ErrTicketMissing, ErrTicketMalformed or
// ErrTicketChallenge from here, or one of internal/ledger's (channel, epoch, signer, index,
// amount, win probability, balance), which also name the channel and balance failures of
// sending and forwarding.
var (
	// ErrInvalidConfig reports a Config that New refuses; the wrapping error names the field.
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
	// ErrTicketChallenge reports a ticket whose proof-of-relay challenge does not match the
	// challenge T_i the packet's sender put in this hop's routing information.
	ErrTicketChallenge = errors.New("relay: ticket challenge mismatch")

	// ErrUnknownAck reports an acknowledgement that matches no pending packet, or WaitAck on
	// a message this node does not know (never sent, or forgotten after AckTimeout).
	ErrUnknownAck = errors.New("relay: unknown acknowledgement")
	// ErrBadAck reports an acknowledgement that does not open the pending ack challenge, or
	// comes from another peer than the packet's next hop.
	ErrBadAck = errors.New("relay: bad acknowledgement")
	// ErrAckTimeout reports that a message's first hop did not acknowledge within AckTimeout.
	ErrAckTimeout = errors.New("relay: acknowledgement timed out")

	// ErrBadReplyBlock reports bytes SendReply cannot use as a reply block: they do not decode
	// (packet.ErrBadReplyBlock), or in paid mode the block asks for no ticket, for more than
	// any path pays, or for a zero challenge. Nothing is sent.
	ErrBadReplyBlock = errors.New("relay: bad reply block")
	// ErrReplyBlockExpired reports a reply block whose epoch the hops no longer accept (or do
	// not accept yet, from a creator whose clock is ahead): nothing is sent.
	ErrReplyBlockExpired = errors.New("relay: reply block outside its time window")
	// ErrReplyBlockUsed reports a reply block this node already sent a reply with, within
	// AckTimeout: the first hop would refuse the second as a replay, so nothing is sent or paid.
	ErrReplyBlockUsed = errors.New("relay: reply block already used")
	// ErrUnknownReply reports a reply whose block id this node has no keys for: it did not make
	// the block, already received its reply, or lost the keys (a restart with a memory keyring).
	ErrUnknownReply = errors.New("relay: reply to an unknown block")

	// ErrOverloaded reports that a queue or the pending table is full; the packet is dropped.
	ErrOverloaded = errors.New("relay: overloaded")

	// errStoreFailing: the store refuses acknowledged tickets, so no paid packet is taken.
	errStoreFailing = errors.New("relay: the store refuses acknowledged tickets")
)
