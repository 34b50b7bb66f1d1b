// Command relaysim simulates a relayd network of many nodes on a simulated clock (internal/sim)
// and prints what it measured: path finding, delivery, latency, hops and channels per node.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "relaysim:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	cfg := sim.DefaultConfig()
	fs := flag.NewFlagSet("relaysim", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes in the network")
	fs.IntVar(&cfg.Senders, "senders", cfg.Senders, "senders (the first nodes; never fail)")
	fs.IntVar(&cfg.Recipients, "recipients", cfg.Recipients, "recipients (the nodes after the senders; never fail)")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "messages per second, in total")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "simulated time of traffic, after the warmup")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "simulated time for the nodes to announce themselves and open channels")
	fs.Float64Var(&cfg.Churn, "churn", cfg.Churn, "share of the relaying nodes killed every churnInterval (0: none)")
	fs.DurationVar(&cfg.ChurnInterval, "churnInterval", cfg.ChurnInterval, "time between churn rounds")
	fs.DurationVar(&cfg.ChurnDowntime, "churnDowntime", cfg.ChurnDowntime, "how long a killed node stays down")
	latency := fs.String("latency", cfg.LatencyMin.String()+"-"+cfg.LatencyMax.String(), "one-way link latency range min-max, drawn once per node pair")
	fs.DurationVar(&cfg.MixDelayMax, "mixDelayMax", cfg.MixDelayMax, "each relayer's processing and mixing delay is uniform in [0, mixDelayMax]")
	fs.DurationVar(&cfg.ChainDelay, "chainDelay", cfg.ChainDelay, "time for a transaction to be mined")
	fs.IntVar(&cfg.MaxChannels, "maxChannels", cfg.MaxChannels, "each node's promiscuous strategy's maxChannels")
	balance := fs.Uint64("balance", 500, "tokens every node holds at the start")
	funding := fs.Uint64("channelFunding", 100, "tokens each channel the strategy opens is funded with")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every random draw: the same flags give the same report")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.Balance = tokens(*balance)
	cfg.ChannelFunding = tokens(*funding)
	lo, hi, ok := strings.Cut(*latency, "-")
	var err1, err2 error
	cfg.LatencyMin, err1 = time.ParseDuration(strings.TrimSpace(lo))
	cfg.LatencyMax, err2 = time.ParseDuration(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("--latency %q: want a range like 20ms-150ms", *latency)
	}
	s, err := sim.New(cfg)
	if err != nil {
		return err
	}
	r, err := s.Run()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.Write(stdout)
}

// tokens is n whole tokens in the smallest unit.
func tokens(n uint64) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(n), sim.OneToken)
}
