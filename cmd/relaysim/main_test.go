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

	"github.com/relayd/relayd/internal/sim"
)

func TestRunPrintsAReport(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--nodes", "20", "--duration", "5s", "--latency", "10ms-20ms", "--seed", "7", "--json"}, &out); err != nil {
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
		"--latency", "100us-500us", "--mixDelayMeans", "0,50ms", "--coverRates", "0,2"}
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
	if len(lines) != 2+len(want) || !strings.HasPrefix(lines[2], "0.0 ") || !strings.HasPrefix(lines[4], "50.0 ") {
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
