package sim

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/token"
)

// issue26 is the workload of issue 26 on a network like the namespace network's: 20 nodes,
// 10 senders each writing to a fixed correspondent among the 10 others in bursts of 2 msg/s
// (mean on 10 s, off 10 s: about 3,000 messages in 300 s), 100 ms of mixing, 3 relayers,
// 8 channels, loops at 1/s.
func issue26(t *testing.T, seed uint64) Config {
	t.Helper()
	c := DefaultConfig()
	c.Nodes, c.Senders, c.Recipients = 20, 10, 10
	c.Fixed, c.BurstRate, c.BurstOn, c.BurstOff = true, 2, 10*time.Second, 10*time.Second
	c.Duration = 300 * time.Second
	c.LatencyMin, c.LatencyMax = 100*time.Microsecond, 300*time.Microsecond
	c.ProcessingMin, c.ProcessingMax = 300*time.Microsecond, 2*time.Millisecond
	c.MixDelayMean, c.MixDelayMax = 100*time.Millisecond, 0
	c.Relayers, c.MaxChannels = 3, 8
	c.Balance = token.Tokens(1000).Big()
	c.CoverRate = 1
	c.MaxScored = 20
	c.Seed = seed
	return c
}

func TestWithShape(t *testing.T) {
	base := DefaultConfig()
	for _, tc := range []struct {
		shape    Shape
		send     float64
		loops    bool
		drop     float64
		reemit   bool
		streams  bool
		rejected bool
	}{
		{shape: ShapeToday},
		{shape: ShapeDrop, drop: 5, streams: true},
		{shape: ShapeLoopStream, send: 5, loops: true, streams: true},
		{shape: ShapeStream, send: 5, streams: true},
		{shape: ShapeReemit, reemit: true},
		{shape: ShapeFull, send: 5, reemit: true, streams: true},
		{shape: "constant", rejected: true},
	} {
		c, err := base.WithShape(tc.shape, 5)
		if tc.rejected {
			if !errors.Is(err, ErrBadConfig) {
				t.Errorf("%s: %v, want ErrBadConfig", tc.shape, err)
			}
			continue
		}
		if err != nil || c.SendRate != tc.send || c.StreamLoops != tc.loops || c.DropRate != tc.drop || c.Reemit != tc.reemit ||
			tc.shape.Streams() != tc.streams || c.CoverRate != base.CoverRate {
			t.Errorf("%s: %+v, %v", tc.shape, c, err)
		}
		if _, err := base.WithShape(tc.shape, 0); tc.streams != (err != nil) {
			t.Errorf("%s at send rate 0: %v", tc.shape, err)
		}
	}
}

// TestPatientSenders: each sender writes only to its correspondent (distinct ones), about
// 2 msg/s half of the time.
func TestPatientSenders(t *testing.T) {
	cfg := issue26(t, 1)
	cfg.CoverRate, cfg.Observe = 0, true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	_, truth := s.Observed()
	corr := map[int]int{}
	to := map[int]bool{}
	for _, m := range truth {
		if c, ok := corr[m.Sender]; ok && c != m.Recipient {
			t.Fatalf("sender %d wrote to %d and %d", m.Sender, c, m.Recipient)
		}
		corr[m.Sender] = m.Recipient
		to[m.Recipient] = true
		if m.Sender >= 10 || m.Recipient < 10 {
			t.Fatalf("message %+v: senders are nodes 0-9, recipients 10-19", m)
		}
	}
	if len(corr) != 10 || len(to) != 10 {
		t.Errorf("correspondents %v: want 10 distinct", corr)
	}
	if want := 10 * 2 * 0.5 * 300.0; math.Abs(float64(r.Messages)-want) > 0.25*want || r.Delivered != r.Messages || !r.Fixed {
		t.Errorf("%d messages, %d delivered: want about %.0f, all delivered", r.Messages, r.Delivered, want)
	}
	cfg.BurstRate = 0
	if _, err := New(cfg); !errors.Is(err, ErrBadConfig) {
		t.Errorf("burst rate 0: %v", err)
	}
}

// TestStreamIsConstant: with a stream every tick sends one packet, a message or cover, so a
// node sends SendRate packets a second whatever its messages; a message waits for a tick; a
// recipient re-emits once per message; drop cover ends at a node that drops it.
func TestStreamIsConstant(t *testing.T) {
	cfg, err := issue26(t, 2).WithShape(ShapeFull, 5)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration = 100 * time.Second
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	ticks := float64(r.DropSent - r.Reemitted + r.Accepted)
	if want := 5 * 20 * cfg.Duration.Seconds(); math.Abs(ticks-want) > 0.05*want {
		t.Errorf("%.0f stream packets (drop %d, re-emitted %d, messages %d), want about %.0f", ticks, r.DropSent, r.Reemitted, r.Accepted, want)
	}
	if r.Reemitted != r.Delivered || r.DropReceived != r.DropSent || r.Delivered != r.Accepted {
		t.Errorf("re-emitted %d for %d delivered of %d; drop received %d of %d", r.Reemitted, r.Delivered, r.Accepted, r.DropReceived, r.DropSent)
	}
	// A message waits for its sender's next tick: at 2 msg/s into a stream of 5/s, about
	// 1/(5−2) s while a burst lasts.
	if r.QueueMean < 150*time.Millisecond || r.QueueMean > 500*time.Millisecond {
		t.Errorf("mean queueing delay %v, want about 1/3 s", r.QueueMean)
	}
	// Every node's packets on the links: its stream, its loops and re-emissions, each over 4
	// links (3 relayers), relayed by others.
	if want := (5 + 1 + 1) * 4.0; math.Abs(r.PacketsPerNode-want) > 0.1*want {
		t.Errorf("%.1f packets/s per node, want about %.0f", r.PacketsPerNode, want)
	}
}

// sdaAt returns the better formulation's top-1 at k.
func sdaAt(rs []observe.SDAResult, k int) float64 {
	for _, r := range rs {
		if r.K == k {
			return r.Best()
		}
	}
	return math.NaN()
}

// TestPatientObserverToday: today's sending is linked: the SDA ranks the correspondents first
// after 50 messages, on both sides, and activity is told right.
func TestPatientObserverToday(t *testing.T) {
	r, err := RunShape(issue26(t, 1), ShapeToday, 0, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("today: senders %v, recipients %v, activity %.2f/%.2f", r.SenderSDA, r.RecipientSDA, r.SenderActivity.Best(), r.RecipientActivity.Best())
	for _, side := range [][]observe.SDAResult{r.SenderSDA, r.RecipientSDA} {
		if sdaAt(side, 50) < 0.8 || sdaAt(side, 200) < 0.9 || side[3].Scored < 8 {
			t.Errorf("SDA %+v: want at least 0.8 after 50 messages, 0.9 after 200", side)
		}
	}
	if r.SenderActivity.Best() < 0.8 || r.RecipientActivity.Best() < 0.8 {
		t.Errorf("activity %.2f (senders), %.2f (recipients): want at least 0.8", r.SenderActivity.Best(), r.RecipientActivity.Best())
	}
}

// TestPatientObserverLoopStream: real packets taking the place of loops still lose the
// correspondents: a missing loop shows in out − in.
func TestPatientObserverLoopStream(t *testing.T) {
	r, err := RunShape(issue26(t, 1), ShapeLoopStream, 5, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loop stream: senders %v, activity %.2f", r.SenderSDA, r.SenderActivity.Best())
	if sdaAt(r.SenderSDA, 200) < 0.6 || r.SenderActivity.Best() < 0.7 {
		t.Errorf("SDA after 200 messages %.2f, activity %.2f: want the loops' absence found", sdaAt(r.SenderSDA, 200), r.SenderActivity.Best())
	}
}

// TestPatientObserverFullDesign: the stream with drop cover and re-emission at 10/s leaves
// the SDA near a random guess on both sides and activity near chance, at a p50 under 500 ms.
func TestPatientObserverFullDesign(t *testing.T) {
	r, err := RunShape(issue26(t, 1), ShapeFull, 10, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full: senders %v, recipients %v, activity %.2f/%.2f, p50 %v, queue %v", r.SenderSDA, r.RecipientSDA, r.SenderActivity.Best(), r.RecipientActivity.Best(), r.LatencyP50, r.QueueMean)
	for _, side := range [][]observe.SDAResult{r.SenderSDA, r.RecipientSDA} {
		if top, k := sdaAt(side, 200), side[3]; top > 3*r.Random || k.Scored < 25 {
			t.Errorf("SDA after 200 messages %.3f over %d targets: want near random (%.3f)", top, k.Scored, r.Random)
		}
	}
	if r.SenderActivity.Best() > 0.6 {
		t.Errorf("sender activity %.2f: want near chance", r.SenderActivity.Best())
	}
	if r.LatencyP50 > 500*time.Millisecond || r.Delivery < 0.99 {
		t.Errorf("p50 %v, delivery %.3f", r.LatencyP50, r.Delivery)
	}
}
