package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/relayload"
)

const loadUsage = `usage: relayctl load [--env cluster.env] [--relayer 2] [--recipient 4] [--packets 60000]
                    [--rate 0] [--window 0] [--drop] [--prebuild N] [--size 100] [--cpu -1] [--timeline] [--json]

Measures what ONE relayer of a running dev network (relayd cluster) forwards: a fresh sender
identity is funded from the dev chain's published deployer key, opens a channel to the relayer
big enough for every packet, builds all the packets beforehand with the node's own code (real
onion packets over [relayer, recipient], each with a signed ticket of the next index), then
connects to the relayer over libp2p and pushes them at --rate (0: as fast as it takes them),
counting the relayer's acknowledgements; --window N keeps at most N of them unacknowledged (a
closed loop: the relayer's capacity without overflowing its queues); --drop sends drop cover,
which the recipient acknowledges but does not deliver (its CPU then is its relay work only). The report gives the relayer's forwarded packets/s, its
CPU (% of one core, µs per packet) from its own metrics, its drops by reason, the tickets it
recorded as acknowledged and the recipient's deliveries.

Packets carry a creation epoch valid 10 to 20 minutes (PROTOCOL.md §3.8): the push starts as
soon as they are built. Dev networks only: it spends the deployer's tokens.

    relayctl load --env cluster.env --relayer 2 --recipient 4 --packets 60000 --rate 5000
`

// loadOptions are the flags of relayctl load.
type loadOptions struct {
	env       string
	relayer   int
	recipient int
	packets   int
	rate      float64
	window    int
	drop      bool
	prebuild  int
	size      int
	cpu       int
	timeline  bool
	json      bool
}

func parseLoadFlags(args []string, stderr io.Writer) (loadOptions, error) {
	var o loadOptions
	fs := flag.NewFlagSet("relayctl load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, loadUsage); fs.PrintDefaults() }
	fs.StringVar(&o.env, "env", "cluster.env", "the network's env file (written by relayd cluster)")
	fs.IntVar(&o.relayer, "relayer", 2, "the relayer's node index")
	fs.IntVar(&o.recipient, "recipient", 4, "the recipient's node index (the relayer needs a channel to it)")
	fs.IntVar(&o.packets, "packets", 60000, "packets to push in the measured window")
	fs.Float64Var(&o.rate, "rate", 0, "packets per second; 0 = as fast as the connection takes them")
	fs.IntVar(&o.window, "window", 0, "at most this many packets pushed and not yet acknowledged by the relayer; 0 = no bound")
	fs.BoolVar(&o.drop, "drop", false, "send drop cover: the recipient acknowledges every packet but delivers none")
	fs.IntVar(&o.prebuild, "prebuild", runtime.NumCPU(), "goroutines building the packets before the push")
	fs.IntVar(&o.size, "size", relayload.DefaultTextSize, "bytes of message text per packet")
	fs.IntVar(&o.cpu, "cpu", -1, "the CPU the relayer is pinned to: report how busy it was in all (Linux); -1: do not")
	fs.BoolVar(&o.timeline, "timeline", false, "also print the relayer's rate, drops and CPU between consecutive scrapes")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.packets < 1:
		return o, fmt.Errorf("--packets must be at least 1, not %d", o.packets)
	case o.rate < 0:
		return o, fmt.Errorf("--rate must not be negative, not %v", o.rate)
	case o.window < 0:
		return o, fmt.Errorf("--window must not be negative, not %d", o.window)
	case o.prebuild < 1:
		return o, fmt.Errorf("--prebuild must be at least 1, not %d", o.prebuild)
	case o.relayer == o.recipient:
		return o, errors.New("--relayer and --recipient must be different nodes")
	}
	return o, nil
}

// runLoad is `relayctl load`; args exclude the subcommand name.
func runLoad(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loadMain(ctx, args, os.Stdout, os.Stderr)
}

func loadMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseLoadFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayctl load: %v\n", err)
		return 2
	}
	env, err := bench.LoadEnv(o.env)
	if err != nil {
		fmt.Fprintf(stderr, "relayctl load: %v\n", err)
		return 2
	}
	rep, err := relayload.Run(ctx, relayload.Config{
		Env: env, Relayer: o.relayer, Recipient: o.recipient, Packets: o.packets, Rate: o.rate, Window: o.window, Drop: o.drop,
		Prebuild: o.prebuild, TextSize: o.size, WatchCPU: o.cpu >= 0, CPU: o.cpu, Progress: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "relayctl load: %v\n", err)
		return 1
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			relayload.Report
			WindowSeconds float64 `json:"windowSeconds"`
			PushSeconds   float64 `json:"pushSeconds"`
		}{rep, rep.Window.Seconds(), rep.PushTime.Seconds()}); err != nil {
			fmt.Fprintf(stderr, "relayctl load: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "relayctl load: node %d as the relayer, node %d as the recipient, at %s\n",
		o.relayer, o.recipient, time.Now().UTC().Format(time.RFC3339))
	rep.Write(stdout)
	if o.timeline {
		rep.WriteTimeline(stdout)
	}
	return 0
}
