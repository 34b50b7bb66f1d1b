package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/observe"
)

// TestObserveAnalyze: a capture and a ground truth written the way bench --observe writes them
// are analysed; with no mixing and one message at a time every message is linked.
func TestObserveAnalyze(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	rep := &bench.Report{Start: t0}
	var tx []observe.Transmission
	for i := range 40 {
		s, r1, r2, rc := 1+i%4, 5+i%3, 8+i%2, 10
		sentAt := time.Duration(i) * 100 * time.Millisecond
		at := t0.Add(sentAt + time.Millisecond)
		for _, hop := range [][2]int{{s, r1}, {r1, r2}, {r2, rc}} {
			tx = append(tx, observe.Transmission{Time: at, From: hop[0], To: hop[1], Size: 1448},
				observe.Transmission{Time: at.Add(30 * time.Microsecond), From: hop[0], To: hop[1], Size: 102},
				observe.Transmission{Time: at.Add(100 * time.Microsecond), From: hop[1], To: hop[0], Size: 79})
			at = at.Add(2 * time.Millisecond)
		}
		rep.Samples = append(rep.Samples, bench.Sample{Seq: i, Sender: s, Recipient: rc, SentAt: sentAt, Accepted: true, Delivered: true, Latency: 8 * time.Millisecond})
	}
	rep.Samples = append(rep.Samples, bench.Sample{Seq: 40, Sender: 1, Recipient: rc(), Accepted: false})
	if err := writeJSONL(filepath.Join(dir, captureFile), tx); err != nil {
		t.Fatal(err)
	}
	truth := truthOf(rep)
	if len(truth) != 40 {
		t.Fatalf("ground truth has %d messages, want the 40 accepted", len(truth))
	}
	if err := writeJSONL(filepath.Join(dir, truthFile), truth); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := observeMain(context.Background(), []string{"analyze", "--dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "40 messages scored, 4 candidate senders") || !strings.Contains(out.String(), "top-1 100.0 %") {
		t.Errorf("output:\n%s", out.String())
	}
	if code := observeMain(context.Background(), []string{"analyze", "--dir", t.TempDir()}, &out, &errb); code != 1 {
		t.Errorf("analyze of an empty directory: exit %d, want 1", code)
	}
	if code := observeMain(context.Background(), []string{"nonsense"}, &out, &errb); code != 2 {
		t.Errorf("unknown subcommand: exit %d, want 2", code)
	}
}

func rc() int { return 10 }
