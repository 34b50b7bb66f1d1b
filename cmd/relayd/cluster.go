package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/cluster"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

const clusterUsage = `usage: relayd cluster [flags]

Starts a whole local relay network: the embedded dev chain (in this process), N relayd nodes
(separate processes, logs in <data>/node-N/relayd.log), funded with native coins and tokens, a
funded full mesh of payment channels between them. Once every node is ready it prints a table of
the nodes and writes the env file (source it to use the cluster). Ctrl-C stops everything and
removes the env file. Identities are created with light scrypt and the published password
"` + cluster.Password + `": a cluster is for local testing only.

`

// runCluster is `relayd cluster`; args exclude the subcommand name.
func runCluster(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd cluster: find own executable: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal exits at once
	}()
	return clusterMain(ctx, exe, args, os.Stdout, os.Stderr)
}

func clusterMain(ctx context.Context, exe string, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseClusterFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayd cluster: %v\n", err)
		return 2
	}
	cfg.Executable = exe
	if err := cluster.Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "relayd cluster: %v\n", err)
		var fe *cluster.FieldError
		if errors.As(err, &fe) {
			return 2
		}
		return 1
	}
	return 0
}

// parseClusterFlags reads the flags of relayd cluster into a cluster.Config.
func parseClusterFlags(args []string, stderr io.Writer) (cluster.Config, error) {
	cfg := cluster.DefaultConfig()
	fs := flag.NewFlagSet("relayd cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, clusterUsage); fs.PrintDefaults() }
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "number of nodes")
	fs.IntVar(&cfg.APIPortBase, "apiPortBase", cfg.APIPortBase, "REST port of node 1; node N gets base+N-1")
	fs.IntVar(&cfg.AdminPortBase, "adminPortBase", cfg.AdminPortBase, "admin WebSocket port of node 1; node N gets base+N-1")
	fs.IntVar(&cfg.P2PPortBase, "p2pPortBase", cfg.P2PPortBase, "p2p port (TCP and QUIC) of node 1; node N gets base+N-1")
	fs.IntVar(&cfg.ProfilePortBase, "profilePortBase", 0, "if set, node N serves Go's pprof profiles on 127.0.0.1:base+N-1")
	fs.IntVar(&cfg.SOCKS5PortBase, "socks5PortBase", 0, "if set, node N serves a SOCKS5 entry on 127.0.0.1:base+N-1 (with --netns on its own namespace's loopback: ip netns exec relayd-nN curl --socks5-hostname …) whose sessions go to the node its alias exit names")
	fs.IntVar(&cfg.ChainPort, "chainPort", cfg.ChainPort, "dev chain JSON-RPC port (HTTP and WebSocket)")
	fs.BoolVar(&cfg.ChainDrill, "chainDrill", false, "an outage drill: the nodes reach the dev chain through a gate on --chainPort that SIGUSR1 to the cluster shuts (the providerDown alert) and SIGUSR2 opens again")
	fs.StringVar(&cfg.APIToken, "apiToken", cfg.APIToken, "API token of every node (the default is published: nodes accept it only on 127.0.0.1)")
	fs.StringVar(&cfg.DataDir, "data", "", "data directory, kept on exit (default: a fresh temporary directory, removed on exit)")
	fs.DurationVar(&cfg.ClosurePeriod, "closurePeriod", cfg.ClosurePeriod, "channel closure period of the contract (whole seconds)")
	fs.DurationVar(&cfg.BlockTime, "blockTime", cfg.BlockTime, "dev chain block time, e.g. 2s: a block at that interval, transactions wait for it (0: a block per transaction at once)")
	fs.Func("minWinProb", "the network minimum win probability of the dev chain's contract, which every node follows (e.g. 0.01: lottery tickets that win one time in 100 with a face 100 times their value; default 1: every ticket wins)", func(v string) error {
		w, err := tickets.ParseWinProb(v)
		if err != nil {
			return err
		}
		cfg.MinWinProb = w
		return nil
	})
	fs.DurationVar(&cfg.MixDelayMean, "mixDelayMean", cfg.MixDelayMean, "every node's mean exponential per-hop mixing delay (Poisson mixing); 0 with --mixDelayMax 0: no mixing")
	fs.DurationVar(&cfg.MixDelayMax, "mixDelayMax", cfg.MixDelayMax, "every node's cap of each per-hop mixing delay (0: 10 × --mixDelayMean, at most 30 s; with --mixDelayMean 0: uniform up to this)")
	fs.IntVar(&cfg.Relayers, "relayers", cfg.Relayers, "relayers of every node's own messages and cover loops (2 or 3)")
	fs.Float64Var(&cfg.CoverRate, "coverRate", cfg.CoverRate, "loop cover packets per second every node sends over random paths back to itself (0: none)")
	fs.BoolVar(&cfg.AutoRedeem, "autoRedeem", cfg.AutoRedeem, "every node redeems its acknowledged tickets by itself (the autoRedeem setting)")
	fs.BoolVar(&cfg.AutoFund, "autoFund", cfg.AutoFund, "every node tops its outgoing channels up to --channelFunding once below half of it (the autoFund setting)")
	fs.Float64Var(&cfg.SendRate, "sendRate", cfg.SendRate, "packets per second of every node's constant-rate stream: messages in its Poisson slots, drop cover in the others, received messages re-emitted (0: off; docs/TRAFFIC.md)")
	fs.Func("channelFunding", "tokens each channel of the mesh is funded with, whole or decimal (default 100)", func(v string) error {
		amount, err := token.ParsePositive(v)
		if err != nil {
			return err
		}
		cfg.ChannelFunding = amount.Big()
		return nil
	})
	fs.StringVar(&cfg.EnvFile, "env", cfg.EnvFile, "file the cluster's export lines are written to once every node is ready")
	fs.DurationVar(&cfg.StageTimeout, "stageTimeout", cfg.StageTimeout, "bound of each waiting stage (announcements, channel indexing)")
	fs.DurationVar(&cfg.StopTimeout, "stopTimeout", cfg.StopTimeout, "how long a node may take to stop after SIGTERM before it is killed")
	fs.StringVar(&cfg.Topology, "topology", cfg.Topology, "mesh: the cluster opens a channel from every node to every other; sparse: every node runs the promiscuous strategy and opens --maxChannels channels on its own")
	fs.IntVar(&cfg.MaxChannels, "maxChannels", cfg.MaxChannels, "with --topology sparse: the channels each node's strategy opens")
	fs.IntVar(&cfg.Layers, "layers", 0, "a layered network (docs/NETWORK.md): paths cross one relayer of each of this many layers (2 or 3; 0: free routes), drawn from the announced nodes every --epochBlocks blocks")
	fs.IntVar(&cfg.LayerWidth, "layerWidth", 0, "with --layers: the most relayers a layer holds")
	fs.Uint64Var(&cfg.EpochBlocks, "epochBlocks", cfg.EpochBlocks, "with --layers: blocks between two draws of the layers (the cluster seals empty blocks up to the first)")
	fs.Float64Var(&cfg.RelayerCoverRate, "relayerCoverRate", cfg.RelayerCoverRate, "with --layers: loops a second each relayer of the layers sends through them back to itself, on top of its coverRate (0 to 100)")
	fs.BoolVar(&cfg.RestartNodes, "restartNodes", false, "restart a node that exits once the cluster is ready, on its data (without it the node stays down; the others keep running either way)")
	fs.DurationVar(&cfg.RestartDelay, "restartDelay", cfg.RestartDelay, "wait before --restartNodes restarts a node")
	churn := cluster.Churn{Interval: 20 * time.Second, Downtime: 5 * time.Second}
	fs.Float64Var(&churn.Fraction, "churn", 0, "once ready, SIGKILL this share of the nodes (0.1 = 10 %) every --churnInterval and restart each on its data after --churnDowntime, checking that no acknowledged ticket is lost (log: <data>/churn.jsonl)")
	fs.DurationVar(&churn.Interval, "churnInterval", churn.Interval, "time between churn rounds")
	fs.DurationVar(&churn.Downtime, "churnDowntime", churn.Downtime, "how long a node killed by churn stays down")
	fs.Func("churnExclude", "comma-separated nodes churn never kills (e.g. a load test's senders and recipients)", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a node number", f)
			}
			churn.Exclude = append(churn.Exclude, n)
		}
		return nil
	})
	fs.BoolVar(&cfg.NetNS, "netns", false, "root only: run every node in its own network namespace on a bridge (node N at 10.77.0.(N+1), the chain at 10.77.0.1), as on separate hosts")
	fs.StringVar(&cfg.LinkRate, "linkRate", "", "with --netns: limit every node's link in each direction (tc tbf rate, e.g. 10mbit)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if churn.Fraction != 0 {
		cfg.Churn = &churn
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return cfg, nil
}
