package relayload

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/tickets"
)

const exposition = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
relayd_relay_packets_received_total 1000
relayd_relay_packets_forwarded_total 990
relayd_relay_packets_delivered_total 3
relayd_relay_tickets_acknowledged_total 980
relayd_relay_packets_dropped_total{reason="mac"} 0
relayd_relay_packets_dropped_total{reason="overload"} 7
relayd_relay_packets_dropped_total{reason="send_failed"} 3
relayd_relay_acks_dropped_total{reason="overload"} 2
relayd_relay_packets_forwarded_totalx 5
go_goroutines 74
`

func TestParseSnapshot(t *testing.T) {
	at := time.Unix(100, 0)
	s, err := ParseSnapshot(strings.NewReader(exposition), at)
	if err != nil {
		t.Fatal(err)
	}
	if s.At != at || s.CPUSeconds != 12.5 || s.Received != 1000 || s.Forwarded != 990 || s.Delivered != 3 || s.TicketsAcked != 980 {
		t.Fatalf("counters: %+v", s)
	}
	if s.Dropped["overload"] != 7 || s.Dropped["send_failed"] != 3 || s.Dropped["mac"] != 0 || s.DroppedTotal() != 10 {
		t.Fatalf("dropped: %v", s.Dropped)
	}
	if s.AcksDropped["overload"] != 2 || len(s.AcksDropped) != 1 {
		t.Fatalf("acks dropped: %v", s.AcksDropped)
	}
	if _, err := ParseSnapshot(strings.NewReader("relayd_relay_packets_forwarded_total x\n"), at); err == nil {
		t.Fatal("a bad value parsed")
	}
}

func TestLabelValue(t *testing.T) {
	for _, c := range []struct{ labels, want string }{
		{`reason="mac"}`, "mac"},
		{`peer="a",reason="overload"}`, "overload"},
		{`peer="a"}`, ""},
		{`}`, ""},
	} {
		if got := labelValue(c.labels, "reason"); got != c.want {
			t.Errorf("labelValue(%q) = %q, want %q", c.labels, got, c.want)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	const stat = "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 1 4 50 2 1 1 3 0 0\ncpu1 5 0 6 50 0 0 0 0 0 0\nintr 1 2\n"
	busy, total, err := parseProcStat(strings.NewReader(stat), 0)
	if err != nil {
		t.Fatal(err)
	}
	if busy != 5+1+4+1+1+3 || total != busy+50+2 {
		t.Fatalf("cpu0: busy %v total %v", busy, total)
	}
	if _, _, err := parseProcStat(strings.NewReader(stat), 2); err == nil {
		t.Fatal("cpu2 found")
	}
}

// snap is a relayer scrape at second sec with forwarded packets and cpu seconds.
func snap(sec float64, forwarded, cpu float64) Snapshot {
	return Snapshot{At: time.Unix(0, 0).Add(time.Duration(sec * float64(time.Second))), Forwarded: forwarded, CPUSeconds: cpu,
		Dropped: map[string]float64{}, AcksDropped: map[string]float64{}}
}

func TestCompute(t *testing.T) {
	s := []Snapshot{
		snap(0, 100, 10),
		snap(0.5, 2100, 10.25),
		snap(1, 4100, 10.5),
		snap(1.5, 6100, 10.75),
		snap(2, 8100, 11), // the window ends here: later scrapes show no more forwarding
		snap(2.5, 8100, 11.01),
		snap(3, 8100, 11.02),
	}
	s[0].Dropped["overload"], s[6].Dropped["overload"] = 5, 9
	s[0].AcksDropped["overload"] = 1
	s[6].AcksDropped["overload"] = 1
	s[0].TicketsAcked, s[6].TicketsAcked = 50, 8050
	s[0].Received, s[6].Received = 100, 8104
	for i := range s { // 90 % busy: 45 of every 50 ticks
		s[i].CPUBusy, s[i].CPUTotal = 1000+45*float64(i), 5000+50*float64(i)
	}
	rec0, rec1 := Snapshot{Delivered: 7, CPUSeconds: 3}, Snapshot{Delivered: 8007, CPUSeconds: 3.4}
	r, err := Compute(s, rec0, rec1, 8000, 2*time.Second, 3, 8000)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return got > want-1e-6 && got < want+1e-6 }
	if r.Window != 2*time.Second || r.Forwarded != 8000 || !near(r.ForwardedPerSec, 4000) {
		t.Errorf("window %v forwarded %v rate %v", r.Window, r.Forwarded, r.ForwardedPerSec)
	}
	if !near(r.RelayerCPU, 1) || !near(r.CPUPercent, 50) || !near(r.MicrosPerPacket, 125) {
		t.Errorf("cpu %v (%v %%), %v µs/packet", r.RelayerCPU, r.CPUPercent, r.MicrosPerPacket)
	}
	if !near(r.HostCPUPercent, 90) {
		t.Errorf("host cpu %v %%", r.HostCPUPercent)
	}
	if !near(r.PeakPerSec, 4000) {
		t.Errorf("peak %v", r.PeakPerSec)
	}
	if len(r.Dropped) != 1 || r.Dropped["overload"] != 4 || len(r.AcksDropped) != 0 {
		t.Errorf("dropped %v, acks dropped %v", r.Dropped, r.AcksDropped)
	}
	if r.TicketsAcked != 8000 || r.Received != 8004 || r.Delivered != 8000 || r.AcksReceived != 8000 || r.QueueFullWaits != 3 {
		t.Errorf("counts: %+v", r)
	}
	if !near(r.RecipientCPU, 0.4) || !near(r.RecipientMicrosPerPacket, 50) {
		t.Errorf("recipient cpu %v, %v µs/packet", r.RecipientCPU, r.RecipientMicrosPerPacket)
	}
	if len(r.Timeline) != 4 {
		t.Fatalf("timeline of %d intervals, want 4 (to the end of the window)", len(r.Timeline))
	}
	if iv := r.Timeline[1]; iv.Start != 500*time.Millisecond || iv.Length != 500*time.Millisecond || !near(iv.ForwardedPerSec, 4000) ||
		!near(iv.CPUPercent, 50) || !near(iv.HostCPUPercent, 90) {
		t.Errorf("interval 1: %+v", iv)
	}
	var b strings.Builder
	r.Write(&b)
	r.WriteTimeline(&b)
	for _, want := range []string{"4000 packets/s", "50.0 % of one core, 125.0 µs", "90.0 % busy in all (40.0 % for other", "8000 packets/s", "overload=4", "delivered 8000; its CPU 0.40 s: 50.0 µs per packet it acknowledged"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}

	if _, err := Compute(s[:1], rec0, rec1, 0, 0, 0, 0); err == nil {
		t.Error("one scrape computed")
	}
	// Nothing forwarded: no rate per packet, no division by zero.
	r, err = Compute([]Snapshot{snap(0, 5, 1), snap(1, 5, 1.1)}, rec0, rec0, 0, 0, 0, 0)
	if err != nil || r.MicrosPerPacket != 0 || r.Forwarded != 0 || r.HostCPUPercent != -1 {
		t.Errorf("idle: %+v, %v", r, err)
	}
}

func TestPeakRate(t *testing.T) {
	s := []Snapshot{snap(0, 0, 0), snap(0.5, 1000, 0), snap(1, 1500, 0), snap(1.5, 4500, 0), snap(2, 5000, 0)}
	// Spans of at least 1 s: 0→1 (1500/s), 0.5→1.5 (3500/s), 1→2 (3500/s).
	if got := peakRate(s, time.Second); got != 3500 {
		t.Fatalf("peak %v, want 3500", got)
	}
	if got := peakRate(s[:2], time.Second); got != 0 {
		t.Fatalf("peak of a short series %v, want 0", got)
	}
}

func TestChannelFunding(t *testing.T) {
	v := tickets.PaddedAmount(1, tickets.PadMax)
	got, err := ChannelFunding(1000, tickets.MaxWinProb)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Mul(v.ToBig(), big.NewInt(1000)); got.Cmp(want) != 0 {
		t.Fatalf("at p = 1: %s, want %s", got, want)
	}
	half, err := ChannelFunding(1000, tickets.MaxWinProb/2)
	if err != nil {
		t.Fatal(err)
	}
	if half.Cmp(got) <= 0 {
		t.Fatalf("at p = 0.5: %s, not above %s", half, got)
	}
}

// fakeClock advances only when slept on.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
		c.slept += d
	}
	return ctx.Err()
}

func frames(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte{byte(i)}
	}
	return out
}

func TestPushPaces(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var at []time.Time
	n, waits, err := push(t.Context(), clock, 5000, frames(1000), func([]byte) error {
		at = append(at, clock.Now())
		return nil
	})
	if err != nil || n != 1000 || waits != 0 {
		t.Fatalf("push: %d sent, %d waits, %v", n, waits, err)
	}
	// Frame i is due at i/5000 s: the last at 999 × 200 µs.
	if got, want := at[999].Sub(at[0]), 999*200*time.Microsecond; got != want {
		t.Fatalf("1000 frames at 5000/s took %v, want %v", got, want)
	}
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d != 200*time.Microsecond {
			t.Fatalf("frame %d came %v after the one before", i, d)
		}
	}
}

func TestPushAsFastAsPossible(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	n, _, err := push(t.Context(), clock, 0, frames(100), func([]byte) error { return nil })
	if err != nil || n != 100 || clock.slept != 0 {
		t.Fatalf("rate 0: %d sent, slept %v, %v", n, clock.slept, err)
	}
}

func TestPushWaitsOutAFullQueueInOrder(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var sent []byte
	full := 0
	n, waits, err := push(t.Context(), clock, 0, frames(10), func(f []byte) error {
		if f[0] == 4 && full < 3 { // frame 4 finds the queue full three times
			full++
			return p2p.ErrQueueFull
		}
		sent = append(sent, f[0])
		return nil
	})
	if err != nil || n != 10 || waits != 3 {
		t.Fatalf("push: %d sent, %d waits, %v", n, waits, err)
	}
	if string(sent) != "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09" {
		t.Fatalf("frames went out as %v, want each once in order", sent)
	}
	if clock.slept != 3*queueFullWait {
		t.Fatalf("waited %v, want %v", clock.slept, 3*queueFullWait)
	}
}

// TestAwaitWindow: a frame waits while window frames are unacknowledged, and goes once one is.
func TestAwaitWindow(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var acked atomic.Int64
	if err := awaitWindow(t.Context(), clock, 0, 1000, acked.Load); err != nil || clock.slept != 0 {
		t.Fatalf("no window: slept %v, %v", clock.slept, err)
	}
	if err := awaitWindow(t.Context(), clock, 4, 3, acked.Load); err != nil || clock.slept != 0 {
		t.Fatalf("3 of 4 in flight: slept %v, %v", clock.slept, err)
	}
	polls := 0
	err := awaitWindow(t.Context(), clock, 4, 4, func() int64 {
		if polls++; polls == 3 {
			acked.Store(1)
		}
		return acked.Load()
	})
	if err != nil || clock.slept != 2*windowWait {
		t.Fatalf("4 of 4 in flight until the third look: slept %v, want %v, %v", clock.slept, 2*windowWait, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := awaitWindow(ctx, clock, 4, 10, acked.Load); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestPushStopsOnOtherErrors(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	n, _, err := push(t.Context(), clock, 0, frames(10), func(f []byte) error {
		if f[0] == 6 {
			return p2p.ErrUnreachable
		}
		return nil
	})
	if !errors.Is(err, p2p.ErrUnreachable) || n != 6 {
		t.Fatalf("push: %d sent, %v; want 6 and ErrUnreachable", n, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if n, _, err := push(ctx, clock, 100, frames(10), func([]byte) error { return nil }); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("cancelled push: %d sent, %v", n, err)
	}
}

func TestCheckOrder(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	frame := func(index uint64) []byte {
		tk := tickets.Ticket{Index: index, Epoch: 1, WinProb: tickets.MaxWinProb, Challenge: [20]byte{1}}
		if err := tk.Sign(key, 1337, common.Address{1}); err != nil {
			t.Fatal(err)
		}
		b, err := tk.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return append(make([]byte, relay.MsgFrameLen-len(b)), b...)
	}
	if err := checkOrder([][]byte{frame(1), frame(2), frame(5)}); err != nil {
		t.Fatalf("increasing: %v", err)
	}
	if err := checkOrder([][]byte{frame(1), frame(3), frame(2)}); err == nil {
		t.Fatal("a decreasing index passed")
	}
	if err := checkOrder([][]byte{frame(1), frame(1)}); err == nil {
		t.Fatal("a repeated index passed")
	}
	if err := checkOrder([][]byte{frame(1)[1:]}); err == nil {
		t.Fatal("a short frame passed")
	}
}

func TestConfigCheck(t *testing.T) {
	env := bench.Env{APIToken: "t", ChainRPC: "http://127.0.0.1:1", Nodes: []bench.Node{{Index: 1}, {Index: 2}, {Index: 3}, {Index: 4}}}
	ok := Config{Env: env, Relayer: 2, Recipient: 4, Packets: 10}
	c := ok
	if err := c.check(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if c.Prebuild != 1 || c.TextSize != DefaultTextSize || c.ScrapeInterval != DefaultScrapeInterval || c.Clock == nil || c.HTTP == nil {
		t.Fatalf("defaults not filled: %+v", c)
	}
	for name, mod := range map[string]func(*Config){
		"no packets":        func(c *Config) { c.Packets = 0 },
		"negative rate":     func(c *Config) { c.Rate = -1 },
		"same node":         func(c *Config) { c.Recipient = 2 },
		"relayer 5":         func(c *Config) { c.Relayer = 5 },
		"recipient 0":       func(c *Config) { c.Recipient = 0 },
		"text too long":     func(c *Config) { c.TextSize = 1 << 20 },
		"no chain":          func(c *Config) { c.Env.ChainRPC = "" },
		"watch a bad cpu":   func(c *Config) { c.WatchCPU, c.CPU = true, -1 },
		"negative prebuild": func(c *Config) { c.Prebuild = -1 },
		"negative window":   func(c *Config) { c.Window = -1 },
	} {
		c := ok
		mod(&c)
		if err := c.check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDrained(t *testing.T) {
	withDrops := func(s Snapshot, dropped float64) Snapshot {
		s.Dropped = map[string]float64{"overload": dropped}
		return s
	}
	for _, c := range []struct {
		name    string
		samples []Snapshot
		n       int
		want    bool
	}{
		{"all forwarded and still", []Snapshot{snap(0, 100, 0), snap(1, 105, 0), snap(2, 110, 0), snap(3, 110, 0), snap(4, 110, 0), snap(5, 110, 0)}, 10, true},
		{"all forwarded, still moving", []Snapshot{snap(0, 100, 0), snap(1, 105, 0), snap(2, 110, 0), snap(3, 110, 0), snap(4, 110, 0)}, 10, false},
		{"still, some missing", []Snapshot{snap(0, 100, 0), snap(1, 109, 0), snap(2, 109, 0), snap(3, 109, 0), snap(4, 109, 0)}, 10, false},
		{"drops count as handled", []Snapshot{withDrops(snap(0, 100, 0), 2), snap(1, 104, 0), withDrops(snap(2, 104, 0), 8),
			withDrops(snap(3, 104, 0), 8), withDrops(snap(4, 104, 0), 8)}, 10, true},
		{"fewer than 4 samples", []Snapshot{snap(0, 100, 0), snap(1, 110, 0), snap(2, 110, 0)}, 10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := drained(c.samples, c.n); got != c.want {
				t.Fatalf("drained = %v, want %v", got, c.want)
			}
		})
	}
}

// metricsServer serves the relayer's metrics with forwarded counts fwd, one per scrape, the
// last one repeated.
func metricsServer(t *testing.T, fwd ...int) *httptest.Server {
	var mu sync.Mutex
	i := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		v := fwd[min(i, len(fwd)-1)]
		i++
		mu.Unlock()
		fmt.Fprintf(w, "relayd_relay_packets_forwarded_total %d\n", v)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSample(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name        string
		fwd         []int
		push        pushed
		wantSamples int
		wantErr     error
	}{
		{"until drained", []int{5, 10, 10, 10, 10}, pushed{n: 10}, 6, nil},
		{"a failed push", []int{3}, pushed{n: 3, err: boom}, 0, boom},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := metricsServer(t, c.fwd...)
			r := &run{
				cfg:     Config{Relayer: 2, Clock: &fakeClock{now: time.Unix(1000, 0)}, ScrapeInterval: time.Second, DrainTimeout: time.Minute},
				api:     restClient{http: srv.Client()},
				relayer: bench.Node{Index: 2, APIURL: srv.URL},
			}
			done := make(chan pushed, 1)
			done <- c.push
			samples, res, err := r.sample(t.Context(), snap(0, 0, 0), done)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if len(samples) != c.wantSamples || res.n != c.push.n {
				t.Fatalf("%d samples, %d pushed; want %d samples, %d pushed", len(samples), res.n, c.wantSamples, c.push.n)
			}
		})
	}
}
