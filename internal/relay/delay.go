package relay

import (
	"container/heap"
	"context"
	"time"
)

// delayed is a packet waiting out its mixing delay.
type delayed struct {
	due time.Time
	seq uint64 // insertion order, to keep equal due times first-in first-out
	f   forward
}

type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	if c := h[i].due.Compare(h[j].due); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = delayed{}
	*h = old[:len(old)-1]
	return x
}

// runDelay is the mixing stage: one goroutine with a timer heap. Workers hand it packets with
// their due time over r.delayIn; when a packet is due it goes back to the workers, which forward
// it. No goroutine sleeps per packet. Packets still waiting when ctx ends are dropped.
func (r *Relay) runDelay(ctx context.Context) {
	var (
		h     delayHeap
		seq   uint64
		timer = r.clock.NewTimer(time.Hour)
	)
	defer timer.Stop()
	for {
		now := r.clock.Now()
		for len(h) > 0 && !h[0].due.After(now) {
			d := heap.Pop(&h).(delayed)
			r.dispatchForward(d.f)
		}
		if len(h) > 0 {
			timer.Reset(h[0].due.Sub(now)) // a spurious wake-up only re-runs the loop
		}
		select {
		case <-ctx.Done():
			for _, d := range h {
				r.dropForward(d.f, reasonStopped, ctx.Err())
			}
			return
		case d := <-r.delayIn:
			seq++
			d.seq = seq
			heap.Push(&h, d)
		case <-timer.C():
		}
	}
}
