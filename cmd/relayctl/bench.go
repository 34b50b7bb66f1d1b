package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/bench"
)

const benchUsage = `usage: relayctl bench [--env cluster.env] [--senders 1] [--recipient N | --recipients 1]
                     [--messages 1000] [--rate 500] [--concurrency 16] [--size 100] [--replies 0] [--timeout 30s]
                     [--json] [--plot latency.svg] [--floorRounds 1000] [--relayers 0]
                     [--correspondents roundrobin|fixed [--burstRate 2] [--burstOn 10s] [--burstOff 10s] [--seed 1]]

Sends paid messages through a running network's REST API and matches their delivery on the
recipients' admin WebSockets; reports sent, rejected (by reason), delivered and lost messages,
in total and per recipient, messages that arrived at the wrong recipient, latency percentiles,
messages/s, and every node's CPU and peak memory from its metrics.

CPU per packet is reported per role (sender per message sent, relayer per packet forwarded,
recipient per packet delivered, from the nodes' own CPU and relay counters) and as a ratio to
the floor: the unavoidable public-key work of that packet (ECDH, signature recovery, signature,
base-point multiplications), which the tool times in its own process right before and right
after the load, so the ratio survives the machine's changing speed. The sender's floor assumes
the mean relayers per message read from the counters (or --relayers).

The recipients are --recipient N, or the last --recipients nodes of the env file (default: the
last node); the senders are the first --senders nodes that do not receive. Messages go round
robin over every (sender, recipient) pair, e.g. 100 msg/s from 5 senders to 5 recipients:

    relayctl bench --env cluster.env --senders 5 --recipients 5 --rate 100 --messages 6000

--correspondents fixed makes the senders patient, what a statistical disclosure attack feeds
on: each sender writes to one correspondent, drawn once among the recipients (a shuffle by
--seed: distinct ones while there are as many recipients as senders), in on/off bursts. On and
off periods last an exponential time of mean --burstOn and --burstOff; while on, a sender sends
--burstRate messages a second (at exponential intervals); --rate does not apply. Issue 26's
workload on a 20-node network, 3,000 messages in about 300 s, with the observer:

    relayctl bench --env cluster.env --senders 10 --recipients 10 --messages 3000 \
      --correspondents fixed --burstRate 2 --burstOn 10s --burstOff 10s --observe DIR
`

// runBench is `relayctl bench`; args exclude the subcommand name.
func runBench(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return benchMain(ctx, args, os.Stdout, os.Stderr, isTerminal(os.Stderr))
}

// benchOptions are the flags of relayctl bench.
type benchOptions struct {
	env         string
	senders     int
	recipient   int
	recipients  int
	messages    int
	rate        float64
	concurrency int
	size        int
	replies     int
	timeout     time.Duration
	maxDuration time.Duration
	json        bool
	plot        string
	floorRounds int
	relayers    float64
	churnLog    string
	observe     string
	obs         observeOptions
	// patient is the workload of --correspondents fixed (nil: round robin).
	patient *bench.Patient
}

func parseBenchFlags(args []string, stderr io.Writer) (benchOptions, error) {
	var o benchOptions
	fs := flag.NewFlagSet("relayctl bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	fs.StringVar(&o.env, "env", "cluster.env", "the network's env file (written by relayd cluster)")
	fs.IntVar(&o.senders, "senders", 1, "how many nodes send (nodes 1, 2, … other than the recipients)")
	fs.IntVar(&o.recipient, "recipient", 0, "the one recipient node (default: the last node)")
	fs.IntVar(&o.recipients, "recipients", 1, "how many nodes receive: the last ones of the env file (not with --recipient)")
	fs.IntVar(&o.messages, "messages", 1000, "messages to send in total")
	fs.Float64Var(&o.rate, "rate", 500, "messages per second over all senders; 0 = as fast as the API accepts")
	fs.IntVar(&o.concurrency, "concurrency", 16, "most POST requests in flight")
	fs.IntVar(&o.size, "size", 100, fmt.Sprintf("bytes of message text (at most %d; beyond %d the sender's courier sends it as several packets, delivered when whole)", bench.MaxBodySize, bench.MaxMessageSize))
	fs.IntVar(&o.replies, "replies", 0, fmt.Sprintf("reply blocks sent with every message (at most %d; above 0 the message is framed, whatever its size)", bench.MaxReplies))
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for stragglers after the last API answer")
	fs.DurationVar(&o.maxDuration, "maxDuration", 10*time.Minute, "longest time spent sending; the rest is reported as not sent")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.IntVar(&o.floorRounds, "floorRounds", 1000, "rounds of the public-key floor timed before and after the load; negative: none")
	fs.Float64Var(&o.relayers, "relayers", 0, "relayers per message for the sender's floor; 0 = read from the nodes' counters")
	fs.StringVar(&o.plot, "plot", "", "write latency over time to this SVG file")
	fs.StringVar(&o.churnLog, "churnLog", "", "the churn log of a relayd cluster --churn run (<data>/churn.jsonl): split the delivered messages by whether a node was down while they travelled")
	fs.StringVar(&o.observe, "observe", "", "capture every link of a namespace network during the run (needs root), write DIR/capture.jsonl and DIR/truth.jsonl, and run the observer's attacks (relayctl observe)")
	o.obs.flags(fs, "observe")
	correspondents := fs.String("correspondents", "roundrobin", "roundrobin: every sender to every recipient in turn at --rate; fixed: each sender to one correspondent among the recipients, in bursts")
	var p bench.Patient
	fs.Float64Var(&p.Rate, "burstRate", 2, "with --correspondents fixed: messages per second of each sender while on")
	fs.DurationVar(&p.On, "burstOn", 10*time.Second, "with --correspondents fixed: mean on period (exponential)")
	fs.DurationVar(&p.Off, "burstOff", 10*time.Second, "with --correspondents fixed: mean off period (exponential; 0: always on)")
	fs.Uint64Var(&p.Seed, "seed", 1, "with --correspondents fixed: seed of the correspondents and the bursts")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch *correspondents {
	case "roundrobin":
		for _, name := range []string{"burstRate", "burstOn", "burstOff", "seed"} {
			if set[name] {
				return o, fmt.Errorf("--%s applies to --correspondents fixed only", name)
			}
		}
	case "fixed":
		if set["rate"] {
			return o, errors.New("--rate does not apply to --correspondents fixed: --burstRate is each sender's rate while on")
		}
		if err := p.Validate(); err != nil {
			return o, err
		}
		o.patient = &p
	default:
		return o, fmt.Errorf("--correspondents %q: want roundrobin or fixed", *correspondents)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.recipients < 1 {
		return o, fmt.Errorf("--recipients must be at least 1, not %d", o.recipients)
	}
	if o.recipient != 0 && o.recipients > 1 {
		return o, errors.New("--recipient names one recipient, --recipients picks the last nodes: give one of them")
	}
	return o, nil
}

func benchMain(ctx context.Context, args []string, stdout, stderr io.Writer, tty bool) int {
	o, err := parseBenchFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
		return 2
	}
	env, err := bench.LoadEnv(o.env)
	if err != nil {
		fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
		return 2
	}
	recipients := []int{o.recipient}
	if o.recipient == 0 {
		recipients, err = bench.DefaultRecipients(env, o.recipients)
		if err != nil {
			fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
			return 2
		}
	}
	senders, err := bench.DefaultSenders(env, o.senders, recipients...)
	if err != nil {
		fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
		return 2
	}
	cfg := bench.Config{
		Env: env, Senders: senders, Recipients: recipients, Messages: o.messages, Rate: o.rate,
		Concurrency: o.concurrency, Size: o.size, Replies: o.replies, Timeout: o.timeout, MaxDuration: o.maxDuration,
		FloorRounds: o.floorRounds, Relayers: o.relayers, Patient: o.patient,
	}
	pr := &progressPrinter{w: stderr, tty: tty}
	cfg.Progress = pr.print
	if !tty {
		cfg.ProgressInterval = 2 * time.Second
	}
	var obs *observer
	if o.observe != "" {
		if obs, err = startObserver(ctx, env, o.observe); err != nil {
			fmt.Fprintf(stderr, "relayctl bench: observe: %v\n", err)
			return 1
		}
	}
	rep, err := bench.Run(ctx, cfg)
	pr.finish()
	if rep == nil {
		obs.stop()
		fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
		return 1
	}
	if o.churnLog != "" {
		err = errors.Join(err, splitByChurn(rep, o.churnLog))
	}
	if o.json {
		err2 := rep.WriteJSON(stdout)
		err = errors.Join(err, err2)
	} else {
		err = errors.Join(err, rep.WriteTable(stdout))
	}
	if o.plot != "" {
		err = errors.Join(err, writePlot(o.plot, rep))
	}
	if obs != nil {
		err = errors.Join(err, obs.finish(rep, o.obs, stdout, o.json))
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayctl bench: %v\n", err)
		return 1
	}
	return 0
}

// churnMargin is how long before and after a node's down time a message counts as possibly
// meeting it: longer than all but the slowest deliveries.
const churnMargin = 2 * time.Second

// splitByChurn adds the split of rep's messages by the churn log at path to the report.
func splitByChurn(rep *bench.Report, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("churn log: %w", err)
	}
	defer f.Close()
	windows, err := bench.ReadChurnLog(f, time.Now())
	if err != nil {
		return err
	}
	split := bench.SplitByChurn(rep, windows, churnMargin)
	rep.Churn = &split
	return nil
}

func writePlot(path string, rep *bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := rep.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// progressPrinter shows a run's progress on stderr: a bar redrawn in place
// on a terminal, plain lines otherwise.
type progressPrinter struct {
	w     io.Writer
	tty   bool
	drawn bool
}

func (p *progressPrinter) print(pr bench.Progress) {
	line := progressLine(pr)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progressPrinter) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// progressLine renders a snapshot: a 30-column bar of delivered (#) and
// accepted in flight (=) messages out of the total, then the counts.
func progressLine(pr bench.Progress) string {
	const width = 30
	bar := []byte(strings.Repeat(" ", width))
	if pr.Total > 0 {
		acc := min(width, pr.Accepted*width/pr.Total)
		del := min(acc, pr.Delivered*width/pr.Total)
		for i := range acc {
			bar[i] = '='
		}
		for i := range del {
			bar[i] = '#'
		}
	}
	return fmt.Sprintf("[%s] %5.1fs %-7s issued %d/%d  accepted %d  rejected %d  delivered %d",
		bar, pr.Elapsed.Seconds(), pr.Phase, pr.Issued, pr.Total, pr.Accepted, pr.Rejected, pr.Delivered)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
