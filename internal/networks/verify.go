package networks

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/tickets"
)

// Chain is what Verify reads from a provider: *chain.RPC (whose errors hide the provider URL's
// secrets), *ethclient.Client and go-ethereum's simulated backend's client satisfy it.
type Chain interface {
	ChainID(ctx context.Context) (*big.Int, error)
	BlockNumber(ctx context.Context) (uint64, error)
	chain.ContractReader
}

// Verify checks that the chain c serves is network n's: its chain id, a head at or past the
// start block, a RelayChannels contract at n.Channels whose token() is n.Token, code at n.Token,
// and the contract's closure period and minimum win probability equal to n's. A chain that
// disagrees fails with ErrMismatch: a *MismatchError per field (several are joined), each
// naming the field, what the file says and what the chain says; an address without the
// contract also matches chain.ErrNoContract. On another chain id nothing else is checked. An
// error of the provider itself (chain.ErrProviderUnavailable) is returned as it is: it says
// nothing about the network. The minimum win probability is compared with what the contract
// says now: its owner may change it, and the network file must follow.
func Verify(ctx context.Context, c Chain, n Network) error {
	if err := n.Validate(); err != nil {
		return err
	}
	mismatch := func(field, want, got, hint string, err error) *MismatchError {
		return &MismatchError{Network: n.Name, Field: field, Want: want, Got: got, Hint: hint, Err: err}
	}
	id, err := c.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("verify network %q: read chain id: %w", n.Name, err)
	}
	if !id.IsUint64() || id.Uint64() != n.ChainID {
		return mismatch("chainId", fmt.Sprint(n.ChainID), id.String(),
			fmt.Sprintf("the provider serves another chain: give a provider of chain %d", n.ChainID), nil)
	}
	var errs []error
	head, err := c.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("verify network %q: read head: %w", n.Name, err)
	}
	if head < n.StartBlock {
		errs = append(errs, mismatch("startBlock", fmt.Sprintf("%d or later", n.StartBlock), fmt.Sprintf("head %d", head),
			"the provider is behind (still syncing?) or serves a younger chain with the same id", nil))
	}
	params, err := chain.ReadChannels(ctx, c, n.Channels)
	switch {
	case errors.Is(err, chain.ErrNoContract):
		return errors.Join(append(errs, mismatch("channels", "a RelayChannels contract at "+n.Channels.Hex(), err.Error(),
			fmt.Sprintf("wrong address, or the contract is not deployed on chain %d", n.ChainID), err))...)
	case err != nil:
		return fmt.Errorf("verify network %q: %w", n.Name, err)
	}
	if params.Token != n.Token {
		errs = append(errs, mismatch("token", n.Token.Hex(), "the channels contract's token() is "+params.Token.Hex(),
			"the file names another token than the one the channels are funded in", nil))
	} else {
		code, err := c.CodeAt(ctx, n.Token, nil)
		switch {
		case err != nil:
			return fmt.Errorf("verify network %q: read the token's code: %w", n.Name, err)
		case len(code) == 0:
			errs = append(errs, mismatch("token", "a contract at "+n.Token.Hex(), "no code there", "", chain.ErrNoContract))
		}
	}
	if params.ClosurePeriod != n.ClosurePeriod {
		errs = append(errs, mismatch("closurePeriod", formatPeriod(n.ClosurePeriod), formatPeriod(params.ClosurePeriod), "", nil))
	}
	if params.MinWinProb != n.MinWinProb {
		errs = append(errs, mismatch("minWinProb", tickets.FormatWinProb(n.MinWinProb), tickets.FormatWinProb(params.MinWinProb),
			"the contract's owner may have changed it: update the network file", nil))
	}
	return errors.Join(errs...)
}
