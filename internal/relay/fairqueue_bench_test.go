package relay

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/p2p"
)

// watchTransport wraps a relayer's transport: onMsg is called with each msg frame's sender before
// the relay's handler takes it, onSend with the next hop of each msg frame the relayer sends.
type watchTransport struct {
	Transport
	onMsg  func(from peer.ID)
	onSend func(to peer.ID)
}

func (w *watchTransport) Handle(proto p2p.Protocol, fn p2p.Handler) error {
	if proto != p2p.ProtocolMsg {
		return w.Transport.Handle(proto, fn)
	}
	return w.Transport.Handle(proto, func(from peer.ID, frame []byte) {
		w.onMsg(from)
		fn(from, frame)
	})
}

func (w *watchTransport) Send(ctx context.Context, to peer.ID, proto p2p.Protocol, frame []byte) error {
	if proto == p2p.ProtocolMsg {
		w.onSend(to)
	}
	return w.Transport.Send(ctx, to, proto, frame)
}

// processed is how many of a flood's packets for r it has peeled: delivered (counted by its
// Deliver in delivered), or dropped as replays.
func processed(r *Relay, delivered *atomic.Int64) int64 {
	return delivered.Load() + int64(counter(r.m.dropped.WithLabelValues(reasonReplay)))
}

// floodBench is a relayer R in the middle: peer A floods it with packets for R, peer C sends
// messages over R to B one at a time, and R's transport times each of C's packets from its
// arrival to its forwarding.
type floodBench struct {
	a, c, r, b *testNode
	floodDone  atomic.Int64 // A's packets R delivered to itself

	mu        sync.Mutex
	arrived   time.Time
	arrivedAt int64
	passed    chan fairPass
}

// fairPass is one of C's packets at R: how long it took from arrival to forwarding and how many
// of A's packets R peeled in that time.
type fairPass struct {
	took      time.Duration
	overtaken int64
}

func newFloodBench(tb testing.TB, queueSize int) *floodBench {
	f := &floodBench{passed: make(chan fairPass, 1)}
	var cID atomic.Value
	var rp atomic.Pointer[Relay]
	nodes := newNet(tb, netOptions{edit: func(name string, cfg *Config) {
		if name != "R" {
			return
		}
		cfg.QueueSize, cfg.NoMixDelay = queueSize, true
		cfg.Deliver = func(Received) { f.floodDone.Add(1) }
		cfg.Transport = &watchTransport{Transport: cfg.Transport,
			onMsg: func(from peer.ID) {
				if id, _ := cID.Load().(peer.ID); id != "" && from == id {
					f.mu.Lock()
					f.arrived, f.arrivedAt = time.Now(), processed(rp.Load(), &f.floodDone)
					f.mu.Unlock()
				}
			},
			onSend: func(peer.ID) { // only C's packets go on from R
				f.mu.Lock()
				p := fairPass{took: time.Since(f.arrived), overtaken: processed(rp.Load(), &f.floodDone) - f.arrivedAt}
				f.mu.Unlock()
				select {
				case f.passed <- p:
				default:
				}
			}}
	}}, "A", "C", "R", "B")
	f.a, f.c, f.r, f.b = nodes["A"], nodes["C"], nodes["R"], nodes["B"]
	rp.Store(f.r.relay)
	cID.Store(f.c.id())
	return f
}

// floodFrames builds n packets from A for R, held back from the network.
func (f *floodBench) floodFrames(tb testing.TB, n int) [][]byte {
	f.a.transport.mu.Lock()
	f.a.transport.hold = true
	f.a.transport.mu.Unlock()
	for range n {
		if _, err := f.a.relay.Send(tb.Context(), []peer.ID{f.r.id()}, "flood"); err != nil {
			tb.Fatal(err)
		}
	}
	f.a.transport.mu.Lock()
	defer f.a.transport.mu.Unlock()
	return f.a.transport.sent
}

// flood pushes frames from A to R round and round until stop is closed, as fast as A's host
// takes them.
func (f *floodBench) flood(tb testing.TB, frames [][]byte, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; {
			select {
			case <-stop:
				return
			default:
			}
			err := f.a.host.Send(context.Background(), f.r.id(), p2p.ProtocolMsg, frames[i])
			switch {
			case err == nil:
				i = (i + 1) % len(frames)
			case errors.Is(err, p2p.ErrQueueFull):
				time.Sleep(50 * time.Microsecond) // let A's writer drain: pacing, not synchronisation
			default:
				tb.Error(err)
				return
			}
		}
	}()
	return done
}

// probe sends n messages from C over R to B, one at a time, and returns how each passed R; a
// message R did not forward within timeout counts as lost.
func (f *floodBench) probe(tb testing.TB, n int, timeout time.Duration) (passes []fairPass, lost int) {
	for i := range n {
		if _, err := f.c.relay.Send(tb.Context(), ids(f.r, f.b), fmt.Sprintf("probe %d", i)); err != nil {
			tb.Fatal(err)
		}
		t := time.NewTimer(timeout)
		select {
		case p := <-f.passed:
			passes = append(passes, p)
		case <-t.C:
			lost++
		}
		t.Stop()
	}
	return passes, lost
}

// BenchmarkFloodedRelayer: relayer R (unpaid, its own workers, real libp2p hosts in this process)
// while peer A floods it with packets for R, pushed round and round as fast as A's host takes them
// (R peels each: delivered once, then dropped as a replay); peer C sends one message at a time over
// R to B. Per iteration fairProbes of C's messages with R idle, then as many under the flood; it
// reports how long C's packets took from arriving at R to leaving it (p50, p99), how many of A's
// packets R peeled meanwhile (p50), and how many of C's packets R lost (not forwarded within 2 s):
//
//	go test -run '^$' -bench FloodedRelayer -benchtime 3x ./internal/relay
func BenchmarkFloodedRelayer(b *testing.B) {
	const fairProbes = 50
	f := newFloodBench(b, DefaultQueueSize)
	frames := f.floodFrames(b, 4000)
	if _, lost := f.probe(b, 1, 30*time.Second); lost != 0 { // opens C → R → B
		b.Fatal("the first message did not pass R")
	}
	var idle, loaded []fairPass
	lost := 0
	for b.Loop() {
		p, l := f.probe(b, fairProbes, 2*time.Second)
		idle, lost = append(idle, p...), lost+l
		stop := make(chan struct{})
		done := f.flood(b, frames, stop)
		deadline := time.Now().Add(30 * time.Second)
		for counter(f.r.relay.m.dropped.WithLabelValues(reasonOverload)) == 0 { // R's queue is full
			if time.Now().After(deadline) {
				b.Fatal("the flood did not fill R's queue within 30 s")
			}
			time.Sleep(time.Millisecond) // polling interval, not synchronisation
		}
		p, l = f.probe(b, fairProbes, 2*time.Second)
		loaded, lost = append(loaded, p...), lost+l
		close(stop)
		<-done
	}
	report := func(what string, ps []fairPass) {
		var took []time.Duration
		var over []float64
		for _, p := range ps {
			took = append(took, p.took)
			over = append(over, float64(p.overtaken))
		}
		slices.Sort(took)
		slices.Sort(over)
		if len(took) == 0 {
			return
		}
		b.ReportMetric(float64(bench.Percentile(took, 50).Microseconds()), what+"-p50-µs")
		b.ReportMetric(float64(bench.Percentile(took, 99).Microseconds()), what+"-p99-µs")
		b.ReportMetric(over[len(over)/2], what+"-overtaken-p50")
	}
	report("idle", idle)
	report("flood", loaded)
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(counter(f.r.relay.m.dropped.WithLabelValues(reasonOverload))/float64(b.N), "overload-drops/op")
}

// BenchmarkFairQueue: one push and one pop of the workers' queue, from two goroutines (a read
// loop and a worker), against the single channel it replaced; and both in one goroutine.
func BenchmarkFairQueue(b *testing.B) {
	b.Run("fair-alone", func(b *testing.B) {
		q := newFairQueue(2*DefaultQueueSize, DefaultQueueSize)
		for i := range b.N {
			_ = q.push(i%3, job{kind: jobMsg})
			<-q.ready
			q.pop()
		}
	})
	b.Run("channel-alone", func(b *testing.B) {
		q := make(chan job, 2*DefaultQueueSize)
		for range b.N {
			q <- job{kind: jobMsg}
			<-q
		}
	})
	b.Run("fair", func(b *testing.B) {
		q := newFairQueue(2*DefaultQueueSize, DefaultQueueSize)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range b.N {
				<-q.ready
				q.pop()
			}
		}()
		for i := 0; i < b.N; {
			if q.push(i%3, job{kind: jobMsg}) == nil {
				i++
			} else {
				runtime.Gosched() // full: let the worker take some (a read loop drops instead)
			}
		}
		<-done
	})
	b.Run("channel", func(b *testing.B) {
		q := make(chan job, 2*DefaultQueueSize)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range b.N {
				<-q
			}
		}()
		for range b.N {
			q <- job{kind: jobMsg}
		}
		<-done
	})
}
