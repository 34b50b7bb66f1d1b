package node

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/router"
)

// Fairness under load (issue 28, BENCHMARKS.md "Fairness under load"): on the line A, R1 … R3,
// B of the session benchmarks (mixing delay 0, stream off), the round trips of pings between
// neighbours and the one-way latency of one-packet messages both ways through the same
// relayers, first idle, then while a session downloads flat out from B's target to A (answers
// on reply blocks B → R3 → R2 → R1 → A; its acknowledgements and blocks A → … → B):
//
//	go test -run '^$' -bench 'Fairness' -benchtime 1x -count 4 ./internal/node
//
// Beside the probes it reports the Go scheduler's p99 latency (how long runnable goroutines
// waited for a core: CPU contention, the whole process's) and the relayers' p99 wait for a worker
// (relayd_relay_queue_wait_seconds, bucket bounds: the relay's queues), idle and loaded.

// fairProbe measures pings and one-packet messages on a line.
type fairProbe struct {
	net  *benchNet
	seq  atomic.Int64
	wait sync.Map // message text → chan struct{}
}

// newFairProbe subscribes to the inbox of every node of net.
func newFairProbe(net *benchNet) *fairProbe {
	p := &fairProbe{net: net}
	for _, n := range net.nodes {
		n.inbox.Subscribe(func(m router.Message) {
			if d, ok := p.wait.LoadAndDelete(m.Text); ok {
				close(d.(chan struct{}))
			}
		})
	}
	return p
}

// message sends one one-packet message from's router to to and returns how long it took to
// reach to's inbox.
func (p *fairProbe) message(ctx context.Context, from, to *Node) (time.Duration, error) {
	text := bench.MessageText("fairness", int(p.seq.Add(1)), 100)
	d := make(chan struct{})
	p.wait.Store(text, d)
	start := time.Now()
	if _, err := from.router.Send(ctx, to.id.PeerID(), text); err != nil {
		p.wait.Delete(text)
		return 0, err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-d:
		return time.Since(start), nil
	case <-t.C:
		p.wait.Delete(text)
		return 0, fmt.Errorf("message not delivered within 30 s")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ping is one heartbeat from from to to, as POST /node/ping sends it.
func (p *fairProbe) ping(ctx context.Context, from, to *Node) (time.Duration, error) {
	return from.host.Ping(ctx, to.id.PeerID())
}

// fairKinds are the probes, in the order each round runs them.
var fairKinds = []string{"ping-A-R1", "ping-R2-R3", "msg-A-B", "msg-B-A"}

// fairSamples are the latencies of each kind.
type fairSamples map[string][]time.Duration

// round runs n rounds of every probe, one every pace, and returns their latencies.
func (p *fairProbe) rounds(ctx context.Context, n int, pace time.Duration) (fairSamples, error) {
	nodes := p.net.nodes
	a, r1, r2, r3, b := nodes[0], nodes[1], nodes[2], nodes[3], nodes[4]
	s := fairSamples{}
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for range n {
		for _, k := range fairKinds {
			<-tick.C
			var d time.Duration
			var err error
			switch k {
			case "ping-A-R1":
				d, err = p.ping(ctx, a, r1)
			case "ping-R2-R3":
				d, err = p.ping(ctx, r2, r3)
			case "msg-A-B":
				d, err = p.message(ctx, a, b)
			case "msg-B-A":
				d, err = p.message(ctx, b, a)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			s[k] = append(s[k], d)
		}
	}
	for _, v := range s {
		slices.Sort(v)
	}
	return s, nil
}

// flatOut downloads GET /stream through the session at listen until stop is closed, counting the
// bytes in got. It returns when the download has ended.
func flatOut(tb testing.TB, listen string, got *atomic.Int64, stop <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET /stream HTTP/1.1\r\nHost: target\r\n\r\n")); err != nil {
		tb.Fatal(err)
	}
	go func() {
		<-stop
		conn.Close()
	}()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := conn.Read(buf)
			got.Add(int64(n))
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				select {
				case <-stop:
					err = nil
				default:
				}
				done <- err
				return
			}
		}
	}()
	return done
}

// schedLatency reads the runtime's histogram of how long goroutines waited to run.
func schedLatency() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// schedP99 is the 99th percentile of the scheduling latencies between two readings, in ms.
func schedP99(before, after *metrics.Float64Histogram) float64 {
	var total uint64
	counts := make([]uint64, len(after.Counts))
	for i := range counts {
		counts[i] = after.Counts[i] - before.Counts[i]
		total += counts[i]
	}
	var seen uint64
	for i, c := range counts {
		seen += c
		if total > 0 && float64(seen) >= 0.99*float64(total) {
			return after.Buckets[i+1] * 1e3
		}
	}
	return 0
}

// queueWait sums the relayers' histograms of how long their packets waited for a worker
// (relayd_relay_queue_wait_seconds): bucket upper bounds and cumulative counts.
func queueWait(tb testing.TB, nodes []*Node) (bounds []float64, counts []uint64) {
	for _, n := range nodes {
		mfs, err := n.reg.Gather()
		if err != nil {
			tb.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "relayd_relay_queue_wait_seconds" {
				continue
			}
			h := mf.GetMetric()[0].GetHistogram()
			if counts == nil {
				counts = make([]uint64, len(h.GetBucket())+1)
				for _, b := range h.GetBucket() {
					bounds = append(bounds, b.GetUpperBound())
				}
			}
			for i, b := range h.GetBucket() {
				counts[i] += b.GetCumulativeCount()
			}
			counts[len(counts)-1] += h.GetSampleCount()
		}
	}
	return bounds, counts
}

// queueWaitP99 is the bucket bound (ms) below which 99 % of the waits between two readings lie
// (-1 for a build without the histogram).
func queueWaitP99(bounds []float64, before, after []uint64) float64 {
	if len(after) == 0 {
		return -1
	}
	total := after[len(after)-1] - before[len(before)-1]
	for i, b := range bounds {
		if float64(after[i]-before[i]) >= 0.99*float64(total) {
			return b * 1e3
		}
	}
	return 1e3 * 2 * bounds[len(bounds)-1]
}

// fairNet is the line of the fairness measurements, with B an exit to a session target and a
// session from A to it open.
func fairNet(tb testing.TB) (*benchNet, string) {
	target := newSessionTarget(tb)
	net := newLineNet(tb, sessionRelayers, func(c []config.Config) { c[len(c)-1].ExitAllow = []string{target.addr} })
	return net, net.openSession(target.addr)
}

// BenchmarkFairness: per iteration fairRounds rounds of every probe idle, then as many while a
// session downloads flat out; it reports each probe's p50 and p99 idle and loaded, the ratio of
// loaded to idle p99, and the download's rate.
func BenchmarkFairness(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and several nodes")
	}
	const (
		fairRounds = 50
		fairPace   = 10 * time.Millisecond
	)
	net, listen := fairNet(b)
	p := newFairProbe(net)
	ctx := b.Context()
	// One round first: the paths and streams exist before anything is timed.
	if _, err := p.rounds(ctx, 2, fairPace); err != nil {
		b.Fatal(err)
	}
	idle, loaded := fairSamples{}, fairSamples{}
	var rate, schedIdle, schedLoad, waitIdle, waitLoad []float64
	relayers := net.nodes[1 : len(net.nodes)-1]
	for b.Loop() {
		h0 := schedLatency()
		bounds, w0 := queueWait(b, relayers)
		s, err := p.rounds(ctx, fairRounds, fairPace)
		schedIdle = append(schedIdle, schedP99(h0, schedLatency()))
		_, w1 := queueWait(b, relayers)
		waitIdle = append(waitIdle, queueWaitP99(bounds, w0, w1))
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range s {
			idle[k] = append(idle[k], v...)
		}
		var got atomic.Int64
		stop := make(chan struct{})
		done := flatOut(b, listen, &got, stop)
		// Wait for the download to run at its rate before timing: a second of bytes.
		deadline := time.Now().Add(30 * time.Second)
		for got.Load() < 64<<10 {
			if time.Now().After(deadline) {
				b.Fatal("the download did not start within 30 s")
			}
			time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
		}
		start, n0 := time.Now(), got.Load()
		h0 = schedLatency()
		_, w0 = queueWait(b, relayers)
		s, err = p.rounds(ctx, fairRounds, fairPace)
		schedLoad = append(schedLoad, schedP99(h0, schedLatency()))
		_, w1 = queueWait(b, relayers)
		waitLoad = append(waitLoad, queueWaitP99(bounds, w0, w1))
		if err != nil {
			b.Fatal(err)
		}
		rate = append(rate, float64(got.Load()-n0)/time.Since(start).Seconds())
		close(stop)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		for k, v := range s {
			loaded[k] = append(loaded[k], v...)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for _, k := range fairKinds {
		slices.Sort(idle[k])
		slices.Sort(loaded[k])
		i50, i99 := bench.Percentile(idle[k], 50), bench.Percentile(idle[k], 99)
		l50, l99 := bench.Percentile(loaded[k], 50), bench.Percentile(loaded[k], 99)
		b.ReportMetric(ms(i50), k+"-idle-p50-ms")
		b.ReportMetric(ms(i99), k+"-idle-p99-ms")
		b.ReportMetric(ms(l50), k+"-load-p50-ms")
		b.ReportMetric(ms(l99), k+"-load-p99-ms")
		b.ReportMetric(float64(l99)/float64(i99), k+"-p99-load/idle")
	}
	b.ReportMetric(median(rate), "download-B/s")
	b.ReportMetric(median(schedIdle), "sched-idle-p99-ms")
	b.ReportMetric(median(schedLoad), "sched-load-p99-ms")
	b.ReportMetric(median(waitIdle), "relay-queue-idle-p99-ms")
	b.ReportMetric(median(waitLoad), "relay-queue-load-p99-ms")
}
