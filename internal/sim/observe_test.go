package sim

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/observe"
)

// lan is a small network with the latency of the namespace network's bridge, observed.
func lan(t *testing.T, mutate func(*Config)) Config {
	t.Helper()
	return small(t, func(c *Config) {
		c.Nodes, c.Senders, c.Recipients, c.Rate = 16, 8, 4, 80
		c.Duration = 10 * time.Second
		c.LatencyMin, c.LatencyMax = 100*time.Microsecond, 500*time.Microsecond
		c.MixDelayMax = 0
		c.Observe = true
		if mutate != nil {
			mutate(c)
		}
	})
}

// warmObserved is a network at the end of its warmup, observed, with no traffic yet.
func warmObserved(t *testing.T, mutate func(*Config)) *Sim {
	t.Helper()
	s, err := New(lan(t, mutate))
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	s.runUntil(s.cfg.Warmup - time.Millisecond)
	s.trafficTo = 0 // no traffic of its own: the test sends
	return s
}

// drain runs s until nothing is in flight.
func drain(s *Sim) { s.runUntil(s.now + 10*time.Second) }

// frames splits what the observer saw into packets and acks, each by time.
func frames(t *testing.T, tx []observe.Transmission) (packets, acks []observe.Transmission) {
	t.Helper()
	for _, x := range tx {
		switch x.Size {
		case FrameSize:
			packets = append(packets, x)
		case AckSize:
			acks = append(acks, x)
		default:
			t.Fatalf("a transmission of %d bytes: every one is a frame (%d) or an ack (%d)", x.Size, FrameSize, AckSize)
		}
	}
	byTime := func(a, b observe.Transmission) int { return a.Time.Compare(b.Time) }
	slices.SortFunc(packets, byTime)
	slices.SortFunc(acks, byTime)
	return packets, acks
}

// checkChain checks that packets go hop by hop from 'from' to 'to' over 2 or 3 relayers,
// each acknowledged by its receiver after the link's latency and a processing time.
func checkChain(t *testing.T, s *Sim, packets, acks []observe.Transmission, from, to int) {
	t.Helper()
	if len(packets) < 3 || len(packets) > 4 || len(acks) != len(packets) {
		t.Fatalf("%d packets and %d acks: want 3 or 4 links (2 or 3 relayers), each acknowledged", len(packets), len(acks))
	}
	if packets[0].From != from || packets[len(packets)-1].To != to {
		t.Fatalf("packets %+v: want from %d to %d", packets, from, to)
	}
	seen := map[int]bool{}
	for i, p := range packets {
		if i > 0 && p.From != packets[i-1].To {
			t.Fatalf("packet %d leaves %d, the one before went to %d", i, p.From, packets[i-1].To)
		}
		if i < len(packets)-1 {
			if seen[p.To] || p.To == from || p.To == to {
				t.Fatalf("relayer %d twice, or an end: %+v", p.To, packets)
			}
			seen[p.To] = true
		}
		a := acks[i]
		d := a.Time.Sub(p.Time) - s.latency(p.From, p.To)
		if a.From != p.To || a.To != p.From || d < s.cfg.ProcessingMin || d > s.cfg.ProcessingMax {
			t.Fatalf("ack %+v of packet %+v: want back over the link after a processing time in [%v, %v], got %v",
				a, p, s.cfg.ProcessingMin, s.cfg.ProcessingMax, d)
		}
	}
}

func TestOneMessageOnTheWire(t *testing.T) {
	s := warmObserved(t, nil)
	s.send(1, 9)
	drain(s)
	tx, truth := s.Observed()
	packets, acks := frames(t, tx)
	checkChain(t, s, packets, acks, 1, 9)
	if len(truth) != 1 || truth[0].Sender != 1 || truth[0].Recipient != 9 || truth[0].Sent != packets[0].Time {
		t.Fatalf("ground truth %+v: want the one message from 1 to 9, sent when its first packet left", truth)
	}
	last := packets[len(packets)-1]
	if got, want := truth[0].Delivered, acks[len(acks)-1].Time; !got.Equal(want) {
		t.Fatalf("delivered at %v, want when the recipient processed it and acknowledged (%v)", got, want)
	}
	if truth[0].Delivered.Before(last.Time.Add(s.latency(last.From, last.To))) {
		t.Fatalf("delivered %v before the last packet arrived", truth[0].Delivered)
	}
}

func TestCoverLoopsComeBackAndAreNotMessages(t *testing.T) {
	s := warmObserved(t, nil)
	s.sendCover(13)
	drain(s)
	tx, truth := s.Observed()
	packets, acks := frames(t, tx)
	checkChain(t, s, packets, acks, 13, 13)
	if len(truth) != 0 || s.st.coverSent != 1 || s.st.coverReturned != 1 || s.st.delivered != 0 || s.st.messageBytes != 0 {
		t.Fatalf("ground truth %v, cover sent %d returned %d, delivered %d, message bytes %d: a loop is cover, not a message",
			truth, s.st.coverSent, s.st.coverReturned, s.st.delivered, s.st.messageBytes)
	}
	if want := int64(len(packets)*FrameSize + len(acks)*AckSize); s.st.coverBytes != want {
		t.Fatalf("cover bytes %d, want %d", s.st.coverBytes, want)
	}
	// A loop is paid like a message: the first ticket covers every relayer.
	if s.st.coverPaid != len(packets)-1 {
		t.Fatalf("paid %d relayers' tickets for a loop over %d", s.st.coverPaid, len(packets)-1)
	}
}

func TestCoverTrafficInARun(t *testing.T) {
	const rate = 4
	cfg := lan(t, func(c *Config) { c.CoverRate = rate })
	r := run(t, cfg)
	want := rate * float64(cfg.Nodes) * cfg.Duration.Seconds()
	if math.Abs(float64(r.CoverSent+r.CoverNoPath)-want) > 0.1*want || r.CoverReturned != r.CoverSent || r.CoverNoPath > r.CoverSent/20 {
		t.Fatalf("%d loops sent, %d without a path, %d returned: want about %.0f, all back", r.CoverSent, r.CoverNoPath, r.CoverReturned, want)
	}
	bare := run(t, lan(t, nil))
	if r.Delivered != bare.Delivered || r.CoverShare < 0.2 || bare.CoverShare != 0 || r.BytesPerNode <= bare.BytesPerNode || r.CoverTokens <= 0 {
		t.Fatalf("with cover: %d delivered, %.0f B/s per node, %.2f cover, %.3g tokens; without: %d, %.0f B/s, %.2f",
			r.Delivered, r.BytesPerNode, r.CoverShare, r.CoverTokens, bare.Delivered, bare.BytesPerNode, bare.CoverShare)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(); err != nil {
		t.Fatal(err)
	}
	tx, truth := s.Observed()
	var bytes int
	for _, x := range tx {
		bytes += x.Size
	}
	if got := float64(bytes) / float64(cfg.Nodes) / cfg.Duration.Seconds(); math.Abs(got-r.BytesPerNode) > 1e-6*got {
		t.Fatalf("bytes per node %.1f, the observer saw %.1f", r.BytesPerNode, got)
	}
	if len(truth) != r.Accepted {
		t.Fatalf("ground truth of %d messages, %d accepted: loops are not in it", len(truth), r.Accepted)
	}
}

func TestMixingDelayDraws(t *testing.T) {
	const ms = time.Millisecond
	for name, tc := range map[string]struct {
		min, mean, max, lo, hi, avg time.Duration
	}{
		"exponential, capped at min + 10 × mean": {5 * ms, 10 * ms, 0, 5 * ms, 105 * ms, 15 * ms},
		"exponential, capped at max":             {0, 10 * ms, 12 * ms, 0, 12 * ms, 7 * ms}, // 10 × (1 − e^-1.2)
		"uniform":                                {2 * ms, 0, 20 * ms, 2 * ms, 20 * ms, 11 * ms},
		"constant":                               {3 * ms, 0, 0, 3 * ms, 3 * ms, 3 * ms},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := New(small(t, func(c *Config) { c.MixDelayMin, c.MixDelayMean, c.MixDelayMax = tc.min, tc.mean, tc.max }))
			if err != nil {
				t.Fatal(err)
			}
			const n = 20000
			var sum time.Duration
			for range n {
				d := s.mixDelay()
				if d < tc.lo || d > tc.hi {
					t.Fatalf("delay %v outside [%v, %v]", d, tc.lo, tc.hi)
				}
				sum += d
			}
			if avg := sum / n; math.Abs(float64(avg-tc.avg)) > 0.03*float64(tc.avg) {
				t.Fatalf("mean delay %v, want about %v", avg, tc.avg)
			}
		})
	}
}

// samePrivacy compares two observer reports; entropies to 1e-9 (observe sums its
// probabilities in map order, so the last bits vary).
func samePrivacy(a, b *observe.Report) bool {
	if a == nil || b == nil {
		return a == b
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(x)) }
	for _, p := range [][2]*observe.AttackResult{{&a.Timing, &b.Timing}, {&a.Size, &b.Size}} {
		x, y := p[0], p[1]
		if !near(x.MeanEntropy, y.MeanEntropy) || !near(x.Top1, y.Top1) || len(x.PerMessage) != len(y.PerMessage) {
			return false
		}
		for i := range x.PerMessage {
			m, n := x.PerMessage[i], y.PerMessage[i]
			if m.Index != n.Index || !near(m.Entropy, n.Entropy) || !near(m.Top1, n.Top1) {
				return false
			}
		}
	}
	return a.Messages == b.Messages && a.Senders == b.Senders && reflect.DeepEqual(a.SizeClasses, b.SizeClasses)
}

func TestObservedRunIsStillAPureFunctionOfItsConfig(t *testing.T) {
	cfg := lan(t, func(c *Config) { c.MixDelayMean, c.CoverRate = 10*time.Millisecond, 2 })
	a, b := run(t, cfg), run(t, cfg)
	if a.Privacy == nil || !samePrivacy(a.Privacy, b.Privacy) {
		t.Fatalf("same config, different observers:\n%+v\n%+v", a.Privacy, b.Privacy)
	}
	a.Privacy, b.Privacy = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same config, different reports:\n%+v\n%+v", a, b)
	}
	cfg.Seed++
	if c := run(t, cfg); samePrivacy(c.Privacy, b.Privacy) {
		t.Fatalf("another seed, the same observer report: %+v", c.Privacy)
	}
	// The observer only watches: the run is the same without it.
	cfg.Seed--
	cfg.Observe = false
	if c := run(t, cfg); !reflect.DeepEqual(a, c) {
		t.Fatalf("observing changed the run:\n%+v\n%+v", a, c)
	}
}

// TestWithoutMixingTheObserverLinks: no mixing, no cover and messages far apart: the observer
// finds the sender of at least 90 % of them.
func TestWithoutMixingTheObserverLinks(t *testing.T) {
	r := run(t, lan(t, func(c *Config) { c.Rate, c.Duration = 2, 60*time.Second }))
	p := r.Privacy
	if p == nil || p.Messages < 100 || p.Timing.Top1 < 0.9 {
		t.Fatalf("observer %+v: want at least 100 messages scored, top-1 at least 0.9", p)
	}
}

// TestMixingAndCoverHide: across a small grid, more mixing raises the observer's entropy and
// lowers its top-1 rate, and cover traffic raises the entropy.
func TestMixingAndCoverHide(t *testing.T) {
	means := []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}
	covers := []float64{0, 5}
	h := make([][]float64, len(covers))
	top := make([][]float64, len(covers))
	for i, c := range covers {
		for _, m := range means {
			r := run(t, lan(t, func(cfg *Config) { cfg.MixDelayMean, cfg.CoverRate = m, c }))
			t.Logf("mean %v, cover %v: entropy %.2f bits, top-1 %.3f, p50 %v", m, c, r.Privacy.Timing.MeanEntropy, r.Privacy.Timing.Top1, r.LatencyP50)
			h[i] = append(h[i], r.Privacy.Timing.MeanEntropy)
			top[i] = append(top[i], r.Privacy.Timing.Top1)
		}
		for j := 1; j < len(means); j++ {
			if h[i][j] <= h[i][j-1] || top[i][j] >= top[i][j-1] {
				t.Errorf("cover %v: entropy %v and top-1 %v over means %v: want rising and falling", c, h[i], top[i], means)
			}
		}
	}
	for j := range means {
		if h[1][j] <= h[0][j] {
			t.Errorf("mean %v: entropy %.2f with cover, %.2f without", means[j], h[1][j], h[0][j])
		}
	}
}
