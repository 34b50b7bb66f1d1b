package bench

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source of a run and of the Limiter.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d or until ctx ends, whichever is first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d with a timer, or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Limiter spaces events at a fixed rate on a schedule (event i is due at
// start + i/rate), so small delays of the caller do not lower the average
// rate; a caller that falls behind may catch up by at most Burst events at
// once. Safe for concurrent use.
type Limiter struct {
	clock    Clock
	interval time.Duration // 0: no limit
	burst    int

	mu      sync.Mutex
	next    time.Time
	started bool
}

// NewLimiter returns a limiter of rate events per second (0 or less: no
// limit) that lets a late caller catch up by at most burst events (at least
// 1), timed by clock (nil: SystemClock).
func NewLimiter(rate float64, burst int, clock Clock) *Limiter {
	if clock == nil {
		clock = SystemClock{}
	}
	l := &Limiter{clock: clock, burst: max(burst, 1)}
	if rate > 0 {
		l.interval = time.Duration(float64(time.Second) / rate)
		if l.interval <= 0 {
			l.interval = 1
		}
	}
	return l
}

// Wait blocks until the next event is due or ctx ends.
func (l *Limiter) Wait(ctx context.Context) error {
	if l.interval == 0 {
		return ctx.Err()
	}
	l.mu.Lock()
	now := l.clock.Now()
	if !l.started {
		l.next, l.started = now, true
	}
	if floor := now.Add(-time.Duration(l.burst-1) * l.interval); l.next.Before(floor) {
		l.next = floor // the caller fell behind: bounded catch-up only
	}
	due := l.next
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	return l.clock.Sleep(ctx, due.Sub(now))
}
