// Package rto is RFC 6298's retransmission timeout, which the courier (a message's rounds) and
// the session transport (a segment's retransmission) both wait by: the smoothed round trip and
// its variation, a timeout of srtt + 4·rttvar within [Min, Max], Initial before any measurement,
// doubled on each expiry until the next measurement (Karn: callers measure only what was sent
// once). It is pure and imports no relayd package.
package rto

import "time"

// Estimator is one path's estimate. The zero value with its bounds set is ready. It is not safe
// for concurrent use: callers hold their own lock.
type Estimator struct {
	// Initial is the timeout before any measurement; Min and Max bound every timeout.
	Initial, Min, Max time.Duration

	srtt, rttvar time.Duration
	measured     bool
	backoff      uint
}

// Observe takes one round trip and ends any backoff.
func (e *Estimator) Observe(d time.Duration) {
	e.backoff = 0
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

// Timeout is the current retransmission timeout, backoff included.
func (e *Estimator) Timeout() time.Duration {
	t := e.Initial
	if e.measured {
		t = e.srtt + 4*e.rttvar
	}
	t = min(max(t, e.Min), e.Max)
	for range e.backoff {
		if t >= e.Max {
			break
		}
		t *= 2
	}
	return min(t, e.Max)
}

// Expired doubles the timeout (up to Max) until the next measurement.
func (e *Estimator) Expired() {
	if e.Timeout() < e.Max {
		e.backoff++
	}
}

// Smoothed returns the smoothed round trip and its variation; ok is false before a measurement.
func (e *Estimator) Smoothed() (srtt, rttvar time.Duration, ok bool) {
	return e.srtt, e.rttvar, e.measured
}
