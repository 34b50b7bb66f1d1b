package courier

import (
	"sync"
	"time"

	"github.com/relayd/relayd/internal/rto"
)

// rttEstimator is RFC 6298's estimate (internal/rto) over the time from a round's last packet to
// its acknowledgement, safe for the courier's goroutines. Before any measurement it waits 3 s
// (RFC 6298's initial 1 s is too short for mixing delays on both ways and the recipient's quiet
// time); a round's backoff is the courier's own (cenkalti/backoff), not the estimator's.
type rttEstimator struct {
	mu sync.Mutex
	e  rto.Estimator
}

const initialTimeout = 3 * time.Second

func newRTT(min, max time.Duration) rttEstimator {
	return rttEstimator{e: rto.Estimator{Initial: initialTimeout, Min: min, Max: max}}
}

// observe takes one round trip.
func (e *rttEstimator) observe(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.e.Observe(d)
}

// timeout is how long to wait for a round's acknowledgement.
func (e *rttEstimator) timeout() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.e.Timeout()
}
