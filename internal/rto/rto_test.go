package rto

import (
	"testing"
	"time"
)

func TestEstimator(t *testing.T) {
	e := Estimator{Initial: 3 * time.Second, Min: time.Second, Max: 60 * time.Second}
	if got := e.Timeout(); got != 3*time.Second {
		t.Fatalf("before a measurement: %v, want 3s", got)
	}
	if _, _, ok := e.Smoothed(); ok {
		t.Fatal("smoothed before a measurement")
	}
	for _, want := range []time.Duration{6, 12, 24, 48, 60, 60} {
		e.Expired()
		if got := e.Timeout(); got != want*time.Second {
			t.Fatalf("after an expiry: %v, want %vs", got, want)
		}
	}
	e.Observe(200 * time.Millisecond) // srtt 200 ms, rttvar 100 ms: 600 ms, below the minimum
	if got := e.Timeout(); got != time.Second {
		t.Fatalf("after a short round trip: %v, want the 1 s minimum", got)
	}
	e.Observe(2 * time.Second) // rttvar (300 + 1800)/4 = 525 ms, srtt (1400 + 2000)/8 = 425 ms
	if got, want := e.Timeout(), 425*time.Millisecond+4*525*time.Millisecond; got != want {
		t.Fatalf("after a long round trip: %v, want %v", got, want)
	}
	if s, v, ok := e.Smoothed(); !ok || s != 425*time.Millisecond || v != 525*time.Millisecond {
		t.Fatalf("smoothed %v %v %v", s, v, ok)
	}
	e.Observe(100 * time.Hour)
	if got := e.Timeout(); got != 60*time.Second {
		t.Fatalf("a huge round trip: %v, want the 60 s maximum", got)
	}
}
