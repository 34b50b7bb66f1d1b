package relay

import (
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

// TestAcksQueueApartFromPackets: when the workers' packet queue is full, new packets are dropped as
// overload but acknowledgements, which settle tickets for work already done, are still taken.
// (The workers are not started, so nothing drains the queues; each holds QueueSize per worker.)
func TestAcksQueueApartFromPackets(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	const size = 8
	r, err := New(Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), NoMixDelay: true,
		Deliver: func(Received) {}, Workers: 1, QueueSize: size, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	r.running.Store(true)
	from := peer.ID("a peer")
	room := size // one previous hop's share of the packet queue
	for range room + 3 {
		r.onMsg(from, make([]byte, MsgFrameLen))
	}
	if got := counter(r.m.dropped.WithLabelValues(reasonOverload)); got != 3 {
		t.Fatalf("packets dropped as overload: %v, want 3", got)
	}
	for range size * r.cfg.Workers {
		r.onAck(from, make([]byte, AckFrameLen))
	}
	if got := counter(r.m.acksDropped.WithLabelValues(reasonOverload)); got != 0 {
		t.Fatalf("acknowledgements dropped as overload behind a full packet queue: %v, want 0", got)
	}
	r.onAck(from, make([]byte, AckFrameLen))
	if got := counter(r.m.acksDropped.WithLabelValues(reasonOverload)); got != 1 {
		t.Fatalf("acknowledgements dropped once their own queue is full: %v, want 1", got)
	}
}
