package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/bench/benchtest"
)

func TestBenchMainJSONAndPlot(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{NodeLatencyMs: 2})
	dir := t.TempDir()
	env := filepath.Join(dir, "cluster.env")
	if err := os.WriteFile(env, []byte(net.EnvFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	plot := filepath.Join(dir, "latency.svg")
	var stdout, stderr bytes.Buffer
	code := benchMain(t.Context(), []string{"--env", env, "--messages", "40", "--rate", "0", "--senders", "2",
		"--size", "64", "--json", "--plot", plot}, &stdout, &stderr, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if rep.Sent != 40 || rep.Delivered != 40 || rep.Recipient != 4 || len(rep.Senders) != 2 || rep.Senders[1] != 2 || rep.Size != 64 {
		t.Fatalf("report %+v", rep)
	}
	// Not a terminal: plain lines, no carriage returns; the last is "done".
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if strings.Contains(stderr.String(), "\r") || !strings.Contains(lines[len(lines)-1], "done") {
		t.Fatalf("progress on a non-terminal:\n%q", stderr.String())
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Fatalf("plot: %v %.40q", err, svg)
	}
}

func TestBenchMainTableOnTerminal(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{})
	env := filepath.Join(t.TempDir(), "cluster.env")
	if err := os.WriteFile(env, []byte(net.EnvFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := benchMain(t.Context(), []string{"--env", env, "--messages", "10", "--recipient", "3"}, &stdout, &stderr, true); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "to node 3") || !strings.Contains(stdout.String(), "delivered") {
		t.Fatalf("table:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "\r\033[K[") || !strings.HasSuffix(stderr.String(), "\n") {
		t.Fatalf("progress bar on a terminal: %q", stderr.String())
	}
}

// TestBenchMainSeveralRecipients: --recipients 2 picks the last two nodes,
// the senders are the others, and the JSON report has the counts of each.
func TestBenchMainSeveralRecipients(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{Nodes: 5})
	env := filepath.Join(t.TempDir(), "cluster.env")
	if err := os.WriteFile(env, []byte(net.EnvFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := benchMain(t.Context(), []string{"--env", env, "--messages", "40", "--rate", "0", "--senders", "3",
		"--recipients", "2", "--json"}, &stdout, &stderr, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if _, ok := raw["recipient"]; ok {
		t.Fatalf("a report of two recipients names one: %s", raw["recipient"])
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := []bench.RecipientCounts{
		{Node: 4, Attempted: 21, Sent: 21, Delivered: 21},
		{Node: 5, Attempted: 19, Sent: 19, Delivered: 19},
	}
	if rep.Delivered != 40 || !slices.Equal(rep.Recipients, []int{4, 5}) || !slices.Equal(rep.Senders, []int{1, 2, 3}) ||
		!slices.Equal(rep.PerRecipient, want) {
		t.Fatalf("report %+v", rep)
	}
	routes := net.Routes()
	for s := 1; s <= 3; s++ {
		for r := 4; r <= 5; r++ {
			if routes[[2]int{s, r}] == 0 {
				t.Fatalf("node %d sent nothing to node %d: %v", s, r, routes)
			}
		}
	}
}

// TestBenchMainFixedCorrespondents: --correspondents fixed sends each sender's messages to one
// correspondent among the recipients, drawn by --seed, and the JSON report says which.
func TestBenchMainFixedCorrespondents(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{Nodes: 6})
	env := filepath.Join(t.TempDir(), "cluster.env")
	if err := os.WriteFile(env, []byte(net.EnvFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := benchMain(t.Context(), []string{"--env", env, "--messages", "60", "--senders", "3", "--recipients", "3", "--json",
		"--correspondents", "fixed", "--burstRate", "500", "--burstOn", "20ms", "--burstOff", "10ms", "--seed", "4"}, &stdout, &stderr, false)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	p := bench.Patient{Rate: 500, On: 20 * time.Millisecond, Off: 10 * time.Millisecond, Seed: 4}
	want := p.Correspondents([]int{1, 2, 3}, []int{4, 5, 6})
	if rep.Delivered != 60 || rep.Patient == nil || *rep.Patient != p || !maps.Equal(rep.Correspondents, want) {
		t.Fatalf("report %+v, want correspondents %v", rep, want)
	}
	for route := range net.Routes() {
		if want[route[0]] != route[1] {
			t.Errorf("node %d sent to %d; its correspondent is %d", route[0], route[1], want[route[0]])
		}
	}
}

func TestBenchMainBadInput(t *testing.T) {
	dir := t.TempDir()
	net := benchtest.Start(t, benchtest.Options{})
	env := filepath.Join(dir, "cluster.env")
	if err := os.WriteFile(env, []byte(net.EnvFile()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing env", []string{"--env", filepath.Join(dir, "none.env")}, "read env file"},
		{"bad flag", []string{"--nope"}, "flag provided but not defined"},
		{"argument", []string{"extra"}, "unexpected argument"},
		{"recipient and recipients", []string{"--env", env, "--recipient", "3", "--recipients", "2"}, "give one of them"},
		{"no recipients", []string{"--env", env, "--recipients", "0"}, "--recipients must be at least 1"},
		{"every node receives", []string{"--env", env, "--recipients", "4"}, "cannot pick 4 recipients among 4 nodes"},
		{"too many senders", []string{"--env", env, "--recipients", "2", "--senders", "3"}, "cannot pick 3 senders among the 2 nodes"},
		{"unknown correspondents", []string{"--env", env, "--correspondents", "random"}, "want roundrobin or fixed"},
		{"rate with fixed", []string{"--env", env, "--correspondents", "fixed", "--rate", "5"}, "--rate does not apply"},
		{"bursts without fixed", []string{"--env", env, "--burstOn", "5s"}, "--burstOn applies to --correspondents fixed only"},
		{"no on period", []string{"--env", env, "--correspondents", "fixed", "--burstOn", "0s"}, "mean on period must be positive"},
	} {
		var stdout, stderr bytes.Buffer
		if code := benchMain(t.Context(), c.args, &stdout, &stderr, false); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, stderr.String())
		}
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine(bench.Progress{Elapsed: 1500 * time.Millisecond, Phase: "sending", Total: 100, Issued: 60, Accepted: 50, Rejected: 2, Delivered: 20})
	want := "[######=========               ]   1.5s sending issued 60/100  accepted 50  rejected 2  delivered 20"
	if got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
}
