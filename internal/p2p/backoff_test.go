package p2p

import (
	"slices"
	"testing"
	"time"
)

// TestStreamBackoff: after each failure in a row a stream waits BackoffMin, doubling up to
// BackoffMax, and a success starts again from BackoffMin.
func TestStreamBackoff(t *testing.T) {
	h := &Host{cfg: Config{BackoffMin: 100 * time.Millisecond, BackoffMax: 30 * time.Second}}
	o := &outbound{h: h, retry: h.streamBackoff()}
	now := time.Unix(1000, 0)
	var got []time.Duration
	for range 12 {
		got = append(got, o.fail(now))
	}
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	if want := ms(100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if wait := o.backoff(now); wait != 30*time.Second {
		t.Fatalf("backoff right after the last failure: %v", wait)
	}
	o.succeed()
	if wait := o.backoff(now); wait != 0 {
		t.Fatalf("backoff after a success: %v", wait)
	}
	if wait := o.fail(now); wait != 100*time.Millisecond {
		t.Fatalf("first wait after a success: %v", wait)
	}
}
