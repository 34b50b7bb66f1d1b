package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/capture"
	"github.com/relayd/relayd/internal/observe"
)

const observeUsage = `usage: relayctl observe capture --env cluster.env --dir DIR [--duration 60s] [--ifaces rlyd-v1,…]
       relayctl observe analyze --dir DIR [--mixDelayMean 0] [--mixDelayMin 0] [--mixDelayMax 0] [--jitter 2ms]
                                [--sdaWindow 1s] [--sdaLag 1s] [--activityWindow 5s] [--json]

A global passive observer of a relayd network: it sees, for every packet on every link, the
time, the two hosts and the size, and nothing else (it reads nothing from the nodes).

capture records the links of a ` + "`relayd cluster --netns`" + ` network (every bridge port rlyd-vN; needs
root) into DIR/capture.jsonl until --duration passes or it is interrupted.
analyze runs the observer's attacks on DIR/capture.jsonl against the ground truth
DIR/truth.jsonl that ` + "`relayctl bench --observe DIR`" + ` writes (bench --observe captures, writes both
and analyzes at once), assuming the network's public mixing delay given by the flags, and
reports per attack the mean entropy of the observer's guess over the senders and how often its
first guess is right, against a random guess.

Beside that per-message trace it runs a patient observer's attacks on the counts of message
packets into and out of every host (PRIVACY.md, "Against a patient observer"): a statistical
disclosure attack that ranks each sender's correspondents and each recipient's senders, scored
after 25, 50, 100 and 200 messages per target (classic counts, and out − in residuals), and an
activity detection per window, calibrated on the first half of the traffic and scored on the
second.
`

// runObserve is `relayctl observe`; args exclude the subcommand name.
func runObserve(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return observeMain(ctx, args, os.Stdout, os.Stderr)
}

func observeMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "capture" && args[0] != "analyze") {
		fmt.Fprint(stderr, observeUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("relayctl observe "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, observeUsage); fs.PrintDefaults() }
	dir := fs.String("dir", "", "directory of capture.jsonl and truth.jsonl")
	var err error
	if args[0] == "capture" {
		env := fs.String("env", "cluster.env", "the network's env file (written by relayd cluster --netns)")
		dur := fs.Duration("duration", time.Minute, "how long to capture")
		ifaces := fs.String("ifaces", "", "comma-separated interfaces (default: every rlyd-v* bridge port)")
		if err = fs.Parse(args[1:]); err != nil {
			return flagExit(err)
		}
		err = captureCommand(ctx, *env, *dir, *ifaces, *dur, stderr)
	} else {
		var o observeOptions
		o.flags(fs, "")
		js := fs.Bool("json", false, "print the report as JSON")
		if err = fs.Parse(args[1:]); err != nil {
			return flagExit(err)
		}
		err = analyzeCommand(*dir, o, *js, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayctl observe: %v\n", err)
		return 1
	}
	return 0
}

func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// observeOptions are the observer's assumptions about the network (public configuration).
type observeOptions struct {
	mean, min, max, jitter time.Duration
	threeRelayers          float64
	maxScored              int
	// The patient observer's windows (observe.LongTermOptions).
	sdaWindow, sdaLag, activityWindow time.Duration
}

// flags registers the options, each name prefixed with prefix ("observe" in bench: --observeMixDelayMean).
func (o *observeOptions) flags(fs *flag.FlagSet, prefix string) {
	name := func(n string) string {
		if prefix == "" {
			return n
		}
		return prefix + strings.ToUpper(n[:1]) + n[1:]
	}
	fs.DurationVar(&o.mean, name("mixDelayMean"), 0, "the network's mean per-hop mixing delay (exponential)")
	fs.DurationVar(&o.min, name("mixDelayMin"), 0, "the network's minimum per-hop mixing delay")
	fs.DurationVar(&o.max, name("mixDelayMax"), 0, "the network's mixing delay cap (with a mean of 0: uniform up to it)")
	fs.DurationVar(&o.jitter, name("jitter"), observe.DefaultJitter, "mean processing time per hop the observer assumes")
	fs.Float64Var(&o.threeRelayers, name("threeRelayerShare"), 0.05, "the observer's prior that a path has three relayers")
	fs.IntVar(&o.maxScored, name("maxScored"), 3000, "score at most this many messages, spread over the run (0: all)")
	fs.DurationVar(&o.sdaWindow, name("sdaWindow"), observe.DefaultSDAWindow, "the statistical disclosure attack's counting window")
	fs.DurationVar(&o.sdaLag, name("sdaLag"), observe.DefaultSDALag, "how long after a window the SDA still counts a delivery as following it (negative: none)")
	fs.DurationVar(&o.activityWindow, name("activityWindow"), observe.DefaultActivityWindow, "the activity-detection attack's window")
}

func (o observeOptions) options(senders []int) observe.Options {
	return observe.Options{
		Delay:             observe.Delay{Min: o.min, Mean: o.mean, Max: o.max, Jitter: o.jitter},
		Senders:           senders,
		FlightGap:         capture.FlightGap,
		ThreeRelayerShare: o.threeRelayers,
		MaxScored:         o.maxScored,
		LongTerm:          observe.LongTermOptions{Window: o.sdaWindow, Lag: o.sdaLag, ActivityWindow: o.activityWindow},
	}
}

// startCapture opens a capture of env's network on ifaces (default: the bridge ports).
func startCapture(env bench.Env, ifaces string) (*capture.Capture, error) {
	hosts, err := env.HostAddrs()
	if err != nil {
		return nil, err
	}
	var names []string
	if ifaces != "" {
		names = strings.Split(ifaces, ",")
	} else if names, err = capture.InterfacesWithPrefix("rlyd-v"); err != nil {
		return nil, err
	}
	return capture.Open(names, capture.HostsByAddr(hosts))
}

func captureCommand(ctx context.Context, envPath, dir, ifaces string, dur time.Duration, stderr io.Writer) error {
	if dir == "" {
		return errors.New("--dir is required")
	}
	env, err := bench.LoadEnv(envPath)
	if err != nil {
		return err
	}
	c, err := startCapture(env, ifaces)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	fmt.Fprintf(stderr, "capturing for %v (interrupt to stop early)\n", dur)
	c.Run(ctx)
	tx := c.Transmissions()
	fmt.Fprintf(stderr, "%d packets\n", len(tx))
	return writeJSONL(filepath.Join(dir, captureFile), tx)
}

const (
	captureFile = "capture.jsonl"
	truthFile   = "truth.jsonl"
)

// truthRecord is one line of truth.jsonl.
type truthRecord struct {
	observe.Message
	Seq int `json:"seq"`
}

// truthOf is the ground truth of a bench run, with each message's sequence number.
func truthOf(rep *bench.Report) []truthRecord {
	msgs, seqs := bench.GroundTruth(rep)
	out := make([]truthRecord, len(msgs))
	for i := range msgs {
		out[i] = truthRecord{Message: msgs[i], Seq: seqs[i]}
	}
	return out
}

func writeJSONL[T any](path string, items []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// maxJSONLLine bounds one line of a capture or truth file.
const maxJSONLLine = 1 << 16

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), maxJSONLLine)
	var out []T
	for line := 1; sc.Scan(); line++ {
		var it T
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		out = append(out, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func analyzeCommand(dir string, o observeOptions, js bool, stdout io.Writer) error {
	if dir == "" {
		return errors.New("--dir is required")
	}
	tx, err := readJSONL[observe.Transmission](filepath.Join(dir, captureFile))
	if err != nil {
		return err
	}
	truth, err := readJSONL[truthRecord](filepath.Join(dir, truthFile))
	if err != nil {
		return err
	}
	rep, err := analyzeTruth(tx, truth, o, nil)
	if err != nil {
		return err
	}
	return printPrivacy(stdout, rep, js)
}

func analyzeTruth(tx []observe.Transmission, truth []truthRecord, o observeOptions, senders []int) (observe.Report, error) {
	msgs := make([]observe.Message, len(truth))
	for i, t := range truth {
		msgs[i] = t.Message
	}
	return observe.Analyze(tx, msgs, o.options(senders))
}

func printPrivacy(w io.Writer, rep observe.Report, js bool) error {
	if js {
		rep.Timing.PerMessage, rep.Size.PerMessage = nil, nil
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "observer: %d messages scored, %d candidate senders (max entropy %.2f bits, random guess %.1f %%)\n",
		rep.Messages, rep.Senders, rep.MaxEntropy, 100*rep.RandomGuess)
	for _, a := range []struct {
		name string
		r    observe.AttackResult
	}{{"timing", rep.Timing}, {"size", rep.Size}} {
		fmt.Fprintf(w, "  %-6s entropy %.2f bits (%.0f %% of max)  top-1 %.1f %% (%.2f× random)\n",
			a.name, a.r.MeanEntropy, 100*a.r.EntropyShare, 100*a.r.Top1, a.r.Top1OverRandom)
	}
	var sizes []string
	for _, s := range rep.SizeClasses[:min(len(rep.SizeClasses), 6)] {
		sizes = append(sizes, fmt.Sprintf("%d B×%d", s.Size, s.Count))
	}
	if _, err := fmt.Fprintf(w, "  message flight %d bytes; message size classes %v; flights by size: %s\n",
		rep.MessageSize, rep.MessageClasses, strings.Join(sizes, ", ")); err != nil {
		return err
	}
	return printLongTerm(w, rep.LongTerm)
}

// printLongTerm prints the patient observer's counting attacks.
func printLongTerm(w io.Writer, lt observe.LongTermReport) error {
	fmt.Fprintf(w, "patient observer: message packets into and out of %d hosts, counted per %v (random guess %.1f %%)\n",
		lt.Nodes, lt.Window, 100*lt.Random)
	for _, side := range []struct {
		name string
		rs   []observe.SDAResult
	}{{"senders' correspondents", lt.SenderSDA}, {"recipients' senders", lt.RecipientSDA}} {
		var cells []string
		for _, r := range side.rs {
			if r.Scored == 0 {
				cells = append(cells, fmt.Sprintf("k=%d: none", r.K))
				continue
			}
			cells = append(cells, fmt.Sprintf("k=%d: %.1f %% / %.1f %% of %d (%.1f× random)", r.K, 100*r.Classic, 100*r.Residual, r.Scored, r.Best()/r.Random))
		}
		fmt.Fprintf(w, "  SDA, %s ranked first (classic / out−in): %s\n", side.name, strings.Join(cells, ", "))
	}
	_, err := fmt.Fprintf(w, "  activity per %v window, balanced accuracy (chance 50 %%; count / residual): senders %.1f %% / %.1f %% (%d windows), recipients %.1f %% / %.1f %% (%d windows)\n",
		lt.ActivityWindow, 100*lt.SenderActivity.Count.Balanced, 100*lt.SenderActivity.Residual.Balanced, lt.SenderActivity.Windows,
		100*lt.RecipientActivity.Count.Balanced, 100*lt.RecipientActivity.Residual.Balanced, lt.RecipientActivity.Windows)
	return err
}

// observer is a capture running beside a bench run.
type observer struct {
	c      *capture.Capture
	dir    string
	cancel func()
}

// stop ends the capture; a nil observer does nothing.
func (o *observer) stop() {
	if o != nil && o.cancel != nil {
		o.cancel()
		o.cancel = nil
	}
}

func startObserver(ctx context.Context, env bench.Env, dir string) (*observer, error) {
	c, err := startCapture(env, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	o := &observer{c: c, dir: dir}
	o.cancel = func() {
		cancel()
		<-done
		c.Close()
	}
	return o, nil
}

// finish stops the capture, writes the capture and the ground truth, and prints what the
// observer learned (into the JSON report's stream as a second document with --json).
func (o *observer) finish(rep *bench.Report, opts observeOptions, w io.Writer, js bool) error {
	o.stop()
	tx := o.c.Transmissions()
	truth := truthOf(rep)
	if err := writeJSONL(filepath.Join(o.dir, captureFile), tx); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(o.dir, truthFile), truth); err != nil {
		return err
	}
	prep, err := analyzeTruth(tx, truth, opts, rep.Senders)
	if err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	f, err := os.Create(filepath.Join(o.dir, "privacy.json"))
	if err != nil {
		return err
	}
	perr := printPrivacy(f, prep, true)
	if err := errors.Join(perr, f.Close()); err != nil {
		return err
	}
	return printPrivacy(w, prep, js)
}
