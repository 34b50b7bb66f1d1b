package session

import (
	"time"
)

// rtt is RFC 6298's retransmission timeout: the smoothed round trip and its variation, the
// timeout srtt + 4·rttvar within [min, max], doubled on each expiry until the next measurement
// (Karn: only segments sent once are measured). Before any measurement it is the initial
// timeout. Not safe for concurrent use: the Conn's mutex guards it.
type rtt struct {
	initial, min, max time.Duration
	srtt, rttvar      time.Duration
	measured          bool
	backoff           uint
}

// observe takes one round trip and ends any backoff.
func (e *rtt) observe(d time.Duration) {
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

// timeout is the current retransmission timeout, backoff included.
func (e *rtt) timeout() time.Duration {
	t := e.initial
	if e.measured {
		t = min(max(e.srtt+4*e.rttvar, e.min), e.max)
	}
	for range e.backoff {
		if t >= e.max {
			break
		}
		t *= 2
	}
	return min(t, e.max)
}

// expired doubles the timeout (up to max) until the next measurement.
func (e *rtt) expired() {
	if e.timeout() < e.max {
		e.backoff++
	}
}
