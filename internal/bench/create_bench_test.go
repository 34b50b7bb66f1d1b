package bench_test

import (
	crand "crypto/rand"
	"runtime"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// createWork is a sender's message over 2 relayers as internal/relay's Send builds it, without
// the node around it (pending table, ledger, transport): the packet, its proof-of-relay values
// and the first ticket with its signature. It is the work of the original node's Packet.create
// (key shares, PoR values and strings, the packet, the first ticket signed), which
// scripts/hopr-compare times in the same run.
type createWork struct {
	hops []*packet.PublicKey
	msg  packet.Message
}

func newCreateWork(b *testing.B) (*createWork, func(route *packet.Route) error) {
	hops := make([]*packet.PublicKey, 3)
	for i := range hops {
		k, err := crypto.GenerateKey()
		if err != nil {
			b.Fatal(err)
		}
		if hops[i], err = packet.ParsePublicKey(crypto.CompressPubkey(&k.PublicKey)); err != nil {
			b.Fatal(err)
		}
	}
	sender, err := crypto.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	contract := common.Address{0xc0}
	t := &tickets.Ticket{ChannelID: tickets.ChannelID(crypto.PubkeyToAddress(sender.PublicKey), common.Address{1}),
		Amount: tickets.AmountFor(2), Epoch: 1, WinProb: tickets.MaxWinProb}
	w := &createWork{hops: hops, msg: packet.Message{Text: make([]byte, 100), Timestamp: 1}}
	// finish is everything after NewRoute: the proof-of-relay values, the packet, the ticket.
	finish := func(route *packet.Route) error {
		n := route.Len()
		var own, ack, ks [packet.MaxHops + 1]por.Scalar
		var err error
		for i := range n {
			if own[i], ack[i], err = por.DeriveOwnAck(route.Secret(i)); err != nil {
				return err
			}
		}
		end, err := por.DeriveEnd(route.Secret(n - 1))
		if err != nil {
			return err
		}
		for i := range n {
			after := end
			if i+1 < n {
				after = ack[i+1]
			}
			if ks[i], err = por.Sum(own[i], after); err != nil {
				return err
			}
		}
		ks[n] = ack[0]
		pts, err := por.MulBase(ks[:n+1]...)
		if err != nil {
			return err
		}
		var fields [packet.MaxHops - 1][packet.PoRSize]byte
		for i := range n - 1 {
			ti, next := pts[i].Address(), pts[i+1].Address()
			h := por.CommitAck(ack[i+1])
			copy(fields[i][:20], ti[:])
			copy(fields[i][20:52], h[:])
			copy(fields[i][52:], next[:])
		}
		if _, err := route.Seal(w.msg, fields[:n-1]); err != nil {
			return err
		}
		t.Index++
		t.Challenge = pts[0].Address()
		return t.Sign(sender, 1337, contract)
	}
	return w, finish
}

// BenchmarkPacketCreateEqualWork is a sender's message over 2 relayers with its proof-of-relay
// values and the first ticket's signature, every ephemeral key computed in the request (the
// work the original's Packet.create does). cpu-ns/op is the goroutine's thread CPU per message
// (it is locked to its thread), floor-ns/op the public-key floor of that work
// (bench.Floor.CreateNs(2)) timed right after it the same way, and create/floor their ratio.
func BenchmarkPacketCreateEqualWork(b *testing.B) {
	w, finish := newCreateWork(b)
	benchCreate(b, func() (*packet.Route, error) { return packet.NewRoute(crand.Reader, w.hops) }, finish)
}

// BenchmarkPacketCreateEqualWorkPooled is the same message with the ephemeral keys taken from
// a packet.EphemeralPool filled beforehand, as idle time fills it: what a request costs when
// the sender is not saturated. (Under saturation the pool is empty and a request costs what
// BenchmarkPacketCreateEqualWork does.)
func BenchmarkPacketCreateEqualWorkPooled(b *testing.B) {
	w, finish := newCreateWork(b)
	pool, err := packet.NewEphemeralPool(crand.Reader, 3*b.N)
	if err != nil {
		b.Fatal(err)
	}
	if err := pool.Fill(); err != nil {
		b.Fatal(err)
	}
	benchCreate(b, func() (*packet.Route, error) { return pool.NewRoute(crand.Reader, w.hops) }, finish)
	if pool.Len() != 0 {
		b.Fatalf("%d pool keys unused", pool.Len())
	}
}

// benchCreate runs newRoute and finish b.N times on a goroutine locked to its thread and
// reports the thread CPU per message against the floor.
func benchCreate(b *testing.B, newRoute func() (*packet.Route, error), finish func(*packet.Route) error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, _ := bench.ThreadCPU()
	for range b.N {
		route, err := newRoute()
		if err != nil {
			b.Fatal(err)
		}
		if err := finish(route); err != nil {
			b.Fatal(err)
		}
	}
	cpu1, ok := bench.ThreadCPU()
	b.StopTimer()
	if !ok {
		return // no thread clock: ns/op only
	}
	cpuNs := float64(cpu1-cpu0) / float64(b.N)
	floorNs := measureCreateFloor(b)
	b.ReportMetric(cpuNs, "cpu-ns/op")
	b.ReportMetric(floorNs, "floor-ns/op")
	b.ReportMetric(cpuNs/floorNs, "create/floor")
}

// measureCreateFloor times the sender's floor over 2 relayers for about as many rounds as the
// benchmark ran (at most 2,000), right after it.
func measureCreateFloor(b *testing.B) float64 {
	f, err := bench.MeasureFloor(min(max(b.N, 10), 2000))
	if err != nil {
		b.Fatal(err)
	}
	return f.CreateNs(2)
}

// BenchmarkPacketCreatePoolVsInline alternates one message with its ephemeral keys computed in
// the request and one with them taken from a filled pool, on the same goroutine, so both see the
// same machine state; it reports inline-ns/op, pooled-ns/op and pooled/inline. (The pool is
// filled before the clock starts, as idle time fills it.)
func BenchmarkPacketCreatePoolVsInline(b *testing.B) {
	w, finish := newCreateWork(b)
	pool, err := packet.NewEphemeralPool(crand.Reader, 3*b.N)
	if err != nil {
		b.Fatal(err)
	}
	if err := pool.Fill(); err != nil {
		b.Fatal(err)
	}
	var inline, pooled time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		route, err := packet.NewRoute(crand.Reader, w.hops)
		if err == nil {
			err = finish(route)
		}
		t1 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		route, err = pool.NewRoute(crand.Reader, w.hops)
		if err == nil {
			err = finish(route)
		}
		t2 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		inline += t1.Sub(t0)
		pooled += t2.Sub(t1)
	}
	b.StopTimer()
	if pool.Len() != 0 {
		b.Fatalf("%d pool keys unused", pool.Len())
	}
	b.ReportMetric(float64(inline.Nanoseconds())/float64(b.N), "inline-ns/op")
	b.ReportMetric(float64(pooled.Nanoseconds())/float64(b.N), "pooled-ns/op")
	b.ReportMetric(float64(pooled)/float64(inline), "pooled/inline")
}
