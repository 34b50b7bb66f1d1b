package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

const deployUsage = `usage: relayd deploy --provider URL (--keystore FILE | --privateKeyFile FILE) --name NAME --out FILE
                    [--token 0x…] [--closurePeriod 1h] [--minWinProb 1] [--supply 1000000000]

Deploys relayd's contracts on the chain the JSON-RPC provider serves, with the operator's key:
the RelayToken ERC-20 (minting --supply tokens to the deployer), unless --token names an
existing ERC-20, and the RelayChannels contract for it, whose owner the deployer becomes. It
waits for the receipts, then adds the network to the networks file --out (creating it), which
nodes join with --network NAME (docs/NETWORKS.md). The deployer pays the gas: fund its address
with the chain's native currency first.

The key comes from a keystore (--keystore, its password from --passwordFile or RELAYD_PASSWORD;
a node's identity.json is one) or from a file holding the hex private key (--privateKeyFile);
neither file may be readable by other users. The key is never printed, nor the provider URL's
path or query (API keys live there).

`

// deployTimeout bounds a whole deployment by default: a real chain may take minutes to mine
// two transactions when fees rise.
const deployTimeout = 10 * time.Minute

// runDeploy is `relayd deploy`; args exclude the subcommand name. It returns 0 on success, 2
// for a usage error (found before anything is sent) and 1 when the deployment failed.
func runDeploy(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return deployMain(ctx, args, os.Getenv, stdout, stderr)
}

func deployMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("relayd deploy", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() { fmt.Fprint(stderr, deployUsage); flags.PrintDefaults() }
	provider := flags.String("provider", getenv(config.EnvName("provider")), "the chain's JSON-RPC URL, http(s) or ws(s) (default $"+config.EnvName("provider")+")")
	keystore := flags.String("keystore", "", "keystore file (v3 JSON, e.g. a node's identity.json) holding the deployer's key")
	passwordFile := flags.String("passwordFile", "", "file holding the keystore's password (default: $"+config.EnvName("password")+")")
	keyFile := flags.String("privateKeyFile", "", "file holding the deployer's private key in hex, instead of --keystore")
	tokenFlag := flags.String("token", "", "address of an existing ERC-20 to use instead of deploying RelayToken")
	supply := flags.String("supply", "1000000000", "tokens RelayToken mints to the deployer (18 decimals); not with --token")
	closure := flags.Duration("closurePeriod", time.Hour, "the channels' closure period, whole seconds: how long a closing channel's tickets stay redeemable")
	minWinProb := flags.String("minWinProb", "1", "the network's minimum win probability (1: every ticket wins; 0.01: one in 100); the owner can change it later")
	name := flags.String("name", "", "the network's name in the networks file (lowercase letters, digits, '.', '_', '-')")
	description := flags.String("description", "", "a line describing the network, for people")
	out := flags.String("out", "", "networks file to add the network to (created when missing)")
	timeout := flags.Duration("timeout", deployTimeout, "give up after this long")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "relayd deploy: "+format+"\n", a...)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "relayd deploy: "+format+"\n", a...)
		return 1
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if flags.NArg() != 0 {
		return usage("unexpected arguments %q (relayd deploy -h)", flags.Args())
	}

	// Everything the arguments say is checked before the chain is touched.
	if u, err := url.Parse(*provider); *provider == "" || err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme) {
		return usage("--provider must be the http(s) or ws(s) URL of the chain's JSON-RPC endpoint (or set %s)", config.EnvName("provider"))
	}
	if *name == "" || *out == "" {
		return usage("--name and --out are required: the network's name and the networks file to write it to")
	}
	probe := networks.Network{Name: *name, Description: *description, ChainID: 1, Token: common.Address{1}, Channels: common.Address{2},
		MinWinProb: tickets.MaxWinProb, ClosurePeriod: time.Second}
	if err := probe.Validate(); err != nil {
		var fe *networks.FieldError
		if errors.As(err, &fe) {
			return usage("--%s: %s", fe.Field, fe.Msg)
		}
		return usage("%v", err)
	}
	existing, err := networks.Load(*out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return usage("--out: %v", err)
	case slices.ContainsFunc(existing, func(n networks.Network) bool { return n.Name == *name }):
		return usage("--name: %s already defines a network %q: choose another name", *out, *name)
	}
	if *closure <= 0 || *closure%time.Second != 0 || *closure > networks.MaxClosurePeriod {
		return usage("--closurePeriod must be a positive whole number of seconds up to %s, not %s", networks.MaxClosurePeriod, *closure)
	}
	minWin, err := tickets.ParseWinProb(*minWinProb)
	if err != nil {
		return usage("--minWinProb %q: want a probability in (0, 1], e.g. 0.01", *minWinProb)
	}
	var opts []chain.DeployOption
	opts = append(opts, chain.WithMinWinProb(minWin))
	var mint *big.Int
	if *tokenFlag != "" {
		if set["supply"] {
			return usage("--supply mints a new RelayToken; with --token the existing ERC-20 is used")
		}
		if !common.IsHexAddress(*tokenFlag) || common.HexToAddress(*tokenFlag) == (common.Address{}) {
			return usage("--token %q is not a 0x address of an ERC-20", *tokenFlag)
		}
		opts = append(opts, chain.WithToken(common.HexToAddress(*tokenFlag)))
	} else {
		amount, err := token.Parse(*supply)
		if err != nil || amount.IsZero() {
			return usage("--supply %q: want a positive number of tokens", *supply)
		}
		mint = amount.Big()
	}
	key, code, msg := deployerKey(*keystore, *passwordFile, *keyFile, getenv)
	if code != 0 {
		fmt.Fprintf(stderr, "relayd deploy: %s\n", msg)
		return code
	}
	deployer := crypto.PubkeyToAddress(key.PublicKey)

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	rpc, err := chain.DialRPC(ctx, *provider)
	if err != nil {
		return fail("%v", err)
	}
	defer rpc.Close()
	id, err := rpc.ChainID(ctx)
	if err != nil {
		return fail("read the chain id from %s: %v", rpc.Display(), err)
	}
	chainID := id.Uint64()
	balance, err := rpc.BalanceAt(ctx, deployer, nil)
	if err != nil {
		return fail("read the deployer's balance: %v", err)
	}
	if balance.Sign() == 0 {
		return fail("the deployer %s holds no native currency on chain %d to pay for gas: fund it first", deployer.Hex(), chainID)
	}
	if need := ledger.MinClosurePeriod(chain.DefaultConfirmations(chainID), chain.TypicalBlockTime(chainID)); *closure < need {
		fmt.Fprintf(stderr, "relayd deploy: warning: a closure period of %s is shorter than the %s a destination on chain %d needs to see a closure and redeem its tickets in time\n",
			*closure, need, chainID)
	}
	what := "RelayToken and RelayChannels"
	if *tokenFlag != "" {
		what = "RelayChannels for the ERC-20 " + common.HexToAddress(*tokenFlag).Hex()
	}
	fmt.Fprintf(stdout, "Deploying %s on chain %d (%s) from %s...\n", what, chainID, rpc.Display(), deployer.Hex())
	t0 := time.Now()
	d, err := chain.Deploy(ctx, rpc, key, *closure, mint, opts...)
	if err != nil {
		return fail("%v", err)
	}
	n := networks.Network{Name: *name, Description: *description, ChainID: chainID, Provider: providerHint(*provider),
		Token: d.Token, Channels: d.Channels, StartBlock: d.Block, MinWinProb: minWin, ClosurePeriod: *closure}
	fmt.Fprintf(stdout, "Deployed in %s: token %s, channels %s (block %d)\n", time.Since(t0).Round(time.Millisecond), d.Token.Hex(), d.Channels.Hex(), d.Block)
	if err := networks.Append(*out, n); err != nil {
		// The contracts exist: print the entry, so that the deployment is not lost.
		entry, _ := networks.Encode([]networks.Network{n})
		return fail("the contracts are deployed, but the networks file could not be written: %v\nThe entry:\n%s", err, entry)
	}
	fmt.Fprintf(stdout, "Wrote network %q to %s. Nodes join it with: relayd --network %s --networksFile %s --provider <a provider of chain %d>\n",
		*name, *out, *name, *out, chainID)
	if n.Provider == "" {
		fmt.Fprintf(stdout, "The provider URL has a path or query (an API key?), so the file names no provider.\n")
	}
	return 0
}

// providerHint is what of the provider URL may go into a networks file, which is meant to be
// shared: the URL when it is only scheme, host and port, nothing when it has a path, query or
// user info (an API key, e.g. https://mainnet.infura.io/v3/KEY).
func providerHint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// deployerKey loads the deployer's key from exactly one of a keystore and a hex key file. It
// returns an exit code and a message when it cannot; the message never holds the key or the
// password.
func deployerKey(keystore, passwordFile, keyFile string, getenv func(string) string) (*ecdsa.PrivateKey, int, string) {
	switch {
	case keystore == "" && keyFile == "":
		return nil, 2, "give the deployer's key: --keystore FILE (with --passwordFile or " + config.EnvName("password") + ") or --privateKeyFile FILE"
	case keystore != "" && keyFile != "":
		return nil, 2, "give one of --keystore and --privateKeyFile"
	case keyFile != "" && passwordFile != "":
		return nil, 2, "--passwordFile goes with --keystore, not with --privateKeyFile"
	}
	if keyFile != "" {
		data, msg := readSecretFile(keyFile, "privateKeyFile")
		if msg != "" {
			return nil, 2, msg
		}
		hex := strings.TrimPrefix(strings.TrimSpace(string(data)), "0x")
		key, err := crypto.HexToECDSA(hex)
		if err != nil {
			return nil, 2, fmt.Sprintf("--privateKeyFile: %s does not hold a secp256k1 private key in hex (64 hex digits)", keyFile)
		}
		return key, 0, ""
	}
	c := config.Config{PasswordFile: passwordFile}
	if passwordFile == "" {
		c.Password = getenv(config.EnvName("password"))
	}
	if err := c.LoadPasswordFile(); err != nil {
		return nil, 2, err.Error()
	}
	if c.Password == "" {
		return nil, 2, "--keystore needs its password: --passwordFile FILE or " + config.EnvName("password")
	}
	if _, msg := readSecretFile(keystore, "keystore"); msg != "" {
		return nil, 2, msg
	}
	id, err := identity.Load(keystore, c.Password)
	if err != nil {
		return nil, 2, fmt.Sprintf("--keystore: %v", err)
	}
	return id.PrivateKey(), 0, ""
}

// readSecretFile reads a small file that holds a secret, refusing one other users may access.
func readSecretFile(path, flagName string) ([]byte, string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Sprintf("--%s: %v", flagName, err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Sprintf("--%s: %v", flagName, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Sprintf("--%s: %s is not a regular file", flagName, path)
	case st.Mode().Perm()&0o007 != 0:
		return nil, fmt.Sprintf("--%s: %s is accessible to other users (mode %04o): restrict it, e.g. chmod 600 %s", flagName, path, st.Mode().Perm(), path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil {
		return nil, fmt.Sprintf("--%s: %v", flagName, err)
	}
	return bytes.TrimSpace(data), ""
}
