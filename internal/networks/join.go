package networks

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
)

// JoinConfig is what a node's configuration says about its network. Provider and Name are
// required.
type JoinConfig struct {
	// Provider is the node's JSON-RPC URL (--provider).
	Provider string
	// Name is the network's name (--network).
	Name string
	// File is the operator's networks file (--networksFile); "" for the shipped networks only.
	File string
	// Channels is the RelayChannels address the node was given (--channelsContract), "" when
	// none: the network's entry names it.
	Channels string
}

// Join resolves the network a node starts on and checks that the provider serves it, before
// the node dials its chain client:
//
//   - Without Channels the network's entry supplies the contracts: Lookup(Name, File) must find
//     it, and Verify must accept it on the provider's chain.
//   - With Channels and a File, the entry must exist and name the same channels contract (a
//     contradiction is a *FieldError on "channels"), and Verify must accept it.
//   - With Channels and no File nothing is looked up or checked (how `relayd cluster` and the
//     tests start nodes on chains they deploy themselves): the result holds only Name and
//     Channels, StartBlock 0.
//
// The result's Channels is the contract the node uses and StartBlock the block its indexer
// starts from. Errors: ErrUnknownNetwork, ErrBadNetwork (a *FieldError), ErrMismatch (the chain
// disagrees), chain.ErrProviderUnavailable; none holds the provider URL's path or query.
func Join(ctx context.Context, cfg JoinConfig) (Network, error) {
	if cfg.Channels != "" && cfg.File == "" {
		if !common.IsHexAddress(cfg.Channels) {
			return Network{}, &FieldError{Network: cfg.Name, Field: "channels", Msg: fmt.Sprintf("%q is not a 0x address", cfg.Channels)}
		}
		return Network{Name: cfg.Name, Channels: common.HexToAddress(cfg.Channels)}, nil
	}
	n, err := Lookup(cfg.Name, cfg.File)
	if err != nil {
		return Network{}, err
	}
	if cfg.Channels != "" && (!common.IsHexAddress(cfg.Channels) || common.HexToAddress(cfg.Channels) != n.Channels) {
		return Network{}, &FieldError{File: cfg.File, Network: n.Name, Field: "channels", Msg: fmt.Sprintf(
			"is %s, but --channelsContract says %s: drop --channelsContract to use the network's, or name another network", n.Channels.Hex(), cfg.Channels)}
	}
	rpc, err := chain.DialRPC(ctx, cfg.Provider)
	if err != nil {
		return Network{}, err
	}
	defer rpc.Close()
	if err := Verify(ctx, rpc, n); err != nil {
		return Network{}, fmt.Errorf("the chain at %s is not network %q: %w", rpc.Display(), n.Name, err)
	}
	return n, nil
}
