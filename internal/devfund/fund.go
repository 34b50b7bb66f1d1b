// Package devfund sends a dev chain's native currency and tokens from its published deployer key
// to an account, over JSON-RPC: what `relayd devchain fund` and `relayctl load` need of the dev
// chain without importing it (internal/devchain embeds go-ethereum's simulated node, tens of
// megabytes in a binary). It imports internal/chain only. DEV-ONLY: the key is public.
package devfund

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
)

// DevKeyHex is the dev chain's default deployer key. DEV-ONLY: it is published here, so anything
// it holds on a real chain is anybody's.
const DevKeyHex = "b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291"

// DevKey returns the parsed DevKeyHex. DEV-ONLY.
func DevKey() *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(DevKeyHex)
	if err != nil {
		panic(err) // a constant
	}
	return k
}

// FundConfig says which running dev chain FundAccount talks to. RPCURL and Channels are
// required.
type FundConfig struct {
	// RPCURL is the dev chain's JSON-RPC URL (RELAYD_PROVIDER in devchain.env).
	RPCURL string
	// Channels is the RelayChannels contract's address (RELAYD_CHANNELS_CONTRACT); the token's
	// is read from it.
	Channels common.Address
	// Key pays: the dev chain's deployer, which holds the token supply (DevKey when nil).
	Key *ecdsa.PrivateKey
	// Logger receives the chain client's logs (discarded when nil).
	Logger *slog.Logger
}

// Funded says what FundAccount sent.
type Funded struct {
	NativeTx, TokenTx common.Hash // zero when that amount was zero
	TokenSymbol       string
}

// FundAccount sends to nativeWei of the native currency and tokenWei tokens from cfg.Key, on a
// dev chain running in another process (devchain.Chain.Fund is the in-process form); a nil or zero
// amount is skipped. It returns once both transfers are mined. Errors wrap the chain package's
// sentinels: chain.ErrProviderUnavailable (no chain at RPCURL), chain.ErrNoContract (no
// contract at Channels), chain.ErrInsufficientFunds.
func FundAccount(ctx context.Context, cfg FundConfig, to common.Address, nativeWei, tokenWei *big.Int) (Funded, error) {
	if cfg.Key == nil {
		cfg.Key = DevKey()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := chain.Dial(ctx, chain.Config{ProviderURL: cfg.RPCURL, Key: cfg.Key, Channels: cfg.Channels, Logger: cfg.Logger})
	if err != nil {
		return Funded{}, err
	}
	defer c.Close()
	out := Funded{TokenSymbol: c.TokenSymbol()}
	if nativeWei != nil && nativeWei.Sign() > 0 {
		if out.NativeTx, err = c.TransferNative(ctx, to, nativeWei); err != nil {
			return out, fmt.Errorf("send native currency to %s: %w", to.Hex(), err)
		}
	}
	if tokenWei != nil && tokenWei.Sign() > 0 {
		if out.TokenTx, err = c.TransferToken(ctx, to, tokenWei); err != nil {
			return out, fmt.Errorf("send %s to %s: %w", out.TokenSymbol, to.Hex(), err)
		}
	}
	return out, nil
}
