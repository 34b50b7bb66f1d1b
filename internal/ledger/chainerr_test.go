package ledger

import (
	"errors"
	"testing"

	"github.com/relayd/relayd/internal/chain/contracts"
)

// TestRevertSentinelOfTheDraw: a losing ticket is void for good, but a refused holder key or VRF
// proof is a fault on this side (the client sends its own), so the ticket is not given up.
func TestRevertSentinelOfTheDraw(t *testing.T) {
	for _, tc := range []struct {
		reason any
		want   error
	}{
		{new(contracts.RelayChannelsTicketNotWinning), ErrTicketVoid},
		{new(contracts.RelayChannelsInvalidVRFProof), ErrContractRefused},
		{new(contracts.RelayChannelsHolderKeyNotSender), ErrContractRefused},
	} {
		if got := revertSentinel(tc.reason); !errors.Is(got, tc.want) {
			t.Errorf("%s: %v, want %v", reasonName(tc.reason), got, tc.want)
		}
	}
}
