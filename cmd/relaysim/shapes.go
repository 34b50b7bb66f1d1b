package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/sim"
)

// shapeTable is the flags of the patient observer's table (--privacy --shapes).
type shapeTable struct {
	shapes, rates string
	trials        int
	parallel      int
	asJSON        bool
	jsonFile      string
}

func shapeNames() string {
	names := make([]string, len(sim.Shapes))
	for i, s := range sim.Shapes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// row is one row of the table: a shape, at a send rate when it streams.
type row struct {
	shape sim.Shape
	rate  float64
}

// runShapes runs tb.trials observed simulations of cfg per row (each shape once, or once per
// send rate when it streams), tb.parallel at once, and prints the table (or the pooled
// results as JSON).
func runShapes(cfg sim.Config, tb shapeTable, stdout, progress io.Writer) error {
	rates, err := parseList("sendRates", tb.rates, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err != nil {
		return err
	}
	if tb.trials < 1 || tb.parallel < 1 {
		return fmt.Errorf("--trials %d, --parallel %d: want at least 1 of each", tb.trials, tb.parallel)
	}
	var rows []row
	for name := range strings.SplitSeq(tb.shapes, ",") {
		sh := sim.Shape(strings.TrimSpace(name))
		rs := []float64{0}
		if sh.Streams() {
			rs = rates
		}
		for _, r := range rs {
			c, err := cfg.WithShape(sh, r)
			if err == nil {
				c.Observe = true
				err = c.Validate()
			}
			if err != nil { // refuse a bad table before any run
				return fmt.Errorf("--shapes %s at %g/s: %w", sh, r, err)
			}
			rows = append(rows, row{sh, r})
		}
	}
	results := make([]sim.ShapeResult, len(rows))
	for i, r := range rows {
		start := time.Now()
		if results[i], err = sim.RunShape(cfg, r.shape, r.rate, tb.trials, tb.parallel); err != nil {
			return fmt.Errorf("%s at %g/s: %w", r.shape, r.rate, err)
		}
		fmt.Fprintf(progress, "%s at %g/s: %d runs in %v\n", r.shape, r.rate, tb.trials, time.Since(start).Round(time.Second))
	}
	if tb.jsonFile != "" {
		b, err := json.MarshalIndent(results, "", "  ")
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
		return enc.Encode(results)
	}
	return writeShapes(stdout, cfg, tb.trials, results)
}

// writeShapes prints the patient observer's table: per row the SDA's top-1 on senders and on
// recipients after each k (the better of the classic and the residual formulation), the
// activity detection's balanced accuracy (the better of count and residual), the per-message
// trace's entropy share and top-1 multiple, and the cost.
func writeShapes(w io.Writer, cfg sim.Config, trials int, rs []sim.ShapeResult) error {
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 0, 64)
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) }
	random := 0.0
	if len(rs) > 0 {
		random = rs[0].Random
	}
	fmt.Fprintf(w, "# %d nodes; %d senders, each to a fixed correspondent among %d recipients, bursts of %g msg/s (mean on %v, off %v); %v of traffic\n",
		cfg.Nodes, cfg.Senders, cfg.Recipients, cfg.BurstRate, cfg.BurstOn, cfg.BurstOff, cfg.Duration)
	fmt.Fprintf(w, "# mixing mean %v, %d relayers, loops %g/s per node, latency %v-%v, processing %v-%v; %d runs per row from seed %d\n",
		cfg.MixDelayMean, max(cfg.Relayers, 2), cfg.CoverRate, cfg.LatencyMin, cfg.LatencyMax, cfg.ProcessingMin, cfg.ProcessingMax, trials, cfg.Seed)
	fmt.Fprintf(w, "# SDA: %% of targets whose correspondent is ranked first after k messages, the better of classic and out−in (random %.1f %%);\n", 100*random)
	fmt.Fprintf(w, "# activity: balanced accuracy per %v window, the better of count and residual (chance 50 %%); per message: the timing trace\n",
		observe.DefaultActivityWindow)
	fmt.Fprintf(w, "%-10s %6s | %-23s | %-23s | %-11s | %-12s | %8s %6s %6s %8s\n",
		"", "", "SDA senders, k=", "SDA recipients, k=", "activity", "per message", "", "", "", "")
	fmt.Fprintf(w, "%-10s %6s | %5s %5s %5s %5s | %5s %5s %5s %5s | %5s %5s | %5s %6s | %8s %6s %6s %8s\n",
		"shape", "send/s", "25", "50", "100", "200", "25", "50", "100", "200", "snd", "rcv", "H/max", "top1×", "queue_ms", "p50_ms", "p99_ms", "pkt/s/nd")
	for _, r := range rs {
		rate := "-"
		if r.SendRate > 0 {
			rate = strconv.FormatFloat(r.SendRate, 'g', -1, 64)
		}
		var cells []string
		for _, side := range [][]observe.SDAResult{r.SenderSDA, r.RecipientSDA} {
			for _, x := range side {
				cell := "-" // no target had k messages
				if x.Scored > 0 {
					cell = pct(x.Best())
				}
				cells = append(cells, fmt.Sprintf("%5s", cell))
			}
		}
		_, err := fmt.Fprintf(w, "%-10s %6s | %s | %s | %5s %5s | %4.0f%% %6.2f | %8s %6s %6s %8.1f\n",
			r.Shape, rate, strings.Join(cells[:len(r.SenderSDA)], " "), strings.Join(cells[len(r.SenderSDA):], " "),
			pct(r.SenderActivity.Best()), pct(r.RecipientActivity.Best()), 100*r.EntropyShare, r.Top1OverRandom,
			ms(r.QueueMean), ms(r.LatencyP50), ms(r.LatencyP99), r.PacketsPerNode)
		if err != nil {
			return err
		}
	}
	return nil
}
