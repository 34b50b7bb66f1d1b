package relay

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/crypto/secp256k1"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// captureTransport keeps the last msg frame sent.
type captureTransport struct {
	mu   sync.Mutex
	last []byte
}

func (c *captureTransport) Send(_ context.Context, _ peer.ID, proto p2p.Protocol, frame []byte) error {
	if proto == p2p.ProtocolMsg {
		c.mu.Lock()
		c.last = append(c.last[:0], frame...)
		c.mu.Unlock()
	}
	return nil
}
func (*captureTransport) Handle(p2p.Protocol, p2p.Handler) error { return nil }

type benchNode struct {
	key   *packet.PrivateKey
	id    peer.ID
	relay *Relay
	tr    *captureTransport
}

func newBenchNode(b testing.TB, chans *channelstest.Map, paid bool) *benchNode {
	b.Helper()
	k, addr := newKeyPair(b)
	_ = addr
	n := &benchNode{tr: &captureTransport{}}
	cfg := Config{Key: k, Transport: n.tr, Replay: NewMemoryReplay(), NoMixDelay: true, Deliver: func(Received) {},
		QueueSize: 1 << 16}
	if paid {
		db, err := store.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		// Production defaults: outgoing indexes are reserved DefaultIndexBatch at a time.
		l, err := ledger.New(ledger.Config{Key: k, ChainID: testChainID, Contract: testContract, Channels: chans,
			Store: db})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Payments = l
	}
	var err error
	if n.relay, err = New(cfg); err != nil {
		b.Fatal(err)
	}
	n.key = n.relay.key
	n.id = n.relay.ID()
	return n
}

// BenchmarkRelayHop measures one relayer's full hop in-process, without network: frame
// decode, Peel (one ECDH), incoming ticket check (PoR challenge + signer recovery + channel
// state), pending entry, acknowledgement to the previous hop, next ticket (index + signature),
// forward, and then the next hop's acknowledgement (VerifyAck, response) with the acknowledged
// ticket written to the store in batches (bbolt, fsync per batch). Mixing delay 0. Packets and
// the next hop's acknowledgements are prepared before the clock starts.
func BenchmarkRelayHop(b *testing.B) {
	for _, paid := range []bool{true, false} {
		name := "paid"
		if !paid {
			name = "unpaid"
		}
		b.Run(name, func(b *testing.B) { benchmarkRelayHop(b, paid) })
	}
}

// hopBench is one relayer R with lanes of traffic prepared for it: lane j is packets from sender
// A_j over R to next hop N_j, with N_j's acknowledgement of each.
type hopBench struct {
	r      *benchNode
	lanes  []hopLane
	paid   bool
	commit chan struct{} // closed when R's committer has stored every acknowledged ticket
}

type hopLane struct {
	a, n   *benchNode
	frames [][]byte
	acks   [][AckFrameLen]byte
}

func newHopBench(b *testing.B, paid bool, lanes, perLane int) *hopBench {
	chans := channelstest.New()
	h := &hopBench{r: newBenchNode(b, chans, paid), paid: paid, commit: make(chan struct{})}
	many := tickets.AmountFor(1 << 40)
	for range lanes {
		l := hopLane{a: newBenchNode(b, chans, paid), n: newBenchNode(b, chans, paid)}
		if paid {
			chans.Open(l.a.relay.addr, h.r.relay.addr, many)
			chans.Open(h.r.relay.addr, l.n.relay.addr, many)
		}
		// Packets A → R → N and N's acknowledgement of each, peeled on copies of the keys
		// with their own replay stores.
		dryR, dryN := NewMemoryReplay(), NewMemoryReplay()
		l.frames = make([][]byte, perLane)
		l.acks = make([][AckFrameLen]byte, perLane)
		for i := range perLane {
			if _, err := l.a.relay.Send(b.Context(), []peer.ID{h.r.id, l.n.id}, "benchmark message"); err != nil {
				b.Fatal(err)
			}
			l.frames[i] = append([]byte(nil), l.a.tr.last...)
			pr, err := packet.Peel(h.r.key, l.frames[i][1:ticketOffset], time.Now(), dryR)
			if err != nil {
				b.Fatal(err)
			}
			pn, err := packet.Peel(l.n.key, pr.Next, time.Now(), dryN)
			if err != nil {
				b.Fatal(err)
			}
			ack, err := por.DeriveAck(pn.Secret)
			if err != nil {
				b.Fatal(err)
			}
			l.acks[i] = ackFrame(idOf(pr.Next), ack)
		}
		h.lanes = append(h.lanes, l)
	}
	go func() { defer close(h.commit); h.r.relay.runCommitter(context.Background()) }()
	return h
}

// hop is one full hop of packet i of lane l at R: the msg frame, then the next hop's ack.
func (h *hopBench) hop(ctx context.Context, l, i int) {
	ln := &h.lanes[l]
	h.r.relay.handleMsg(ctx, ln.a.id, ln.frames[i])
	h.r.relay.handleAck(ln.n.id, ln.acks[i][:])
}

// finish waits until every acknowledged ticket is on disk and checks the counts.
func (h *hopBench) finish(b *testing.B) {
	h.r.relay.acked.close()
	<-h.commit
	b.StopTimer()
	r := h.r.relay
	if got := counter(r.m.forwarded); got != float64(b.N) {
		b.Fatalf("forwarded %v of %d", got, b.N)
	}
	if got := counter(r.m.acksReceived); got != float64(b.N) {
		b.Fatalf("acknowledged %v of %d", got, b.N)
	}
	if h.paid {
		if got := counter(r.m.ticketsAcked); got != float64(b.N) {
			b.Fatalf("stored %v of %d tickets", got, b.N)
		}
	}
}

func benchmarkRelayHop(b *testing.B, paid bool) {
	h := newHopBench(b, paid, 1, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		h.hop(b.Context(), 0, i)
	}
	h.finish(b)
}

// BenchmarkRelayHopParallel is BenchmarkRelayHop on every core (b.RunParallel): one relayer,
// one lane of traffic per goroutine (its own previous and next hop; packets of one lane stay in
// order, which ticket indexes need; it calls the stages directly, not the workers), sharing the
// relayer's ledger, pending table, store and committer. ns/op is wall time per hop of the
// whole relayer, so packets/s = 1e9 / ns/op.
func BenchmarkRelayHopParallel(b *testing.B) {
	lanes := runtime.GOMAXPROCS(0)
	h := newHopBench(b, true, lanes, b.N) // a lane may get every iteration
	var lane atomic.Int32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		l := int(lane.Add(1) - 1)
		ctx := context.Background()
		for i := 0; pb.Next(); i++ {
			h.hop(ctx, l, i)
		}
	})
	h.finish(b)
}

// BenchmarkUnavoidablePublicKeyWork is the floor of a paid hop: one ECDH (Peel's), one
// signature recovery (the incoming ticket's signer) and one signature (the outgoing ticket),
// with go-ethereum's libsecp256k1 as the relay uses it.
func BenchmarkUnavoidablePublicKeyWork(b *testing.B) {
	floor := newFloorWork(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		floor.run(b)
	}
}

// floorWork is one ECDH, one ecrecover and one signature through go-ethereum's libsecp256k1.
type floorWork struct {
	k      *ecdsa.PrivateKey
	px, py *big.Int // the peer's public key, an affine point
	hash   []byte
	sig    []byte
	scalar []byte
}

func newFloorWork(b *testing.B) *floorWork {
	k, _ := newKeyPair(b)
	other, _ := newKeyPair(b)
	px, py := secp256k1.DecompressPubkey(crypto.CompressPubkey(&other.PublicKey))
	f := &floorWork{k: k, px: px, py: py, hash: crypto.Keccak256([]byte("ticket")), scalar: crypto.FromECDSA(k)}
	var err error
	if f.sig, err = crypto.Sign(f.hash, k); err != nil {
		b.Fatal(err)
	}
	return f
}

func (f *floorWork) run(b *testing.B) {
	x, _ := crypto.S256().ScalarMult(f.px, f.py, f.scalar)
	if x == nil {
		b.Fatal("ECDH failed")
	}
	if _, err := crypto.Ecrecover(f.hash, f.sig); err != nil {
		b.Fatal(err)
	}
	if _, err := crypto.Sign(f.hash, f.k); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRelayHopVsFloor alternates one paid hop (as BenchmarkRelayHop/paid) and one run of
// the unavoidable public-key work on the same goroutine, timing each, so that both see the same
// load on a shared machine; it reports hop-ns/op, floor-ns/op and their ratio hop/floor. The
// committer's final drain counts as hop time.
func BenchmarkRelayHopVsFloor(b *testing.B) {
	h := newHopBench(b, true, 1, b.N)
	floor := newFloorWork(b)
	var hopNs, floorNs time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		h.hop(b.Context(), 0, i)
		t1 := time.Now()
		floor.run(b)
		hopNs += t1.Sub(t0)
		floorNs += time.Since(t1)
	}
	t0 := time.Now()
	h.finish(b)
	hopNs += time.Since(t0)
	b.ReportMetric(float64(hopNs)/float64(b.N), "hop-ns/op")
	b.ReportMetric(float64(floorNs)/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(hopNs)/float64(floorNs), "hop/floor")
}

// BenchmarkSend measures a sender's whole message over 2 relayers in paid mode: the packet
// (NewRoute + Seal), its proof-of-relay data (four base-point multiplications with one
// shared inversion) and the first hop's ticket (index + signature), handed to the transport.
func BenchmarkSend(b *testing.B) {
	chans := channelstest.New()
	a, r, n := newBenchNode(b, chans, true), newBenchNode(b, chans, true), newBenchNode(b, chans, true)
	chans.Open(a.relay.addr, r.relay.addr, tickets.AmountFor(1<<40))
	route := []peer.ID{r.id, n.id}
	if _, err := a.relay.Send(b.Context(), route, "warm up the peer cache"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := a.relay.Send(b.Context(), route, "benchmark message"); err != nil {
			b.Fatal(err)
		}
	}
}
