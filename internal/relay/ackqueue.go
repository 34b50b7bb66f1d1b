package relay

import (
	"sync"
	"time"

	"github.com/relayd/relayd/internal/ledger"
)

// ackQueue hands acknowledged tickets from the workers to the committer. A worker appends under
// a mutex and wakes the committer only when the queue was empty, so a batch costs one wake-up
// instead of one per ticket (on two cores a channel send per ticket woke the committer, and a
// spinning scheduler thread with it, for every hop). It holds at most max tickets: a worker
// waits when it is full (acknowledged tickets are money, never dropped).
type ackQueue struct {
	mu      sync.Mutex
	notFull sync.Cond
	buf     []ledger.AckedTicket
	max     int
	closed  bool
	wake    chan struct{} // capacity 1: the queue became non-empty or full, or closed

	// firstAt is when the queue last became non-empty; lastOut when next last handed out a
	// batch. Only next reads them; push writes firstAt.
	firstAt, lastOut time.Time
}

func newAckQueue(max int) *ackQueue {
	q := &ackQueue{max: max, wake: make(chan struct{}, 1)}
	q.notFull.L = &q.mu
	return q
}

// push appends a; it blocks while the queue is full. It must not be called after close.
func (q *ackQueue) push(a ledger.AckedTicket) {
	q.mu.Lock()
	for len(q.buf) >= q.max {
		q.notFull.Wait()
	}
	q.buf = append(q.buf, a)
	first := len(q.buf) == 1
	if first {
		q.firstAt = time.Now()
	}
	full := len(q.buf) == q.max
	q.mu.Unlock()
	if first || full {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// close tells the committer that no more tickets come; it drains what is queued first.
func (q *ackQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take moves up to n queued tickets into dst[:0] and returns them and whether the queue is
// closed.
func (q *ackQueue) take(dst []ledger.AckedTicket, n int) (batch []ledger.AckedTicket, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(n, len(q.buf))
	batch = append(dst[:0], q.buf[:k]...)
	rest := copy(q.buf, q.buf[k:])
	clear(q.buf[rest:])
	q.buf = q.buf[:rest]
	if k > 0 {
		q.notFull.Broadcast()
	}
	return batch, q.closed
}

// next waits for the committer's next batch and moves up to n tickets into dst[:0]. It returns
// at once when n tickets are queued or the queue is closed (with what is left); otherwise a
// batch is due window after the later of the first queued ticket's arrival and the previous
// batch: at most one batch per window while tickets trickle in. (Before, tickets that arrived
// during a commit were committed as soon as it ended, so at 500 tickets/s a relayer committed
// back to back, ~150 fsynced transactions of ~3 tickets a second, whatever the window.)
// It returns an empty batch only when the queue is closed and drained.
func (q *ackQueue) next(dst []ledger.AckedTicket, n int, window time.Duration) (batch []ledger.AckedTicket, closed bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		k := len(q.buf)
		due := q.firstAt
		if q.lastOut.After(due) {
			due = q.lastOut
		}
		due = due.Add(window)
		now := time.Now()
		if k >= n || q.closed || k > 0 && !now.Before(due) {
			q.mu.Unlock()
			batch, closed = q.take(dst, n)
			if len(batch) > 0 || closed {
				q.mu.Lock()
				q.lastOut = now
				q.mu.Unlock()
				return batch, closed
			}
			continue
		}
		q.mu.Unlock()
		if k == 0 {
			<-q.wake
			continue
		}
		if timer == nil {
			timer = time.NewTimer(due.Sub(now))
		} else {
			timer.Reset(due.Sub(now))
		}
		select {
		case <-timer.C:
		case <-q.wake: // full, closed, or a stale wake-up: the loop looks again
		}
	}
}
