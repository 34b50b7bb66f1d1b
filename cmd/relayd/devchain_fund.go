package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devfund"
	"github.com/relayd/relayd/internal/token"
)

const fundUsage = `usage: relayd devchain fund [--provider URL] [--channelsContract 0x…] [--key hex] <address> <tokens> <native>

Sends <tokens> tokens and <native> native currency (whole units, decimals allowed, 0 skips one)
to <address>, the 0x chain address a node prints at start and in "relayd-data"'s logs, from the
dev chain's funded deployer account. The flags default to the variables of devchain.env
(RELAYD_PROVIDER, RELAYD_CHANNELS_CONTRACT, RELAY_DEVCHAIN_DEPLOYER_KEY): after
"source devchain.env" no flag is needed. Example: relayd devchain fund 0x5aAe…BeAed 100 1

`

// fundMain is `relayd devchain fund`; getenv supplies the defaults of devchain.env.
func fundMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relayd devchain fund", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, fundUsage); fs.PrintDefaults() }
	or := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	provider := fs.String("provider", or(config.EnvName("provider"), "http://127.0.0.1:8545"), "the dev chain's JSON-RPC URL")
	channels := fs.String("channelsContract", getenv(config.EnvName("channelsContract")), "address of the dev chain's RelayChannels contract")
	keyHex := fs.String("key", "", "hex private key that pays (default: RELAY_DEVCHAIN_DEPLOYER_KEY, else the published dev key)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "relayd devchain fund: "+format+"\n", a...)
		return code
	}
	if fs.NArg() != 3 {
		fs.Usage()
		return fail(2, "want <address> <tokens> <native>, got %d arguments", fs.NArg())
	}
	to := fs.Arg(0)
	if !common.IsHexAddress(to) {
		return fail(2, "%q is not a 0x chain address (a node logs its address at start: address=0x…)", to)
	}
	tokens, err := token.Parse(fs.Arg(1))
	if err != nil {
		return fail(2, "<tokens> %v", err)
	}
	native, err := token.Parse(fs.Arg(2))
	if err != nil {
		return fail(2, "<native> %v", err)
	}
	if tokens.IsZero() && native.IsZero() {
		return fail(2, "both amounts are 0: nothing to send")
	}
	if !common.IsHexAddress(*channels) {
		return fail(2, "--channelsContract must be the 0x address of the dev chain's RelayChannels contract (source devchain.env, or copy RELAYD_CHANNELS_CONTRACT from relayd devchain's output)")
	}
	if *keyHex == "" {
		*keyHex = or("RELAY_DEVCHAIN_DEPLOYER_KEY", devfund.DevKeyHex)
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(*keyHex, "0x"))
	if err != nil {
		return fail(2, "--key is not a hex private key")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	addr := common.HexToAddress(to)
	res, err := devfund.FundAccount(ctx, devfund.FundConfig{RPCURL: *provider, Channels: common.HexToAddress(*channels), Key: key}, addr, native.Big(), tokens.Big())
	switch {
	case errors.Is(err, chain.ErrNoContract):
		return fail(1, "--channelsContract: no RelayChannels contract at %s on that chain (is devchain.env from the dev chain running now?): %v", common.HexToAddress(*channels).Hex(), err)
	case errors.Is(err, chain.ErrProviderUnavailable):
		return fail(1, "--provider: no dev chain answers (is relayd devchain running?): %v", err)
	case errors.Is(err, chain.ErrInsufficientFunds):
		return fail(1, "the paying account %s cannot pay %s tokens and %s native: %v", crypto.PubkeyToAddress(key.PublicKey).Hex(), fs.Arg(1), fs.Arg(2), err)
	case err != nil:
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "Sent %s %s and %s native to %s.\n", tokens, res.TokenSymbol, native, addr.Hex())
	if res.TokenTx != (common.Hash{}) {
		fmt.Fprintf(stdout, "  token transfer:  %s\n", res.TokenTx.Hex())
	}
	if res.NativeTx != (common.Hash{}) {
		fmt.Fprintf(stdout, "  native transfer: %s\n", res.NativeTx.Hex())
	}
	return 0
}
