package bench

import (
	"strings"
	"testing"
	"time"
)

func TestChurnSplit(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	log := `{"time":"2026-11-24T06:00:10Z","node":7,"event":"kill","ticketsBefore":3}
{"time":"2026-11-24T06:00:16Z","node":7,"event":"tickets-kept","ticketsBefore":3,"ticketsAfter":3}
{"time":"2026-11-24T06:00:30Z","node":8,"event":"kill","ticketsBefore":1}
`
	end := t0.Add(40 * time.Second)
	ws, err := ReadChurnLog(strings.NewReader(log), end)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Node != 7 || ws[0].To.Sub(ws[0].From) != 6*time.Second || ws[1].Node != 8 || !ws[1].To.Equal(end) {
		t.Fatalf("windows %+v", ws)
	}
	rep := &Report{Start: t0}
	for i, sec := range []int{1, 5, 9, 12, 17, 20, 25, 35} {
		rep.Samples = append(rep.Samples, Sample{Seq: i, SentAt: time.Duration(sec) * time.Second, Accepted: true, Delivered: sec != 12 && sec != 25})
	}
	rep.Samples = append(rep.Samples, Sample{Seq: 99, SentAt: 2 * time.Second}) // refused: not counted
	s := SplitByChurn(rep, ws, 2*time.Second)
	// Affected: 9, 12, 17 (node 7 down 10–16 s, ±2 s) and 35 (node 8 down from 30 s on).
	if s.Affected != 4 || s.AffectedDelivered != 3 || s.Clear != 4 || s.ClearDelivered != 3 {
		t.Fatalf("split %+v", s)
	}
	if !strings.Contains(s.String(), "3 of 4 delivered (75.00 %)") {
		t.Fatalf("text %q", s.String())
	}
	if _, err := ReadChurnLog(strings.NewReader("{not json\n"), end); err == nil {
		t.Fatal("a bad line was read")
	}
}
