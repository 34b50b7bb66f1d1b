package main

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestObserveAnalyzePatient: on a capture of patient senders whose counts leak (two senders
// with fixed correspondents, in bursts, no cover), analyze's counting attacks rank every
// correspondent first, in the text and in the JSON report.
func TestObserveAnalyzePatient(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	rep := &bench.Report{Start: t0}
	var tx []observe.Transmission
	seq := 0
	// Senders 1 and 2 write to 6 and 5 over relayers 3 and 4, each in its own bursts of 10 s
	// at 2 messages a second; relayer 4 sends a loop every second throughout.
	for ms := 0; ms < 200_000; ms += 500 {
		at := time.Duration(ms) * time.Millisecond
		if ms%1000 == 0 {
			tx = append(tx, observe.Transmission{Time: t0.Add(at + 7*time.Millisecond), From: 4, To: 3, Size: 1554},
				observe.Transmission{Time: t0.Add(at + 40*time.Millisecond), From: 3, To: 4, Size: 1554})
		}
		for _, p := range []struct{ s, r, period int }{{1, 6, 20_000}, {2, 5, 34_000}} {
			if ms%p.period >= 10_000 {
				continue
			}
			hops := [][2]int{{p.s, 3}, {3, 4}, {4, p.r}}
			for h, hop := range hops {
				tx = append(tx, observe.Transmission{Time: t0.Add(at + time.Duration(h*60+p.s)*time.Millisecond), From: hop[0], To: hop[1], Size: 1554})
			}
			rep.Samples = append(rep.Samples, bench.Sample{Seq: seq, Sender: p.s, Recipient: p.r, SentAt: at, Accepted: true, Delivered: true, Latency: 130 * time.Millisecond})
			seq++
		}
	}
	if err := writeJSONL(filepath.Join(dir, captureFile), tx); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONL(filepath.Join(dir, truthFile), truthOf(rep)); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := observeMain(context.Background(), []string{"analyze", "--dir", dir, "--maxScored", "50"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"patient observer: message packets into and out of 6 hosts", "k=25: ", "/ 100.0 % of 2 (5.0× random)", "activity per 5s window"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := observeMain(context.Background(), []string{"analyze", "--dir", dir, "--maxScored", "50", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got observe.Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	lt := got.LongTerm
	if lt.Nodes != 6 || len(lt.SenderSDA) != 4 || lt.SenderSDA[1].K != 50 || lt.SenderSDA[1].Residual != 1 || lt.RecipientSDA[1].Residual != 1 ||
		lt.SenderActivity.Residual.Balanced < 0.9 {
		t.Errorf("long-term report %+v", lt)
	}
}
