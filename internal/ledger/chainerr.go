package ledger

import (
	"errors"
	"fmt"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/chain/contracts"
)

// FromChain turns a chain client's error into this package's vocabulary: a contract revert
// becomes the sentinel of its typed error (by the binding's type, never by its text), a
// provider failure ErrChainUnavailable, a lack of funds ErrNotEnoughBalance. The original error
// stays wrapped, so its text and chain's own sentinels still show. Other errors pass unchanged.
func FromChain(err error) error {
	if err == nil {
		return nil
	}
	var rev *chain.RevertError
	if errors.As(err, &rev) {
		return fmt.Errorf("%w: %w", revertSentinel(rev.Decoded), err)
	}
	switch {
	case errors.Is(err, chain.ErrInsufficientFunds):
		return fmt.Errorf("%w: %w", ErrNotEnoughBalance, err)
	case errors.Is(err, chain.ErrProviderUnavailable):
		return fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	return err
}

// revertSentinel is the sentinel for one of the contract's (or the token's) custom errors, as
// decoded by the bindings; ErrContractRefused for the rest. HolderKeyNotSender and
// InvalidVRFProof are among the rest on purpose: the chain client sends its own key and proofs
// of the draw this node computed when it kept the ticket, so either means a fault on this side
// (a bug, or a key that changed), not a ticket the contract will never pay; such a ticket stays
// unredeemed, for a later run, instead of being settled as void.
func revertSentinel(decoded any) error {
	switch decoded.(type) {
	case *contracts.RelayChannelsIndexNotIncreasing:
		return ErrAlreadyRedeemed
	case *contracts.RelayChannelsChannelNotOpen, *contracts.RelayChannelsEpochMismatch,
		*contracts.RelayChannelsNotChannelDestination, *contracts.RelayChannelsInvalidSignature,
		*contracts.RelayChannelsSignerNotSource, *contracts.RelayChannelsInvalidResponse,
		*contracts.RelayChannelsChallengeMismatch, *contracts.RelayChannelsTicketNotWinning,
		*contracts.RelayChannelsInvalidWinProb:
		return ErrTicketVoid
	case *contracts.RelayChannelsInsufficientChannelBalance, *contracts.RelayTokenERC20InsufficientBalance:
		return ErrNotEnoughBalance
	case *contracts.RelayChannelsClosureTimeNotReached:
		return ErrClosureTimeNotReached
	case *contracts.RelayChannelsChannelPendingToClose:
		return ErrChannelAlreadyOpen
	case *contracts.RelayChannelsChannelNotPendingToClose:
		return ErrChannelNotOpen
	}
	return ErrContractRefused
}
