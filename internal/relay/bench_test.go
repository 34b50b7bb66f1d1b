package relay

import (
	"context"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

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

func newBenchNode(b testing.TB, chans *channelMap, paid bool) *benchNode {
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
		l, err := NewLedger(LedgerConfig{Key: k, ChainID: testChainID, Contract: testContract, Channels: chans,
			Store: db, IndexBatch: 1 << 20})
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

func benchmarkRelayHop(b *testing.B, paid bool) {
	chans := newChannelMap()
	a, r, n := newBenchNode(b, chans, paid), newBenchNode(b, chans, paid), newBenchNode(b, chans, paid)
	if paid {
		many := tickets.AmountFor(1 << 40)
		chans.open(a.relay.addr, r.relay.addr, many)
		chans.open(r.relay.addr, n.relay.addr, many)
	}
	// Prepare b.N packets A → R → N, and N's acknowledgement of each (peeled on copies of the
	// keys with their own replay stores).
	frames := make([][]byte, b.N)
	acks := make([][AckFrameLen]byte, b.N)
	dryR, dryN := NewMemoryReplay(), NewMemoryReplay()
	for i := range b.N {
		if _, err := a.relay.Send(b.Context(), []peer.ID{r.id, n.id}, "benchmark message"); err != nil {
			b.Fatal(err)
		}
		frames[i] = append([]byte(nil), a.tr.last...)
		pr, err := packet.Peel(r.key, frames[i][1:MsgFrameLen], dryR)
		if err != nil {
			b.Fatal(err)
		}
		pn, err := packet.Peel(n.key, pr.Next, dryN)
		if err != nil {
			b.Fatal(err)
		}
		ack, err := por.DeriveAck(pn.Secret)
		if err != nil {
			b.Fatal(err)
		}
		acks[i] = ackFrame(idOf(pr.Next), ack)
	}
	committed := make(chan struct{})
	go func() { defer close(committed); r.relay.runCommitter(context.Background()) }()

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.relay.handleMsg(b.Context(), a.id, frames[i])
		r.relay.handleAck(n.id, acks[i][:])
	}
	close(r.relay.acked)
	<-committed // every acknowledged ticket is on disk
	b.StopTimer()
	if got := counter(r.relay.m.forwarded); got != float64(b.N) {
		b.Fatalf("forwarded %v of %d", got, b.N)
	}
	if got := counter(r.relay.m.acksReceived); got != float64(b.N) {
		b.Fatalf("acknowledged %v of %d", got, b.N)
	}
	if paid {
		if got := counter(r.relay.m.ticketsAcked); got != float64(b.N) {
			b.Fatalf("stored %v of %d tickets", got, b.N)
		}
	}
}

// BenchmarkUnavoidablePublicKeyWork is the floor of a paid hop: one ECDH (Peel's), one
// signature recovery (the incoming ticket's signer) and one signature (the outgoing ticket),
// with go-ethereum's libsecp256k1 as the relay uses it.
func BenchmarkUnavoidablePublicKeyWork(b *testing.B) {
	k, _ := newKeyPair(b)
	other, _ := newKeyPair(b)
	pub := other.PublicKey
	hash := crypto.Keccak256([]byte("ticket"))
	sig, err := crypto.Sign(hash, k)
	if err != nil {
		b.Fatal(err)
	}
	scalar := crypto.FromECDSA(k)
	curve := crypto.S256()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		x, _ := curve.ScalarMult(pub.X, pub.Y, scalar)
		if x == nil {
			b.Fatal("ECDH failed")
		}
		if _, err := crypto.Ecrecover(hash, sig); err != nil {
			b.Fatal(err)
		}
		if _, err := crypto.Sign(hash, k); err != nil {
			b.Fatal(err)
		}
	}
}
