package ledger

import "errors"

// Errors returned by this package. Match them with errors.Is. Their texts are sentences an
// operator reads as they are (the REST API and the admin commands show them), so they carry no
// package prefix. An incoming ticket's rejection is exactly one of the ErrTicket* reasons,
// ErrChannelNotFound or ErrChannelNotOpen; the relay wraps it in its own invalid-ticket error.
var (
	// ErrInvalidConfig reports a Config that New refuses; the wrapping error names the field.
	ErrInvalidConfig = errors.New("invalid ledger config")

	// ErrTicketChannel reports a ticket whose channel id is not the channel from its sender.
	ErrTicketChannel = errors.New("ticket for another channel")
	// ErrTicketEpoch reports a ticket of another epoch than the channel's current one.
	ErrTicketEpoch = errors.New("ticket epoch is not the channel's")
	// ErrTicketSigner reports a ticket not signed by the channel's source.
	ErrTicketSigner = errors.New("ticket not signed by channel source")
	// ErrTicketIndex reports a ticket index not above the last one accepted (or redeemed).
	ErrTicketIndex = errors.New("ticket index not increasing")
	// ErrTicketAmount reports a relayer's ticket whose expected value is below the price per hop
	// or above MaxTicketValue, or a ticket this node was asked to sign above MaxTicketValue.
	ErrTicketAmount = errors.New("wrong ticket amount")
	// ErrTicketWinProb reports a ticket whose win probability is below the network minimum the
	// contract publishes (or is not a valid 56-bit value).
	ErrTicketWinProb = errors.New("ticket win probability below the network minimum")
	// ErrTicketBalance reports a ticket whose face amount is more than the channel's balance minus
	// what its source already owes this node.
	ErrTicketBalance = errors.New("ticket exceeds channel balance")

	// ErrChannelNotFound reports that no channel exists between the two nodes.
	ErrChannelNotFound = errors.New("channel not found")
	// ErrChannelNotOpen reports a channel that is closed or pending to close.
	ErrChannelNotOpen = errors.New("channel not open")
	// ErrChannelAlreadyOpen reports an open request for a channel that is open or closing.
	ErrChannelAlreadyOpen = errors.New("channel already open")
	// ErrClosureTimeNotReached reports a closure that cannot be finalized yet: the channel's
	// closure period has not passed (the contract's ClosureTimeNotReached).
	ErrClosureTimeNotReached = errors.New("closure period not over yet")
	// ErrNotEnoughBalance reports that an account or a channel cannot pay what is asked: this
	// node's outgoing channel cannot cover the ticket it would issue (depleted or underfunded),
	// or the account's token or native balance is below an amount to fund or withdraw.
	ErrNotEnoughBalance = errors.New("not enough balance")
	// ErrSelf reports a channel operation naming this node as its other end.
	ErrSelf = errors.New("a channel needs another node than this one")

	// ErrAlreadyRedeemed reports a ticket whose index the contract has already passed (its
	// IndexNotIncreasing): paid before, or void because a later index was paid.
	ErrAlreadyRedeemed = errors.New("ticket index already redeemed")
	// ErrTicketVoid reports a ticket the contract refused for good: its channel closed or
	// reopened, its signature or proof-of-relay response does not check, or the channel's
	// balance cannot pay it. It is settled as neglected.
	ErrTicketVoid = errors.New("ticket void")
	// ErrContractRefused reports a contract revert this package has no sentinel for; the error
	// carries the contract's reason.
	ErrContractRefused = errors.New("the contract refused")
	// ErrNoVerdict is a RedeemResult's error when the chain gave no verdict on a ticket: its
	// batch was not sent, failed as a whole, or its receipt could not be read. The ticket stays
	// unredeemed; redeeming it again is safe (the contract pays an index at most once).
	ErrNoVerdict = errors.New("no verdict from the chain")
	// ErrChainUnavailable reports that the chain provider could not be reached or did not
	// answer; nothing was decided, and retrying later may work. It wraps
	// chain.ErrProviderUnavailable.
	ErrChainUnavailable = errors.New("the chain provider is unavailable")

	// ErrStopped reports a ticket asked of a Ledger whose Run has ended (the node is stopping):
	// what it issued is already stored, so it signs no more.
	ErrStopped = errors.New("the ledger has stopped: the node is shutting down")
)
