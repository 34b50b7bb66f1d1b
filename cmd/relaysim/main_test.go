package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
	} {
		var out bytes.Buffer
		err := run(args, &out)
		if err == nil || out.Len() != 0 {
			t.Fatalf("%v: err %v, output %q", args, err, out.String())
		}
		if (args[0] == "--nodes" || args[0] == "--channelFunding") && !errors.Is(err, sim.ErrBadConfig) {
			t.Fatalf("%v: %v, want ErrBadConfig", args, err)
		}
	}
}
