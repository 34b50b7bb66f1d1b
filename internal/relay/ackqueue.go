package relay

import (
	"sync"

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
	wake    chan struct{} // capacity 1: the queue became non-empty, or closed
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
	q.mu.Unlock()
	if first {
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
