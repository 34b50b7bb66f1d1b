package relay

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	lcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// BenchmarkRelayerLink measures a whole relayer as a process sees it, over one link of traffic:
// a Relay R running its workers (Run) behind a real libp2p host, with a real ledger over a bbolt
// store, receives pre-built paid packets from one previous hop A over one msg stream and forwards
// them to one next hop N, which answers each with its pre-computed acknowledgement; R commits the
// acknowledged tickets. A and N are bare libp2p hosts in the same process that do no public-key
// work: A only writes frames, N only looks the acknowledgement up (by packet id) and writes it.
// One link is the hard case for parallel work (one previous hop's tickets must be accepted in
// index order, one next hop's issued in index order) and what `relayctl load` offers a relayer.
//
// ns/op is wall time per packet from the first frame pushed to the last ticket stored; pkts/s is
// its inverse; cpu-µs/pkt is the process's CPU per packet (R's, A's and N's) and cores that CPU
// over the wall time. Run with -cpu 1,2 to compare the relayer on one core and on two: A and N share
// the cores with R, so the ratio counts their work too (BENCHMARKS.md, Relayer on all cores).
func BenchmarkRelayerLink(b *testing.B) {
	chans := channelstest.New()
	many := tickets.AmountFor(1 << 40)
	a, n := newBenchNode(b, chans, true), newBenchNode(b, chans, true)
	r := newLinkRelayer(b, chans)
	chans.Open(a.relay.addr, r.relay.addr, many)
	chans.Open(r.relay.addr, n.relay.addr, many)

	// Packets A → R → N and N's acknowledgement of each, by the id of the packet N receives.
	frames := make([][]byte, b.N+1)
	acks := make(map[packetID][AckFrameLen]byte, b.N+1)
	dryR, dryN := NewMemoryReplay(), NewMemoryReplay()
	for i := range frames {
		if _, err := a.relay.Send(b.Context(), []peer.ID{r.relay.ID(), n.id}, "benchmark message"); err != nil {
			b.Fatal(err)
		}
		frames[i] = append([]byte(nil), a.tr.last...)
		pr, err := packet.Peel(r.relay.key, frames[i][1:ticketOffset], time.Now(), dryR)
		if err != nil {
			b.Fatal(err)
		}
		pn, err := packet.Peel(n.key, pr.Next, time.Now(), dryN)
		if err != nil {
			b.Fatal(err)
		}
		ack, err := por.DeriveAck(pn.Secret)
		if err != nil {
			b.Fatal(err)
		}
		acks[idOf(pr.Next)] = ackFrame(idOf(pr.Next), ack)
	}

	ha := newLinkHost(b, a.relay.cfg.Key)
	hn := newLinkHost(b, n.relay.cfg.Key)
	var acked, got atomic.Int64
	if err := ha.Handle(p2p.ProtocolAck, func(peer.ID, []byte) { acked.Add(1) }); err != nil {
		b.Fatal(err)
	}
	if err := hn.Handle(p2p.ProtocolMsg, func(from peer.ID, frame []byte) {
		pkt, _, err := decodeMsgFrame(frame)
		if err != nil {
			b.Error(err)
			return
		}
		f, ok := acks[idOf(pkt)]
		if !ok {
			b.Error("N received a packet it has no acknowledgement for")
			return
		}
		got.Add(1)
		if err := hn.Send(context.Background(), from, p2p.ProtocolAck, f[:]); err != nil {
			b.Error(err)
		}
	}); err != nil {
		b.Fatal(err)
	}
	for _, h := range []*p2p.Host{ha, hn} {
		linkIntroduce(b, h, r.host)
		linkIntroduce(b, r.host, h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.relay.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	linkWait(b, "R running", r.relay.running.Load)
	m := r.relay.m

	// Warm up: the first packet opens both streams; its ticket is stored before the clock starts.
	linkPush(b, ha, r.relay.ID(), frames[:1], nil)
	linkWait(b, "the first ticket stored", func() bool { return counter(m.ticketsAcked) == 1 })
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	linkPush(b, ha, r.relay.ID(), frames[1:], func(i int) bool { return float64(i+1)-counter(m.acksReceived) < linkWindow })
	want := float64(b.N + 1)
	linkWait(b, "every ticket stored", func() bool { return counter(m.ticketsAcked) >= want }, func() string {
		return fmt.Sprintf("forwarded %v, acknowledgements %v, tickets %v, N got %d, A acknowledged %d, dropped %v",
			counter(m.forwarded), counter(m.acksReceived), counter(m.ticketsAcked), got.Load(), acked.Load(), linkDrops(m))
	})
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	b.StopTimer()
	if f, a, g := counter(m.forwarded), acked.Load(), got.Load(); f != want || a != int64(want) || g != int64(want) {
		b.Fatalf("forwarded %v, acknowledged to A %d, received by N %d, of %v", f, a, g, want)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pkts/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/pkt")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
}

// processCPU is the CPU time the process has used, user and system (R, A and N together).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// linkRelayer is a relayer with a real host, ledger and store.
type linkRelayer struct {
	relay *Relay
	host  *p2p.Host
}

func newLinkRelayer(b *testing.B, chans *channelstest.Map) *linkRelayer {
	k, _ := newKeyPair(b)
	host := newLinkHost(b, k)
	db, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	l, err := ledger.New(ledger.Config{Key: k, ChainID: testChainID, Contract: testContract, Channels: chans, Store: db})
	if err != nil {
		b.Fatal(err)
	}
	r, err := New(Config{Key: k, Transport: host, Payments: l, Replay: NewMemoryReplay(), NoMixDelay: true,
		Deliver: func(Received) {}, Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	return &linkRelayer{relay: r, host: host}
}

// newLinkHost starts a libp2p host for key on 127.0.0.1 and closes it when the benchmark ends.
// Its queues hold a whole window of frames; its acknowledgements wait p2p.DefaultAckDelay for
// company, as a node's do.
func newLinkHost(b *testing.B, key *ecdsa.PrivateKey) *p2p.Host {
	lk, err := lcrypto.UnmarshalSecp256k1PrivateKey(crypto.FromECDSA(key))
	if err != nil {
		b.Fatal(err)
	}
	h, err := p2p.New(p2p.Config{PrivKey: lk, ListenAddrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
		Network: "relaybench", HeartbeatInterval: time.Hour, QueueSize: 1 << 14})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

func linkIntroduce(b *testing.B, a, to *p2p.Host) {
	infos, err := peer.AddrInfosFromP2pAddrs(to.Addrs()...)
	if err != nil || len(infos) != 1 {
		b.Fatalf("addr info: %v", err)
	}
	if err := a.AddPeer(infos[0]); err != nil {
		b.Fatal(err)
	}
}

// linkWindow is how many packets A keeps in flight (pushed, and their acknowledgement from N
// not yet processed by R): the push is a closed loop, as fast as R takes packets, without
// overflowing its queues (DefaultQueueSize per worker) and dropping.
const linkWindow = DefaultQueueSize

// linkPush queues frames for to in order, waiting while the host's queue is full or while
// may(i) says frame i must wait.
func linkPush(b *testing.B, h *p2p.Host, to peer.ID, frames [][]byte, may func(i int) bool) {
	for i := 0; i < len(frames); {
		if may != nil && !may(i) {
			time.Sleep(20 * time.Microsecond)
			continue
		}
		err := h.Send(context.Background(), to, p2p.ProtocolMsg, frames[i])
		switch {
		case err == nil:
			i++
		case errors.Is(err, p2p.ErrQueueFull):
			time.Sleep(50 * time.Microsecond) // let the writer drain
		default:
			b.Fatal(err)
		}
	}
}

func linkWait(b *testing.B, what string, cond func() bool, state ...func() string) {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			for _, f := range state {
				what += ": " + f()
			}
			b.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// linkDrops lists m's non-zero drop counters, packets and acknowledgements.
func linkDrops(m *metrics) string {
	var out []string
	for _, v := range []struct {
		what string
		c    *prometheus.CounterVec
	}{{"packets", m.dropped}, {"acks", m.acksDropped}} {
		ch := make(chan prometheus.Metric, 64)
		go func() { v.c.Collect(ch); close(ch) }()
		for pm := range ch {
			var d dto.Metric
			if err := pm.Write(&d); err == nil && d.GetCounter().GetValue() > 0 {
				out = append(out, fmt.Sprintf("%s %s %v", v.what, d.GetLabel()[0].GetValue(), d.GetCounter().GetValue()))
			}
		}
	}
	return strings.Join(out, ", ")
}
