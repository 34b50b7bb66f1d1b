package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/tickets"
)

const devchainUsage = `usage: relayd devchain [--port 8545] [--closurePeriod 60s] [--blockInterval 1s] [--blockTime 0] [--minWinProb 1] [--env devchain.env]
       relayd devchain fund [flags] <address> <tokens> <native>

Runs the embedded development chain (go-ethereum's simulated backend, chain id 1337) with the
RelayToken and RelayChannels contracts deployed, serving JSON-RPC over HTTP and WebSocket on
127.0.0.1. Prints the RPC URLs, chain id, contract addresses and the DEV-ONLY deployer key, and
writes them as export lines to the env file: sourcing it sets RELAYD_PROVIDER and
RELAYD_CHANNELS_CONTRACT, so a relayd started in that shell uses the chain. Ctrl-C stops it.
"relayd devchain fund" sends a node's address tokens and native currency from the deployer
(relayd devchain fund -h).
`

// runDevchain is `relayd devchain`; args exclude the subcommand name.
func runDevchain(args []string) int {
	return devchainMain(args, os.Stdout, os.Stderr)
}

func devchainMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "fund" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return fundMain(ctx, args[1:], os.Getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet("relayd devchain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, devchainUsage); fs.PrintDefaults() }
	port := fs.Int("port", 8545, "JSON-RPC port (HTTP and WebSocket) on 127.0.0.1; 0 picks a free one")
	closure := fs.Duration("closurePeriod", devchain.DefaultClosurePeriod, "channel closure period of the deployed contract (whole seconds)")
	interval := fs.Duration("blockInterval", devchain.DefaultBlockInterval, "empty-block interval when idle (transactions are sealed at once)")
	minWinProb := fs.String("minWinProb", "1", "the network minimum win probability the channels contract is deployed with (e.g. 0.01: a relayer's 0.01 ticket has a face of 1 token and wins one time in 100; 1: every ticket wins)")
	blockTime := fs.Duration("blockTime", 0, "block time, e.g. 2s: a block at that interval, transactions wait for the next one, as on a real chain (0: every transaction sealed at once, empty blocks every --blockInterval)")
	envFile := fs.String("env", "devchain.env", "file to write export lines to (empty: none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *port < 0 || *port > 65535 || *closure < 0 || *closure%time.Second != 0 || *blockTime < 0 {
		fmt.Fprintln(stderr, "relayd devchain: bad arguments (the closure period must be whole seconds, the block time not negative)")
		fs.Usage()
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal exits at once
	}()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	minWin, err := tickets.ParseWinProb(*minWinProb)
	if err != nil {
		fmt.Fprintf(stderr, "relayd devchain: --minWinProb %q: want a probability in (0, 1]\n", *minWinProb)
		return 2
	}
	c, err := devchain.New(ctx, devchain.Config{Port: *port, ClosurePeriod: *closure, BlockInterval: *interval, BlockTime: *blockTime,
		MinWinProb: minWin, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "relayd devchain: %v\n", err)
		return 1
	}
	env := devchainEnv(c)
	fmt.Fprintf(stdout, "relayd dev chain running\n\n")
	for _, kv := range env {
		fmt.Fprintf(stdout, "  %-28s %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(stdout, "\nWARNING: DEV-ONLY. RELAY_DEVCHAIN_DEPLOYER_KEY is a published key; never use it, or send\nanything of value to its address, on a real chain.\n")
	if *envFile != "" {
		if err := writeEnvFile(*envFile, env); err != nil {
			fmt.Fprintf(stderr, "relayd devchain: %v\n", err)
			_ = c.Close()
			return 1
		}
		fmt.Fprintf(stdout, "\nWrote %s (source it: . %s). Ctrl-C stops the chain.\n", *envFile, *envFile)
	}
	if err := c.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "relayd devchain: %v\n", err)
		return 1
	}
	return 0
}

// devchainEnv lists the variables relayd devchain prints and writes, in order: first the
// RELAYD_* names a node reads (config.EnvName of --provider and --channelsContract), then the
// chain's details for scripts.
func devchainEnv(c *devchain.Chain) [][2]string {
	return [][2]string{
		{config.EnvName("provider"), c.RPCURL()},
		{config.EnvName("channelsContract"), c.ChannelsAddress().Hex()},
		{"RELAY_CHAIN_RPC", c.RPCURL()},
		{"RELAY_CHAIN_WS", c.WSURL()},
		{"RELAY_CHAIN_ID", fmt.Sprint(c.ChainID())},
		{"RELAY_CHANNELS_ADDRESS", c.ChannelsAddress().Hex()},
		{"RELAY_TOKEN_ADDRESS", c.TokenAddress().Hex()},
		{"RELAY_DEPLOY_BLOCK", fmt.Sprint(c.Deployment().Block)},
		{"RELAY_DEVCHAIN_DEPLOYER", c.DeployerAddress().Hex()},
		{"RELAY_DEVCHAIN_DEPLOYER_KEY", fmt.Sprintf("%x", crypto.FromECDSA(c.DeployerKey()))},
	}
}

func writeEnvFile(path string, env [][2]string) error {
	var b []byte
	b = append(b, "# relayd devchain. DEV-ONLY: the deployer key below is public.\n"...)
	for _, kv := range env {
		b = fmt.Appendf(b, "export %s=%s\n", kv[0], kv[1])
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write env file: %w", err)
	}
	return nil
}
