package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/sim"
)

func TestRunPrintsAReport(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--nodes", "20", "--duration", "5s", "--latency", "10ms-20ms", "--mixDelayMean", "0", "--mixDelayMax", "20ms", "--sendRate", "0", "--seed", "7", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var r sim.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if r.Nodes != 20 || r.Seed != 7 || r.Messages == 0 || r.LatencyP99 > 4*20e6+3*20e6 {
		t.Fatalf("report does not follow the flags: %+v", r)
	}
	out.Reset()
	if err := run([]string{"--nodes", "20", "--duration", "5s"}, &out); err != nil || !strings.Contains(out.String(), "delivered") {
		t.Fatalf("text report: %v %q", err, out.String())
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--latency", "150ms"},
		{"--latency", "fast-slow"},
		{"--latency", "150ms-20ms"},
		{"--nodes", "3"},
		{"--channelFunding", "0"},
		{"extra"},
		{"--processing", "2ms"},
		{"--coverRate", "-1"},
		{"--privacy", "--mixDelayMeans", "0,fast"},
		{"--privacy", "--coverRates", "1,x"},
		{"--privacy", "--coverRates", "-1"},
		{"--privacy", "--mixDelayMeans", "-5ms"},
		{"--privacy", "--parallel", "0"},
		{"--correspondents", "some"},
		{"--correspondents", "fixed", "--burstRate", "0"},
		{"--sendRate", "-1"},
		{"--privacy", "--shapes", "today"},
		{"--privacy", "--correspondents", "fixed", "--shapes", "today,constant"},
		{"--privacy", "--correspondents", "fixed", "--shapes", "full", "--sendRates", "0"},
		{"--privacy", "--correspondents", "fixed", "--shapes", "full", "--trials", "0"},
	} {
		var out bytes.Buffer
		err := run(args, &out)
		if err == nil || out.Len() != 0 {
			t.Fatalf("%v: err %v, output %q", args, err, out.String())
		}
		if bad := args[len(args)-1]; (args[0] == "--nodes" || args[0] == "--channelFunding" || args[0] == "--coverRate" || args[0] == "--sendRate" ||
			bad == "-1" || bad == "-5ms") && !errors.Is(err, sim.ErrBadConfig) {
			t.Fatalf("%v: %v, want ErrBadConfig", args, err)
		}
	}
}

func TestPrivacyTable(t *testing.T) {
	args := []string{"--privacy", "--nodes", "12", "--senders", "4", "--recipients", "4", "--rate", "40", "--duration", "5s",
		"--latency", "100us-500us", "--mixDelayMeans", "0,50ms", "--coverRates", "0,2", "--sendRate", "0", "--reemit=false"}
	var out bytes.Buffer
	if err := run(append(args, "--json"), &out); err != nil {
		t.Fatal(err)
	}
	var rs []sim.Report
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	want := []struct {
		mean  time.Duration
		cover float64
	}{{0, 0}, {0, 2}, {50 * time.Millisecond, 0}, {50 * time.Millisecond, 2}}
	if len(rs) != len(want) {
		t.Fatalf("%d reports, want one per cell (%d)", len(rs), len(want))
	}
	for i, r := range rs {
		if r.MixDelayMean != want[i].mean || r.CoverRate != want[i].cover || r.Privacy == nil || r.Privacy.Messages == 0 ||
			r.Privacy.Timing.PerMessage != nil || (r.CoverRate > 0) != (r.CoverShare > 0) {
			t.Fatalf("cell %d: %+v (privacy %+v), want mean %v, cover %v, observed, without per-message scores", i, r, r.Privacy, want[i].mean, want[i].cover)
		}
	}
	if rs[2].Privacy.Timing.MeanEntropy <= rs[0].Privacy.Timing.MeanEntropy || rs[2].LatencyP50 <= rs[0].LatencyP50 {
		t.Fatalf("50 ms of mixing: entropy %.2f, p50 %v; none: %.2f, %v", rs[2].Privacy.Timing.MeanEntropy, rs[2].LatencyP50,
			rs[0].Privacy.Timing.MeanEntropy, rs[0].LatencyP50)
	}
	out.Reset()
	file := filepath.Join(t.TempDir(), "table.json")
	if err := run(append(args, "--parallel", "1", "--jsonFile", file), &out); err != nil {
		t.Fatal(err)
	}
	var again []sim.Report
	if b, err := os.ReadFile(file); err != nil || json.Unmarshal(b, &again) != nil || len(again) != len(want) || again[3].CoverRate != 2 {
		t.Fatalf("--jsonFile: %v, %d reports", err, len(again))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3+len(want) || !strings.HasPrefix(lines[3], "0.0 ") || !strings.HasPrefix(lines[5], "50.0 ") {
		t.Fatalf("table:\n%s", out.String())
	}
	// Without --privacy, --observe reports the observer for one run.
	out.Reset()
	if err := run([]string{"--nodes", "12", "--senders", "4", "--recipients", "4", "--duration", "5s", "--observe"}, &out); err != nil ||
		!strings.Contains(out.String(), "observer:") {
		t.Fatalf("observed run: %v %q", err, out.String())
	}
}

// TestShapesTable: --privacy --shapes runs each shape (each streaming one at each send rate)
// over --trials seeds and prints one row each, or the pooled results as JSON.
func TestShapesTable(t *testing.T) {
	args := []string{"--privacy", "--nodes", "10", "--senders", "4", "--recipients", "4", "--duration", "40s",
		"--latency", "100us-300us", "--mixDelayMean", "50ms", "--coverRate", "1", "--correspondents", "fixed", "--burstRate", "3",
		"--shapes", "today,full", "--sendRates", "6,12", "--trials", "2", "--maxScored", "20"}
	var out bytes.Buffer
	if err := run(append(args, "--json"), &out); err != nil {
		t.Fatal(err)
	}
	var rs []sim.ShapeResult
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if len(rs) != 3 || rs[0].Shape != sim.ShapeToday || rs[0].SendRate != 0 || rs[1].Shape != sim.ShapeFull || rs[1].SendRate != 6 || rs[2].SendRate != 12 {
		t.Fatalf("rows %+v: want today, full at 6 and at 12", rs)
	}
	for _, r := range rs {
		if r.Trials != 2 || len(r.SenderSDA) != 4 || r.SenderSDA[0].Scored == 0 || r.LatencyP50 <= 0 || r.PacketsPerNode <= 0 || (r.SendRate > 0) != (r.QueueMean > 0) {
			t.Fatalf("row %+v", r)
		}
	}
	if rs[2].QueueMean >= rs[1].QueueMean || rs[1].PacketsPerNode <= rs[0].PacketsPerNode {
		t.Errorf("queue %v at 6/s, %v at 12/s; packets %.1f today, %.1f at 6/s", rs[1].QueueMean, rs[2].QueueMean, rs[0].PacketsPerNode, rs[1].PacketsPerNode)
	}
	out.Reset()
	if err := run(args, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6+3 || !strings.HasPrefix(lines[6], "today ") || !strings.HasPrefix(lines[8], "full ") || !strings.Contains(lines[0], "bursts of 3 msg/s") ||
		!strings.HasSuffix(strings.Fields(lines[6])[6], "-") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// TestPrivacyTableOfFramedMessages: with --fragments, --ack and --answer the privacy table is
// followed by the framed rows: packets, per message, answers, packets sent back (one by one and
// per message), each with whole messages and packets back counted.
func TestPrivacyTableOfFramedMessages(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"--privacy", "--nodes", "12", "--senders", "4", "--recipients", "4", "--rate", "5", "--duration", "5s",
		"--latency", "100us-300us", "--mixDelayMeans", "20ms", "--coverRates", "0", "--fragments", "3", "--fragmentGap", "1ms",
		"--ack", "--answer"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"# framed: 3 packets a message, 1ms apart, ack true, answer true", " packets ", " messages ",
		" answers ", " back-packets ", " back-messages "} {
		if !strings.Contains(text, want) {
			t.Fatalf("no %q in\n%s", want, text)
		}
	}
	if err := run([]string{"--fragments", "-1"}, &out); err == nil {
		t.Fatal("--fragments -1 accepted")
	}
}

// TestNoFlagsIsANodeWithNone: without flags every node has the settings of a node started
// without any, from internal/settings, and holds what relayd cluster funds it with.
func TestNoFlagsIsANodeWithNone(t *testing.T) {
	c, d := nodeDefaults(), settings.Defaults()
	if c.MixDelayMean != d.MixDelayMean || c.MixDelayMax != 0 || c.CoverRate != d.CoverRate || c.SendRate != d.SendRate ||
		!c.Reemit || c.Relayers != d.Relayers || c.MaxChannels != d.MaxChannels || c.ChannelFunding.Cmp(d.ChannelFunding.Big()) != 0 ||
		c.AutoFund != d.AutoFund || c.AutoRedeem != d.AutoRedeem || c.RedeemCount != d.AutoRedeemCount || c.RedeemValue.Cmp(d.AutoRedeemValue.Big()) != 0 {
		t.Fatalf("relaysim's defaults %+v differ from a node's %+v", c, d)
	}
	var out bytes.Buffer
	if err := run([]string{"--nodes", "12", "--duration", "3s", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var r sim.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.MixDelayMean != d.MixDelayMean || r.CoverRate != d.CoverRate || r.SendRate != d.SendRate || !r.Reemit ||
		r.ChannelsOut.Max != d.MaxChannels || r.ThreeRelayers != 1 {
		t.Fatalf("a run without flags: %+v", r)
	}
}

// TestLayeredTable: --layers with --layerWidths runs free routes and the layered topology on
// the same seed, one row each, and the layered one's paths take three relayers.
func TestLayeredTable(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"--privacy", "--nodes", "40", "--senders", "20", "--recipients", "10", "--rate", "40", "--duration", "3s",
		"--latency", "100us-300us", "--mixDelayMeans", "50ms", "--coverRates", "1", "--layers", "3", "--layerWidths", "0,4",
		"--layerCoverRate", "2", "--json"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var rs []sim.Report
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Layers != 0 || rs[1].Layers != 3 || rs[1].LayerRelayers != 12 || rs[0].Seed != rs[1].Seed {
		t.Fatalf("reports %+v", rs)
	}
	if rs[1].Delivery < 0.99 || rs[1].MeanHops != 4 || rs[1].LayerLoops == 0 || rs[1].RelayerEarnsPerDay <= rs[0].RelayerEarnsPerDay {
		t.Fatalf("layered run: delivery %.3f, hops %.2f, %d mix loops, a relayer earns %.0f/day (free routes %.0f)",
			rs[1].Delivery, rs[1].MeanHops, rs[1].LayerLoops, rs[1].RelayerEarnsPerDay, rs[0].RelayerEarnsPerDay)
	}
}

// TestSeedsTable: --seeds runs each cell on every seed, in order, and the text table ends with
// each cell's mean over them.
func TestSeedsTable(t *testing.T) {
	args := []string{"--privacy", "--nodes", "30", "--senders", "10", "--recipients", "10", "--rate", "40", "--duration", "2s",
		"--latency", "100us-300us", "--mixDelayMeans", "20ms", "--coverRates", "0", "--seeds", "3,5"}
	var out bytes.Buffer
	if err := run(append(args, "--json"), &out); err != nil {
		t.Fatal(err)
	}
	var rs []sim.Report
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Seed != 3 || rs[1].Seed != 5 || rs[0].Messages == rs[1].Messages {
		t.Fatalf("reports %+v", rs)
	}
	out.Reset()
	if err := run(args, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "# over 2 seeds") || !strings.Contains(out.String(), "seeds 2: H ") {
		t.Fatalf("no mean over the seeds in:\n%s", out.String())
	}
}
