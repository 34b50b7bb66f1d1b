package relay

import "sync"

// The workers' packet queue is fair between the links packets come in on (docs/PROTOCOL.md
// §5.5). A single FIFO let one previous hop's burst, a session running flat out or a peer's
// flood, sit ahead of every other hop's packets and fill the queue, so that those were dropped
// as overload. Instead each line of previous hops (turns.go's stripes: one peer each, but for
// the rare two that share a stripe) has a FIFO of its own, bounded at one worker's room in the
// queue (Config.QueueSize; the queue holds at least twice that), and the workers take the heads
// of the non-empty FIFOs in turn: round robin, which is deficit round robin when every job is
// one packet of the same size and about the same cost. A FIFO keeps its line's places in order
// (the place is taken and the job queued under the line's lock), so a worker waiting for its
// turn still waits only for packets other workers already took. Due forwards (the mixing
// stage's) are a FIFO of their own, served before the links: their tickets were accepted and
// acknowledged, so an overloaded relayer drops new packets rather than the ones it was paid to
// forward (as acknowledgements go first, relay.go), and there are never more of them than the
// links' packets the workers took.

// forwardFlow is the index of the due forwards' FIFO, after the laneStripes lines.
const forwardFlow = laneStripes

// fairQueue holds the workers' packets and due forwards: one FIFO per line of previous hops,
// served round robin, and one for forwards, served first. It holds at most size jobs, a FIFO at most
// flowSize (less than size, so that no line fills it), and at most its share once the queue is
// half full. ready holds a token per queued job, so that workers can select on it.
type fairQueue struct {
	ready chan struct{}

	mu       sync.Mutex
	flows    [laneStripes + 1]jobFIFO
	active   [laneStripes]int // the non-empty lines, a ring in serving order
	head, n  int              // active[head] is served next; n flows are active
	queued   int
	size     int
	flowSize int
}

func newFairQueue(size, flowSize int) *fairQueue {
	return &fairQueue{ready: make(chan struct{}, size), size: size, flowSize: flowSize}
}

// push queues j on flow; it returns ErrOverloaded when the flow or the queue is full.
func (q *fairQueue) push(flow int, j job) error {
	q.mu.Lock()
	f := &q.flows[flow]
	if q.queued >= q.size || f.len() >= q.flowSize || flow != forwardFlow && q.queued >= q.size/2 && f.len() >= q.share() {
		q.mu.Unlock()
		return ErrOverloaded
	}
	if f.len() == 0 && flow != forwardFlow {
		q.active[(q.head+q.n)%len(q.active)] = flow
		q.n++
	}
	f.push(j)
	q.queued++
	q.mu.Unlock()
	q.ready <- struct{}{} // never blocks: at most size tokens, one per queued job
	return nil
}

// share is how many jobs a line may hold once the queue is half full: half the queue over the
// lines that have some and one more. Two flooding peers would otherwise fill the whole queue
// (each FIFO holds half of it), and every other line's packets be dropped; so a line that holds
// more than its share is refused first, and a newcomer still finds room.
func (q *fairQueue) share() int { return max(q.size/(2*(q.n+1)), 1) }

// pop takes the next job: a due forward, or round robin over the non-empty lines. Call it once
// per token taken from ready: there is then a job.
func (q *fairQueue) pop() job {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued--
	if f := &q.flows[forwardFlow]; f.len() > 0 {
		return f.pop()
	}
	flow := q.active[q.head]
	f := &q.flows[flow]
	j := f.pop()
	q.head = (q.head + 1) % len(q.active)
	q.n--
	if f.len() > 0 { // to the back of the ring
		q.active[(q.head+q.n)%len(q.active)] = flow
		q.n++
	}
	return j
}

// len returns the number of queued jobs.
func (q *fairQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// fifoKeep is the room an emptied FIFO keeps: a busy link's FIFO empties and fills again all
// the time, and each growth from nothing copies jobs.
const fifoKeep = 256

// jobFIFO is a FIFO of jobs that keeps no memory beyond what it holds (and one slice's
// growth).
type jobFIFO struct {
	buf  []job
	head int
}

func (f *jobFIFO) len() int { return len(f.buf) - f.head }

func (f *jobFIFO) push(j job) {
	if f.head > 0 && f.head >= len(f.buf)/2 && len(f.buf) == cap(f.buf) {
		// Half of it taken: slide the rest down instead of growing.
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, j)
}

func (f *jobFIFO) pop() job {
	j := f.buf[f.head]
	f.buf[f.head] = job{}
	f.head++
	if f.head == len(f.buf) {
		f.head = 0
		if cap(f.buf) > fifoKeep {
			f.buf = nil // an empty FIFO lets a flood's memory go
		} else {
			f.buf = f.buf[:0]
		}
	}
	return j
}
