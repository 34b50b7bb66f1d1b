package courier

import (
	"sync"
	"time"
)

// rttEstimator is RFC 6298's smoothed round trip and its variation, over the time from a round's
// last packet to its acknowledgement; the wait for an acknowledgement is srtt + 4·rttvar within
// [min, max]. Before any measurement it waits 3 s (RFC 6298's initial 1 s is too short for
// mixing delays on both ways and the recipient's quiet time).
type rttEstimator struct {
	min, max time.Duration

	mu           sync.Mutex
	srtt, rttvar time.Duration
	measured     bool
}

const initialTimeout = 3 * time.Second

func newRTT(min, max time.Duration) rttEstimator { return rttEstimator{min: min, max: max} }

// observe takes one round trip.
func (e *rttEstimator) observe(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.measured {
		e.srtt, e.rttvar, e.measured = d, d/2, true
		return
	}
	diff := e.srtt - d
	if diff < 0 {
		diff = -diff
	}
	e.rttvar = (3*e.rttvar + diff) / 4
	e.srtt = (7*e.srtt + d) / 8
}

// timeout is how long to wait for a round's acknowledgement.
func (e *rttEstimator) timeout() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := initialTimeout
	if e.measured {
		t = e.srtt + 4*e.rttvar
	}
	return min(max(t, e.min), e.max)
}
