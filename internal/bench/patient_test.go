package bench_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/bench/benchtest"
)

// TestPatientSchedule: each sender writes only to its correspondent (distinct ones while there
// are enough recipients), in bursts whose share of time and rate are the asked ones, in time
// order; the same seed gives the same schedule, and a longer schedule starts with a shorter one.
func TestPatientSchedule(t *testing.T) {
	p := bench.Patient{Rate: 2, On: 10 * time.Second, Off: 10 * time.Second, Seed: 3}
	senders, recipients := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []int{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	sched, err := p.Schedule(senders, recipients, 3000)
	if err != nil {
		t.Fatal(err)
	}
	corr := p.Correspondents(senders, recipients)
	got := map[int]bool{}
	for _, r := range corr {
		got[r] = true
	}
	if len(corr) != 10 || len(got) != 10 {
		t.Fatalf("correspondents %v: want 10 distinct", corr)
	}
	perSender := map[int][]time.Duration{}
	for i, s := range sched {
		if s.Recipient != corr[s.Sender] {
			t.Fatalf("message %d: %d to %d, its correspondent is %d", i, s.Sender, s.Recipient, corr[s.Sender])
		}
		if i > 0 && s.At < sched[i-1].At {
			t.Fatalf("message %d at %v before message %d at %v", i, s.At, i-1, sched[i-1].At)
		}
		perSender[s.Sender] = append(perSender[s.Sender], s.At)
	}
	// 10 senders, on half the time at 2 msg/s: 3,000 messages in about 300 s.
	if end := sched[len(sched)-1].At; end < 240*time.Second || end > 360*time.Second {
		t.Errorf("3,000 messages took %v, want about 300 s", end)
	}
	// Bursts: most gaps are the rate's half a second, and some are off periods of seconds.
	var short, long int
	for _, ts := range perSender {
		for i := 1; i < len(ts); i++ {
			switch d := ts[i] - ts[i-1]; {
			case d < 2*time.Second:
				short++
			case d > 4*time.Second:
				long++
			}
		}
	}
	if short < 2500 || long < 50 {
		t.Errorf("%d gaps under 2 s and %d over 4 s: want bursts at 2 msg/s between off periods", short, long)
	}
	again, _ := p.Schedule(senders, recipients, 3000)
	shorter, _ := p.Schedule(senders, recipients, 100)
	if !slices.Equal(sched, again) || !slices.Equal(shorter, sched[:100]) {
		t.Error("the same workload gave another schedule, or a shorter one is not its beginning")
	}
	p.Seed++
	if other, _ := p.Schedule(senders, recipients, 3000); slices.Equal(other, sched) {
		t.Error("another seed gave the same schedule")
	}
	// Always on: the rate is the burst rate times the senders.
	p.Off = 0
	sched, _ = p.Schedule(senders[:2], recipients[:1], 2000)
	if rate := 2000 / sched[len(sched)-1].At.Seconds(); math.Abs(rate-4) > 0.4 {
		t.Errorf("always on: %.2f msg/s, want about 4", rate)
	}
	for _, bad := range []bench.Patient{{Rate: 0, On: time.Second}, {Rate: 1}, {Rate: 1, On: time.Second, Off: -1}} {
		if _, err := bad.Schedule(senders, recipients, 1); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestRunPatient: a run of patient senders sends each sender's messages to its correspondent
// only, and the report says who that is.
func TestRunPatient(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{Nodes: 6})
	p := &bench.Patient{Rate: 400, On: 20 * time.Millisecond, Off: 20 * time.Millisecond, Seed: 1}
	rep, err := bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1, 2, 3}, Recipients: []int{4, 5, 6}, Messages: 90,
		Patient: p, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delivered != 90 || rep.Patient == nil || len(rep.Correspondents) != 3 || rep.Rate != 0 {
		t.Fatalf("report %+v", rep)
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "in bursts of 400 msg/s (mean on 20ms, off 20ms, seed 1)") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
	want := p.Correspondents([]int{1, 2, 3}, []int{4, 5, 6})
	for route, n := range net.Routes() {
		if want[route[0]] != route[1] || rep.Correspondents[route[0]] != route[1] {
			t.Errorf("%d messages from %d to %d; its correspondent is %d", n, route[0], route[1], want[route[0]])
		}
	}
	if _, err := bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1}, Recipient: 4, Messages: 1, Patient: &bench.Patient{Rate: 1}}); err == nil {
		t.Error("a patient workload without an on period was accepted")
	}
}
