package bench

import (
	"slices"
	"testing"
	"time"
)

func TestTrackerMatching(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr := newTracker("run1", 5)
	for seq := range 5 {
		tr.issue(seq, 1, 2, at(seq))
	}
	// 0: accepted then delivered; 1: delivered before the API's answer;
	// 2: accepted, never delivered; 3: rejected; 4: failed, yet delivered.
	tr.answer(0, at(1), true, "", true)
	if !tr.deliver(MessageText("run1", 0, 50), 2, at(10)) {
		t.Fatal("own message not recognised")
	}
	tr.nodeLatency(MessageText("run1", 0, 50), 2, 7*time.Millisecond)
	tr.deliver(MessageText("run1", 1, 50), 2, at(5))
	tr.answer(1, at(6), true, "", true)
	tr.answer(2, at(3), true, "", true)
	tr.answer(3, at(4), false, rejectionReason(422, "NOT_ENOUGH_BALANCE"), true)
	tr.answer(4, at(5), false, "transport: request timeout", false)
	tr.deliver(MessageText("run1", 4, 50), 2, at(20))

	tr.deliver(MessageText("run1", 0, 50), 2, at(30))  // duplicate
	tr.deliver(MessageText("run1", 99, 50), 2, at(30)) // never issued
	if tr.deliver(MessageText("other", 0, 50), 2, at(30)) || tr.deliver("hello", 2, at(30)) {
		t.Fatal("a foreign message was taken for this run's")
	}
	tr.finishSending()
	select {
	case <-tr.complete:
		t.Fatal("complete although message 2 is outstanding")
	default:
	}
	c := tr.counts()
	if c != (counts{Issued: 5, Accepted: 3, Rejected: 1, Failed: 1, Delivered: 3, Outstanding: 1}) {
		t.Fatalf("counts %+v", c)
	}
	rep := buildReport(Config{RunID: "run1", Messages: 6, Senders: []int{1}, Recipients: []int{2}, Size: 50}, tr, t0, at(100), nil)
	if rep.Sent != 3 || rep.Delivered != 2 || rep.Lost != 1 || rep.Rejected != 2 || rep.Unexpected != 1 ||
		rep.Duplicates != 1 || rep.NotSent != 1 || rep.Attempted != 5 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Rejections["HTTP 422 NOT_ENOUGH_BALANCE"] != 1 || rep.Rejections["transport: request timeout"] != 1 {
		t.Fatalf("rejections %v", rep.Rejections)
	}
	// Latencies 10 ms (seq 0) and 4 ms (seq 1, sent at 1, delivered at 5).
	if rep.Latency.Count != 2 || rep.Latency.MinMs != 4 || rep.Latency.MaxMs != 10 {
		t.Fatalf("latency %+v", rep.Latency)
	}
	if rep.NodeLatency.Count != 1 || rep.NodeLatency.P50Ms != 7 {
		t.Fatalf("node latency %+v", rep.NodeLatency)
	}
	if rep.DeliveryRatio != 2.0/3 {
		t.Fatalf("ratio %v", rep.DeliveryRatio)
	}

	tr.deliver(MessageText("run1", 2, 50), 2, at(40))
	select {
	case <-tr.complete:
	default:
		t.Fatal("not complete once every accepted message arrived")
	}
}

// TestTrackerMisrouted: a message of the run arriving at a recipient it was
// not addressed to is counted as misrouted, not delivered, and its
// recipient's own latency line is not taken from the wrong node.
func TestTrackerMisrouted(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := newTracker("run1", 4)
	// Senders 1, 2; recipients 3, 4: seq 0 1→3, 1 2→3, 2 1→4, 3 2→4.
	for seq, pr := range [][2]int{{1, 3}, {2, 3}, {1, 4}, {2, 4}} {
		tr.issue(seq, pr[0], pr[1], t0)
		tr.answer(seq, t0, true, "", true)
	}
	tr.deliver(MessageText("run1", 0, 50), 3, t0.Add(time.Millisecond))
	tr.deliver(MessageText("run1", 2, 50), 4, t0.Add(time.Millisecond))
	// Seq 1 (for 3) arrives at 4, twice (a replay after a reconnect); seq 3
	// (for 4) arrives at 3, then at 4 as well.
	for _, d := range []struct{ seq, node int }{{1, 4}, {1, 4}, {3, 3}, {3, 4}} {
		if !tr.deliver(MessageText("run1", d.seq, 50), d.node, t0.Add(2*time.Millisecond)) {
			t.Fatalf("seq %d at node %d not recognised as this run's", d.seq, d.node)
		}
	}
	tr.nodeLatency(MessageText("run1", 1, 50), 4, 9*time.Millisecond) // wrong node: ignored
	tr.nodeLatency(MessageText("run1", 0, 50), 3, 5*time.Millisecond)
	tr.finishSending()
	if c := tr.counts(); c.Delivered != 3 || c.Outstanding != 1 {
		t.Fatalf("counts %+v: a misrouted message counted as delivered", c)
	}
	rep := buildReport(Config{RunID: "run1", Messages: 4, Senders: []int{1, 2}, Recipients: []int{3, 4}, Size: 50}, tr, t0, t0.Add(time.Second), nil)
	if rep.Delivered != 3 || rep.Lost != 1 || rep.Misrouted != 2 || rep.Duplicates != 0 {
		t.Fatalf("delivered %d lost %d misrouted %d duplicates %d", rep.Delivered, rep.Lost, rep.Misrouted, rep.Duplicates)
	}
	want := []RecipientCounts{
		{Node: 3, Attempted: 2, Sent: 2, Delivered: 1, Lost: 1, Misrouted: 1},
		{Node: 4, Attempted: 2, Sent: 2, Delivered: 2, Misrouted: 1},
	}
	if !slices.Equal(rep.PerRecipient, want) {
		t.Fatalf("per recipient\n got %+v\nwant %+v", rep.PerRecipient, want)
	}
	if rep.NodeLatency.Count != 1 || rep.NodeLatency.MaxMs != 5 {
		t.Fatalf("node latency %+v", rep.NodeLatency)
	}
	if rep.Recipient != 0 || !slices.Equal(rep.Recipients, []int{3, 4}) {
		t.Fatalf("recipient %d recipients %v", rep.Recipient, rep.Recipients)
	}
}
