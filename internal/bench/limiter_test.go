package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock whose Sleep advances the time at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps int
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
		c.sleeps++
	}
}

func TestLimiterRate(t *testing.T) {
	for _, c := range []struct {
		name    string
		rate    float64
		work    time.Duration // the caller's own time per event
		events  int
		wantDur time.Duration // from the first event to the last
	}{
		{"500/s, idle caller", 500, 0, 1000, 999 * 2 * time.Millisecond},
		{"500/s, caller busy 1.5 ms", 500, 1500 * time.Microsecond, 1000, 999*2*time.Millisecond + 1500*time.Microsecond},
		{"500/s, caller slower than the rate", 500, 3 * time.Millisecond, 1000, 999 * 3 * time.Millisecond},
		{"3/s", 3, 0, 10, 9 * 333333333 * time.Nanosecond},
		{"1e6/s", 1e6, 0, 1000, 999 * time.Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			l := NewLimiter(c.rate, 1, clk)
			var first, last time.Time
			for i := range c.events {
				if err := l.Wait(t.Context()); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = clk.Now()
				}
				last = clk.Now()
				clk.advance(c.work)
			}
			got := last.Sub(first)
			if c.work > 0 && c.work < time.Second/time.Duration(c.rate) {
				got += c.work // the last event's work
			}
			if diff := got - c.wantDur; diff < -time.Microsecond || diff > time.Microsecond {
				t.Fatalf("%d events took %v, want %v", c.events, got, c.wantDur)
			}
			rate := float64(c.events-1) / last.Sub(first).Seconds()
			if c.work*time.Duration(c.rate) <= time.Second && (rate < c.rate*0.999 || rate > c.rate*1.001) {
				t.Fatalf("rate %g, want %g", rate, c.rate)
			}
		})
	}
}

func TestLimiterBoundedCatchUp(t *testing.T) {
	clk := newFakeClock()
	l := NewLimiter(1000, 5, clk)
	if err := l.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	clk.advance(100 * time.Millisecond) // the caller stalls for 100 events' time
	start, sleeps := clk.Now(), clk.sleeps
	immediate := 0
	for range 20 {
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if clk.sleeps == sleeps {
			immediate++
		}
		sleeps = clk.sleeps
	}
	if immediate != 5 {
		t.Fatalf("%d events without waiting after a stall, want the burst of 5", immediate)
	}
	if got, want := clk.Now().Sub(start), 15*time.Millisecond; got != want {
		t.Fatalf("20 events after the stall took %v, want %v", got, want)
	}
}

func TestLimiterUnlimitedAndCancel(t *testing.T) {
	clk := newFakeClock()
	l := NewLimiter(0, 1, clk)
	for range 1000 {
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if clk.sleeps != 0 {
		t.Fatalf("unlimited limiter slept %d times", clk.sleeps)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := NewLimiter(10, 1, clk).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a canceled context: %v", err)
	}
}

func TestSystemClockSleepCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := (SystemClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep: %v", err)
	}
}
