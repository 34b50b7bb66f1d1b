// Command relaysim simulates a relayd network of many nodes on a simulated clock (internal/sim)
// and prints what it measured: path finding, delivery, latency, hops and channels per node, and,
// with --observe or --privacy, what a global passive observer of the links learns. With
// --privacy --shapes and patient senders (--correspondents fixed) it prints the patient
// observer's table: its statistical disclosure and activity-detection attacks against today's
// sending and each traffic shape of docs/TRAFFIC.md. Without flags every simulated node has the
// settings of a node started without any (internal/settings.Defaults). With --layers it
// simulates issue 30's layered topology (internal/topology), and --layerWidths compares it with
// free routes (width 0) on the same seed; --cpuprofile writes a CPU profile.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/sim"
	"github.com/relayd/relayd/internal/token"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "relaysim:", err)
		}
		os.Exit(2)
	}
}

// nodeDefaults is sim.DefaultConfig (the network and its workload) with every node taking the
// settings of a node started without flags, from internal/settings' Defaults, their one
// definition: relaysim with no flags simulates what such nodes do. Two things are not settings:
// the strategy is promiscuous (the default, passive, opens no channel, and `relayd cluster`
// starts its nodes promiscuous), and each node holds what `relayd cluster` funds it with
// (maxChannels × channelFunding and 100 more: --balance 0). The stream re-emits what a node
// receives, as internal/stream does whenever it runs. Tokens circulate as autoRedeem and autoFund
// make them: a relayer's tickets are redeemed into its balance and the channels topped up from it.
func nodeDefaults() sim.Config {
	cfg := sim.DefaultConfig()
	// The workload: 5 messages a second per sender, half of what the default stream carries.
	cfg.Rate = 25
	d := settings.Defaults()
	cfg.MixDelayMin, cfg.MixDelayMean, cfg.MixDelayMax = 0, d.MixDelayMean, 0
	cfg.CoverRate = d.CoverRate
	cfg.SendRate = d.SendRate
	cfg.Reemit = d.SendRate > 0
	cfg.Relayers = d.Relayers
	cfg.MaxChannels = d.MaxChannels
	cfg.ChannelFunding = d.ChannelFunding.Big()
	cfg.AutoFund, cfg.AutoRedeem = d.AutoFund, d.AutoRedeem
	cfg.RedeemCount, cfg.RedeemValue = d.AutoRedeemCount, d.AutoRedeemValue.Big()
	return cfg
}

// spareTokens is what `relayd cluster` gives a node beyond its channels' funding.
const spareTokens = 100

func run(args []string, stdout io.Writer) error {
	cfg := nodeDefaults()
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
	processing := fs.String("processing", cfg.ProcessingMin.String()+"-"+cfg.ProcessingMax.String(), "range min-max of the time a hop takes to process a packet, uniform per packet")
	fs.DurationVar(&cfg.MixDelayMin, "mixDelayMin", cfg.MixDelayMin, "least mixing delay per relayer")
	fs.DurationVar(&cfg.MixDelayMean, "mixDelayMean", cfg.MixDelayMean, "mean of the exponential mixing delay added to mixDelayMin (0: uniform in [mixDelayMin, mixDelayMax])")
	fs.DurationVar(&cfg.MixDelayMax, "mixDelayMax", cfg.MixDelayMax, "greatest mixing delay (0 with a mean: mixDelayMin + 10 × mean)")
	fs.Float64Var(&cfg.CoverRate, "coverRate", cfg.CoverRate, "loop cover packets per second per node (0: none)")
	correspondents := fs.String("correspondents", "roundrobin", "roundrobin: every sender to every recipient in turn at --rate; fixed: each sender to one correspondent among the recipients, in bursts (patient senders)")
	fs.Float64Var(&cfg.BurstRate, "burstRate", 2, "with --correspondents fixed: messages per second of each sender while on")
	fs.DurationVar(&cfg.BurstOn, "burstOn", 10*time.Second, "with --correspondents fixed: mean on period (exponential)")
	fs.DurationVar(&cfg.BurstOff, "burstOff", 10*time.Second, "with --correspondents fixed: mean off period (exponential; 0: always on)")
	fs.Float64Var(&cfg.SendRate, "sendRate", cfg.SendRate, "constant-rate stream: packets per second per node, a message taking the next tick's place (0: a message leaves when sent)")
	fs.BoolVar(&cfg.StreamLoops, "streamLoops", false, "with --sendRate: a tick without a message sends a loop instead of drop cover")
	fs.Float64Var(&cfg.DropRate, "dropRate", 0, "drop cover outside a stream, packets per second per node (0: none)")
	fs.BoolVar(&cfg.Reemit, "reemit", cfg.Reemit, "a message's recipient sends a drop packet for it after an exponential delay")
	fs.DurationVar(&cfg.ReemitDelay, "reemitDelay", 0, "with --reemit: the delay's mean (0: the mixing delay mean)")
	fs.IntVar(&cfg.Fragments, "fragments", 0, "packets of every message, as the courier frames it (fragments and acknowledgement block parts; 0 or 1: one)")
	fs.DurationVar(&cfg.FragmentGap, "fragmentGap", 0, "with --fragments: time between a message's packets at its sender")
	fs.BoolVar(&cfg.Ack, "ack", false, "the recipient acknowledges each whole message with one packet back on a return path")
	fs.BoolVar(&cfg.Answer, "answer", false, "the recipient answers each whole message with one packet back on a return path")
	fs.DurationVar(&cfg.AnswerDelay, "answerDelay", 0, "with --answer: mean of the exponential time before the answer (0: at once)")
	fs.DurationVar(&cfg.ChainDelay, "chainDelay", cfg.ChainDelay, "time for a transaction to be mined")
	fs.IntVar(&cfg.MaxChannels, "maxChannels", cfg.MaxChannels, "each node's promiscuous strategy's maxChannels")
	fs.IntVar(&cfg.Relayers, "relayers", cfg.Relayers, "relayers of every node's messages and cover loops where such a path exists (2 or 3; 0: 2)")
	fs.BoolVar(&cfg.AutoFund, "autoFund", cfg.AutoFund, "top up an outgoing channel to channelFunding once below half of it (the node's autoFund)")
	fs.BoolVar(&cfg.AutoRedeem, "autoRedeem", cfg.AutoRedeem, "redeem the tickets a relayer takes in into its balance (the node's autoRedeem, with its count and value)")
	balance := fs.Uint64("balance", 0, "tokens every node holds at the start (0: maxChannels × channelFunding + 100, as relayd cluster funds its nodes)")
	funding := fs.Uint64("channelFunding", uint64(token.Of(cfg.ChannelFunding).Float64()), "tokens each channel the strategy opens is funded with")
	fs.IntVar(&cfg.Layers, "layers", 0, "layered topology: layers (2 or 3; paths cross one relayer of each; 0: free routes)")
	fs.IntVar(&cfg.LayerWidth, "layerWidth", 10, "with --layers: most relayers per layer")
	fs.Float64Var(&cfg.LayerCoverRate, "layerCoverRate", networks.DefaultRelayerCoverRate, "with --layers: each relayer's own loops through the layers, packets per second (the node's default: a networks file's topology.relayerCoverRate)")
	fs.DurationVar(&cfg.Epoch, "epoch", 0, "with --layers: re-draw the layers every epoch while the traffic runs (0: one epoch a run)")
	fs.DurationVar(&cfg.EpochOverlap, "epochOverlap", 10*time.Second, "with --epoch: how long the previous epoch's layers and channels stay in use after a re-draw")
	fs.BoolVar(&cfg.EpochAtOnce, "epochAtOnce", false, "with --epoch: senders take the new layers at once after a re-draw instead of falling back on the previous epoch's until their channels are open (as the node does during its grace)")
	widths := fs.String("layerWidths", "", "with --privacy and --layers: the table's topologies, one row set per width (0: free routes), each on the same seed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every random draw: the same flags give the same report")
	fs.BoolVar(&cfg.Observe, "observe", false, "run the global passive observer's attacks on the links (internal/observe)")
	fs.IntVar(&cfg.MaxScored, "maxScored", 0, "score at most this many messages with the observer (0: all)")
	privacy := fs.Bool("privacy", false, "run the privacy table: one observed run per mixing delay mean and cover rate")
	means := fs.String("mixDelayMeans", "0,5ms,20ms,50ms,100ms", "with --privacy: the mixing delay means (0: no mixing)")
	covers := fs.String("coverRates", "0,1,5", "with --privacy: the cover rates, packets per second per node")
	parallel := fs.Int("parallel", 2, "with --privacy: runs at once")
	seeds := fs.String("seeds", "", "with --privacy (not --shapes): run every cell on each of these seeds (comma-separated; default --seed) and print each cell's mean and spread over them")
	shapes := fs.String("shapes", "", "with --privacy and --correspondents fixed: the patient observer's table, one row per traffic shape ("+shapeNames()+") and send rate, instead of the mixing × cover grid")
	sendRates := fs.String("sendRates", "5,10", "with --shapes: the send rates of the shapes that stream, packets per second per node")
	trials := fs.Int("trials", 10, "with --shapes: runs per row (seeds seed, seed+1, …), pooled")
	asJSON := fs.Bool("json", false, "print the report (with --privacy: the reports) as JSON")
	jsonFile := fs.String("jsonFile", "", "with --privacy: also write the reports as JSON to this file")
	verbose := fs.Bool("v", false, "with --privacy: say on stderr when each run ends and how long it took")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch *correspondents {
	case "roundrobin":
	case "fixed":
		cfg.Fixed = true
	default:
		return fmt.Errorf("--correspondents %q: want roundrobin or fixed", *correspondents)
	}
	cfg.ChannelFunding = tokens(*funding)
	cfg.Balance = tokens(*balance)
	if *balance == 0 {
		cfg.Balance = tokens(uint64(max(cfg.MaxChannels, 0))**funding + spareTokens)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	if cfg.LatencyMin, cfg.LatencyMax, err = durationRange("latency", *latency); err != nil {
		return err
	}
	if cfg.ProcessingMin, cfg.ProcessingMax, err = durationRange("processing", *processing); err != nil {
		return err
	}
	if *privacy {
		maxSet := false
		fs.Visit(func(f *flag.Flag) { maxSet = maxSet || f.Name == "mixDelayMax" })
		if !maxSet {
			cfg.MixDelayMax = 0 // each mean's own cap, mixDelayMin + 10 × mean
		}
		var progress io.Writer = io.Discard
		if *verbose {
			progress = os.Stderr
		}
		if *shapes != "" {
			if !cfg.Fixed {
				return errors.New("--shapes measures patient senders: give --correspondents fixed")
			}
			return runShapes(cfg, shapeTable{shapes: *shapes, rates: *sendRates, trials: *trials, parallel: *parallel, asJSON: *asJSON, jsonFile: *jsonFile}, stdout, progress)
		}
		return runTable(cfg, table{means: *means, covers: *covers, widths: *widths, seeds: *seeds, parallel: *parallel, asJSON: *asJSON, jsonFile: *jsonFile}, stdout, progress)
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
		if r.Privacy != nil {
			r.Privacy.Timing.PerMessage, r.Privacy.Size.PerMessage = nil, nil
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.Write(stdout)
}

// table is the privacy table's flags.
type table struct {
	means, covers, widths, seeds string
	parallel                     int
	asJSON                       bool
	jsonFile                     string
}

// runTable runs one observed simulation of cfg per mixing delay mean and cover rate, at most
// parallel at once, and prints a line (or a JSON report) per cell, means first.
func runTable(cfg sim.Config, tb table, stdout, progress io.Writer) error {
	ms, err := parseList("mixDelayMeans", tb.means, time.ParseDuration)
	if err != nil {
		return err
	}
	cs, err := parseList("coverRates", tb.covers, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err != nil {
		return err
	}
	if tb.parallel < 1 {
		return fmt.Errorf("--parallel %d: want at least 1", tb.parallel)
	}
	ws := []int{cfg.LayerWidth}
	if tb.widths != "" {
		if ws, err = parseList("layerWidths", tb.widths, strconv.Atoi); err != nil {
			return err
		}
	}
	seeds := []uint64{cfg.Seed}
	if tb.seeds != "" {
		if seeds, err = parseList("seeds", tb.seeds, func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }); err != nil {
			return err
		}
	}
	var cells []sim.Config
	for _, w := range ws {
		for _, m := range ms {
			for _, c := range cs {
				for _, seed := range seeds {
					cell := cfg
					cell.MixDelayMean, cell.CoverRate, cell.Observe, cell.Seed = m, c, true, seed
					if tb.widths != "" {
						cell.LayerWidth = w
						if w == 0 {
							cell.Layers, cell.LayerCoverRate = 0, 0
						}
					}
					if _, err := sim.New(cell); err != nil { // refuse a bad grid before any run
						return fmt.Errorf("cell mean %v, cover %v, width %d: %w", m, c, w, err)
					}
					cells = append(cells, cell)
				}
			}
		}
	}
	reports := make([]sim.Report, len(cells))
	errs := make([]error, len(cells))
	sem := make(chan struct{}, tb.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, cell := range cells {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			s, err := sim.New(cell)
			if err == nil {
				reports[i], err = s.Run()
			}
			errs[i] = err
			mu.Lock()
			fmt.Fprintf(progress, "mean %v, cover %g, %s, seed %d: done in %v (%v)\n", cell.MixDelayMean, cell.CoverRate, topologyName(cell.Layers, cell.LayerWidth), cell.Seed, time.Since(start).Round(time.Second), err)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range reports {
		if p := reports[i].Privacy; p != nil {
			p.Timing.PerMessage, p.Size.PerMessage, p.Grouped.PerMessage = nil, nil, nil
		}
		if f := reports[i].Framed; f != nil {
			for _, b := range []*observe.Report{f.Answer, f.Back} {
				if b != nil {
					b.Timing.PerMessage, b.Size.PerMessage, b.Grouped.PerMessage = nil, nil, nil
				}
			}
		}
	}
	if tb.jsonFile != "" {
		b, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(tb.jsonFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if tb.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	if err := writeTable(stdout, cfg, reports); err != nil {
		return err
	}
	if len(seeds) > 1 {
		return writeSeeds(stdout, reports, len(seeds))
	}
	return nil
}

// writeSeeds prints, for each cell run on n seeds (n consecutive reports), the mean over the
// seeds of the entropy and the p50 latency, and the entropy's least and greatest.
func writeSeeds(w io.Writer, rs []sim.Report, n int) error {
	fmt.Fprintf(w, "# over %d seeds: mean, least and greatest entropy; mean p50\n", n)
	for i := 0; i+n <= len(rs); i += n {
		var h, p50 float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rs[i : i+n] {
			e := r.Privacy.Timing.MeanEntropy
			h += e / float64(n)
			lo, hi = min(lo, e), max(hi, e)
			p50 += float64(r.LatencyP50) / float64(time.Millisecond) / float64(n)
		}
		r := rs[i]
		if _, err := fmt.Fprintf(w, "%-8s %-6g %-9s seeds %d: H %.3f bits (%.3f-%.3f, %.1f%% of max), p50 %.1f ms\n",
			strconv.FormatFloat(float64(r.MixDelayMean)/float64(time.Millisecond), 'f', 1, 64), r.CoverRate, topologyName(r.Layers, r.LayerWidth),
			n, h, lo, hi, 100*h/r.Privacy.MaxEntropy, p50); err != nil {
			return err
		}
	}
	return nil
}

// writeTable prints the privacy table: the timing attack's results (the size attack's are the
// same while every packet has one size; --json has both).
func writeTable(w io.Writer, cfg sim.Config, rs []sim.Report) error {
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	load := fmt.Sprintf("%.0f msg/s", cfg.Rate)
	if cfg.Fixed {
		load = fmt.Sprintf("each to a fixed correspondent, %g msg/s while on (mean on %v, off %v)", cfg.BurstRate, cfg.BurstOn, cfg.BurstOff)
	}
	fmt.Fprintf(w, "# %d nodes, %d senders -> %d recipients, %s for %v, latency %v-%v, processing %v-%v, seed %d\n",
		cfg.Nodes, cfg.Senders, cfg.Recipients, load, cfg.Duration, cfg.LatencyMin, cfg.LatencyMax,
		cfg.ProcessingMin, cfg.ProcessingMax, cfg.Seed)
	fmt.Fprintf(w, "# stream %g/s per node (re-emission %v), relayers %d; cost per day: a relayer's (every node's in free routes) GB, tokens earned, tokens spent; another node's GB and tokens spent\n",
		cfg.SendRate, cfg.Reemit, max(cfg.Relayers, 2))
	fmt.Fprintf(w, "%-8s %-6s %-9s %5s %8s %7s %9s %6s %8s %9s %9s %8s %10s %6s | %7s %8s %8s %7s %8s\n",
		"mean_ms", "cover", "topology", "seed", "scored", "H_bits", "H/max", "top1", "top1/rnd", "p50_ms", "p99_ms", "deliv%", "B/s/node", "cover%",
		"rel_GB", "rel_earn", "rel_pay", "oth_GB", "oth_pay")
	for _, r := range rs {
		p := r.Privacy
		_, err := fmt.Fprintf(w, "%-8s %-6g %-9s %5d %8d %7.2f %8.1f%% %6.3f %8.1f %9s %9s %7.2f%% %10.0f %5.1f%% | %7.2f %8.1f %8.1f %7.2f %8.1f\n",
			ms(r.MixDelayMean), r.CoverRate, topologyName(r.Layers, r.LayerWidth), r.Seed, p.Messages, p.Timing.MeanEntropy, 100*p.Timing.EntropyShare, p.Timing.Top1,
			p.Timing.Top1OverRandom, ms(r.LatencyP50), ms(r.LatencyP99), 100*float64(r.Delivered)/float64(max(r.Messages, 1)), r.BytesPerNode, 100*r.CoverShare,
			r.RelayerBytesPerDay/1e9, r.RelayerEarnsPerDay, r.RelayerSpendsPerDay, r.OtherBytesPerDay/1e9, r.OtherSpendsPerDay)
		if err != nil {
			return err
		}
	}
	for _, r := range rs {
		if d := r.Redraw; d != nil {
			if _, err := fmt.Fprintf(w, "# seed %d, re-draws: %d; per re-draw %.0f channels opened (%.0f tokens), %.0f closed, %.0f tokens added to balances; overlaps: %d messages, %d without a path, H %.2f bits (%d scored), outside %.2f (%d)\n",
				r.Seed, d.Redraws, d.Opened, d.Tokens, d.Closed, d.Added, d.Messages, d.NoPath, d.EntropyOverlap, d.ScoredOverlap, d.EntropyOther, d.ScoredOther); err != nil {
				return err
			}
		}
	}
	if cfg.Fragments > 1 || cfg.Ack || cfg.Answer {
		return writeFramed(w, cfg, rs)
	}
	return nil
}

// writeFramed prints the observer's results on framed messages: the forward packets one by one
// (the table above) and combined per message, the answers, and every packet sent back, one by
// one and combined per message. Entropy shares and top-1 are against each row's own candidates
// (the senders forward, the recipients back).
func writeFramed(w io.Writer, cfg sim.Config, rs []sim.Report) error {
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	fmt.Fprintf(w, "# framed: %d packets a message, %v apart, ack %v, answer %v (delay %v)\n",
		max(1, cfg.Fragments), cfg.FragmentGap, cfg.Ack, cfg.Answer, cfg.AnswerDelay)
	fmt.Fprintf(w, "%-8s %-6s %-14s %8s %7s %9s %6s %8s %9s %9s %9s\n",
		"mean_ms", "cover", "scored", "n", "H_bits", "H/max", "top1", "top1/rnd", "whole", "whole_p50", "back_in")
	row := func(r sim.Report, what string, n int, a observe.AttackResult, rnd float64) error {
		f := r.Framed
		_, err := fmt.Fprintf(w, "%-8s %-6g %-14s %8d %7.2f %8.1f%% %6.3f %8.1f %5d/%-5d %7sms %4d/%-4d\n",
			ms(r.MixDelayMean), r.CoverRate, what, n, a.MeanEntropy, 100*a.EntropyShare, a.Top1, a.Top1/rnd,
			f.Complete, f.Messages, ms(f.CompleteP50), f.AcksArrived+f.AnswersArrived, f.Acks+f.Answers)
		return err
	}
	for _, r := range rs {
		p, f := r.Privacy, r.Framed
		if p == nil || f == nil {
			continue
		}
		if err := row(r, "packets", p.Messages, p.Timing, p.RandomGuess); err != nil {
			return err
		}
		if p.Groups > 0 {
			if err := row(r, "messages", p.Groups, p.Grouped, p.GroupRandomGuess); err != nil {
				return err
			}
		}
		if a := f.Answer; a != nil {
			if err := row(r, "answers", a.Messages, a.Timing, a.RandomGuess); err != nil {
				return err
			}
		}
		if b := f.Back; b != nil {
			if err := row(r, "back-packets", b.Messages, b.Timing, b.RandomGuess); err != nil {
				return err
			}
			if b.Groups > 0 {
				if err := row(r, "back-messages", b.Groups, b.Grouped, b.GroupRandomGuess); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// topologyName names a run's topology in the table: free routes, or layers × width.
func topologyName(layers, width int) string {
	if layers == 0 {
		return "free"
	}
	return fmt.Sprintf("%dx%d", layers, width)
}

// parseList parses a comma-separated list of one or more values.
func parseList[T any](name, s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for f := range strings.SplitSeq(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--%s %q: %w", name, s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// durationRange parses min-max.
func durationRange(name, s string) (lo, hi time.Duration, err error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := time.ParseDuration(strings.TrimSpace(a))
	hi, err2 := time.ParseDuration(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--%s %q: want a range like 20ms-150ms", name, s)
	}
	return lo, hi, nil
}

// tokens is n whole tokens in the smallest unit.
func tokens(n uint64) *big.Int {
	return token.Tokens(n).Big()
}
