package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Window is a span of time during which a node was down: from its kill until it served again.
type Window struct {
	Node     int
	From, To time.Time
}

// ReadChurnLog reads the churn log `relayd cluster --churn` writes (<data>/churn.jsonl: one JSON
// event a line) into the windows when a node was down: from each "kill" of a node to the next
// event that checked the node serving again ("tickets-kept", "tickets-lost" or "check-failed").
// A kill without such an event lasts until the end of the log's time (end).
func ReadChurnLog(r io.Reader, end time.Time) ([]Window, error) {
	var out []Window
	open := map[int]time.Time{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		var ev struct {
			Time  time.Time `json:"time"`
			Node  int       `json:"node"`
			Event string    `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("churn log line %d: %w", line, err)
		}
		switch ev.Event {
		case "kill":
			open[ev.Node] = ev.Time
		case "tickets-kept", "tickets-lost", "check-failed":
			if from, ok := open[ev.Node]; ok {
				out = append(out, Window{Node: ev.Node, From: from, To: ev.Time})
				delete(open, ev.Node)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("churn log: %w", err)
	}
	for n, from := range open {
		out = append(out, Window{Node: n, From: from, To: end})
	}
	return out, nil
}

// ChurnSplit splits a run's accepted messages by whether some node was down while they could
// have been on their way: sent within Margin of a down window (Affected) or not (Clear). A Clear
// message's path cannot have met a killed node, whatever the path was (senders keep paths to
// themselves, so this is the measure that can be made from outside).
type ChurnSplit struct {
	Margin            time.Duration `json:"margin"`
	Clear             int           `json:"clear"`
	ClearDelivered    int           `json:"clearDelivered"`
	Affected          int           `json:"affected"`
	AffectedDelivered int           `json:"affectedDelivered"`
}

// SplitByChurn computes the ChurnSplit of rep's accepted messages over windows.
func SplitByChurn(rep *Report, windows []Window, margin time.Duration) ChurnSplit {
	s := ChurnSplit{Margin: margin}
	for _, m := range rep.Samples {
		if !m.Accepted {
			continue
		}
		at := rep.Start.Add(m.SentAt)
		affected := false
		for _, w := range windows {
			if at.After(w.From.Add(-margin)) && at.Before(w.To.Add(margin)) {
				affected = true
				break
			}
		}
		switch {
		case affected:
			s.Affected++
			if m.Delivered {
				s.AffectedDelivered++
			}
		default:
			s.Clear++
			if m.Delivered {
				s.ClearDelivered++
			}
		}
	}
	return s
}

// String renders the split for the text report.
func (s ChurnSplit) String() string {
	ratio := func(d, n int) float64 {
		if n == 0 {
			return 0
		}
		return 100 * float64(d) / float64(n)
	}
	return fmt.Sprintf("sent while every node was up (±%s): %d of %d delivered (%.2f %%); while a node was down: %d of %d (%.2f %%)",
		s.Margin, s.ClearDelivered, s.Clear, ratio(s.ClearDelivered, s.Clear), s.AffectedDelivered, s.Affected, ratio(s.AffectedDelivered, s.Affected))
}
