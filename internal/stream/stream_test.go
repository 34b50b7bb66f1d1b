package stream

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/wait"
)

// timer is one timer the stream asked for: its duration, and the channel the test fires.
type timer struct {
	d    time.Duration
	fire chan time.Time
}

// harness runs a Stream over fakes: the test fires the timers and counts the drops.
type harness struct {
	s      *Stream
	rate   atomic.Value // float64
	kick   chan struct{}
	timers chan timer
	drops  atomic.Int64
	failDr atomic.Pointer[error]
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t *testing.T, rate float64, reemitMean time.Duration) *harness {
	t.Helper()
	h := &harness{kick: make(chan struct{}, 1), timers: make(chan timer, 64), done: make(chan error, 1)}
	h.rate.Store(rate)
	s, err := New(Config{
		Rate: func() float64 { return h.rate.Load().(float64) },
		Kick: h.kick,
		Drop: func(context.Context) (relay.Sent, error) {
			if err := h.failDr.Load(); err != nil {
				return relay.Sent{}, *err
			}
			h.drops.Add(1)
			return relay.Sent{}, nil
		},
		ReemitDelay: func() time.Duration { return reemitMean },
		Timer: func(d time.Duration) (<-chan time.Time, func() bool) {
			c := make(chan time.Time, 1)
			h.timers <- timer{d, c}
			return c, func() bool { return true }
		},
		Rand:       rand.New(rand.NewChaCha8([32]byte{3})),
		Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() { h.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.done
	})
	return h
}

// nextTimer waits for the stream to ask for a timer.
func (h *harness) nextTimer(t *testing.T) timer {
	t.Helper()
	select {
	case tm := <-h.timers:
		return tm
	case <-time.After(5 * time.Second):
		t.Fatal("the stream asked for no timer")
		return timer{}
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func (h *harness) sent(kind string) float64 { return counterValue(h.s.m.sent.WithLabelValues(kind)) }

// TestRealPacketTakesTheSlot: a real packet waits for the next tick and goes in its place; a
// tick with nothing waiting sends drop cover. One packet a tick, whatever waits.
func TestRealPacketTakesTheSlot(t *testing.T) {
	h := newHarness(t, 5, 0)
	first := h.nextTimer(t)
	var ran atomic.Int64
	results := make(chan error, 2)
	for range 2 {
		go func() {
			results <- h.s.Do(t.Context(), func(context.Context) error { ran.Add(1); return nil })
		}()
	}
	wait.For(t, func() bool { return h.s.queued() == 2 }, 5*time.Second, "two packets queued")
	if ran.Load() != 0 {
		t.Fatal("a real packet went before its slot")
	}
	first.fire <- time.Now()
	if err := <-results; err != nil {
		t.Fatal(err)
	}
	second := h.nextTimer(t)
	if ran.Load() != 1 || h.drops.Load() != 0 {
		t.Fatalf("after one tick: %d real packets, %d drops; want 1 and 0", ran.Load(), h.drops.Load())
	}
	second.fire <- time.Now()
	if err := <-results; err != nil {
		t.Fatal(err)
	}
	third := h.nextTimer(t)
	third.fire <- time.Now()
	h.nextTimer(t)
	wait.For(t, func() bool { return h.drops.Load() == 1 }, 5*time.Second, "the empty slot's drop")
	if ran.Load() != 2 || h.sent(kindReal) != 2 || h.sent(kindDrop) != 1 {
		t.Fatalf("%d real, %d drops (metrics %v real, %v drop)", ran.Load(), h.drops.Load(), h.sent(kindReal), h.sent(kindDrop))
	}
}

// TestIntervalsArePoisson: the stream's intervals are exponential with mean 1/rate (a Poisson
// process): their mean and coefficient of variation over many ticks; a new rate applies at once.
func TestIntervalsArePoisson(t *testing.T) {
	h := newHarness(t, 4, 0)
	const n = 2000
	var sum, sumSq float64
	for range n {
		tm := h.nextTimer(t)
		x := tm.d.Seconds()
		sum += x
		sumSq += x * x
		tm.fire <- time.Now()
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	// The mean of n exponentials has standard deviation mean/√n: 0.25/44.7 ≈ 0.0056.
	if math.Abs(mean-0.25) > 0.025 || math.Abs(sd/mean-1) > 0.1 {
		t.Fatalf("intervals: mean %.4f s (want 0.25), coefficient of variation %.3f (want 1)", mean, sd/mean)
	}
	h.rate.Store(20.0)
	h.kick <- struct{}{}
	sum = 0
	// The timer drawn before the kick is dropped: take the ones after it.
	h.nextTimer(t)
	for range 500 {
		tm := h.nextTimer(t)
		sum += tm.d.Seconds()
		tm.fire <- time.Now()
	}
	if mean := sum / 500; math.Abs(mean-0.05) > 0.01 {
		t.Fatalf("after the rate changed to 20/s: mean interval %.4f s", mean)
	}
}

// TestStreamOff: with the rate at 0 a real packet goes at once, and no drop or re-emission is
// sent.
func TestStreamOff(t *testing.T) {
	h := newHarness(t, 0, 0)
	ran := false
	if err := h.s.Do(t.Context(), func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("Do with the stream off: %v, ran %v", err, ran)
	}
	h.s.Reemit()
	select {
	case tm := <-h.timers:
		t.Fatalf("the stream asked for a %v timer while off", tm.d)
	case <-time.After(50 * time.Millisecond):
	}
	if h.drops.Load() != 0 {
		t.Fatalf("%d drops while off", h.drops.Load())
	}
}

// TestCancelledPacketLeavesTheQueue: a real packet whose context ends before its slot is not
// sent; the slot sends drop cover instead, and Do says why.
func TestCancelledPacketLeavesTheQueue(t *testing.T) {
	h := newHarness(t, 5, 0)
	tm := h.nextTimer(t)
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan error, 1)
	go func() {
		res <- h.s.Do(ctx, func(context.Context) error { t.Error("a cancelled packet was sent"); return nil })
	}()
	wait.For(t, func() bool { return h.s.queued() == 1 }, 5*time.Second, "queued")
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do after its context ended: %v", err)
	}
	if h.s.queued() != 0 {
		t.Fatal("the cancelled packet is still queued")
	}
	tm.fire <- time.Now()
	wait.For(t, func() bool { return h.drops.Load() == 1 }, 5*time.Second, "a drop in the slot")
}

// TestQueueFull: QueueSize real packets wait; one more is refused at once, the others are sent
// in their slots when the node stops (the stream no longer paces them).
func TestQueueFull(t *testing.T) {
	h := newHarness(t, 1, 0)
	h.nextTimer(t)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range QueueSize {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.s.Do(context.Background(), func(context.Context) error { sent.Add(1); return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wait.For(t, func() bool { return h.s.queued() == QueueSize }, 10*time.Second, "a full queue")
	if err := h.s.Do(t.Context(), func(context.Context) error { return nil }); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Do on a full queue: %v", err)
	}
	h.cancel()
	<-h.done
	h.done <- nil // for the cleanup
	wg.Wait()
	if sent.Load() != QueueSize {
		t.Fatalf("%d of %d waiting packets sent when the stream stopped", sent.Load(), QueueSize)
	}
}

// TestReemit: a received packet is re-emitted as one drop after a delay drawn from an
// exponential of the mixing mean; a failed drop is counted by its reason.
func TestReemit(t *testing.T) {
	h := newHarness(t, 5, 100*time.Millisecond)
	h.nextTimer(t) // the stream's tick, left unfired
	const n = 400
	for range n {
		h.s.Reemit()
	}
	var sum float64
	for range n {
		tm := h.nextTimer(t)
		sum += tm.d.Seconds()
		tm.fire <- time.Now()
	}
	wait.For(t, func() bool { return h.sent(kindReemit) == n }, 5*time.Second, "every re-emission")
	if mean := sum / n; math.Abs(mean-0.1) > 0.015 {
		t.Fatalf("re-emission delays: mean %.4f s, want 0.1", mean)
	}
	fail := error(router.ErrNotEnoughBalance)
	h.failDr.Store(&fail)
	h.s.Reemit()
	h.nextTimer(t).fire <- time.Now()
	wait.For(t, func() bool { return counterValue(h.s.m.skipped.WithLabelValues(reasonNoBalance)) == 1 }, 5*time.Second,
		"the failed re-emission counted")
}
