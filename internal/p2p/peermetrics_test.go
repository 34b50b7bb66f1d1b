package p2p

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// samples returns every sample of the named metric in reg, keyed by its label values joined with
// "/" in label-name order (direction before peer).
func samples(t *testing.T, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for i, lp := range m.GetLabel() {
				if i > 0 {
					key += "/"
				}
				key += lp.GetValue()
			}
			out[key] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}

func TestPeerMetrics(t *testing.T) {
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newTestHost(t, func(c *Config) { c.Registerer = regA })
	b := newTestHost(t, func(c *Config) { c.Registerer = regB })
	got := make(chan int, 100)
	if err := b.Handle(ProtocolMsg, func(_ peer.ID, frame []byte) { got <- len(frame) }); err != nil {
		t.Fatal(err)
	}
	if err := b.Handle(ProtocolAck, func(peer.ID, []byte) {}); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b) // b does not know a: what it receives from a counts as "other"
	deadline := time.Now().Add(30 * time.Second)
	send := func(n int) {
		for range n {
			sendRetry(t, a, b.ID(), ProtocolMsg, make([]byte, 100), deadline)
		}
		for range n {
			select {
			case <-got:
			case <-time.After(time.Until(deadline)):
				t.Fatal("frames not delivered")
			}
		}
	}
	send(5)
	sendRetry(t, a, b.ID(), ProtocolAck, make([]byte, 40), deadline) // acknowledgements are not packets

	aName, bName := a.ID().String(), b.ID().String()
	eventually(t, 10*time.Second, "A counted 5 packets sent to B", func() bool {
		return samples(t, regA, "relayd_p2p_peer_packets_total")["sent/"+bName] == 5
	})
	if v := samples(t, regA, "relayd_p2p_peer_bytes_total")["sent/"+bName]; v != 500 {
		t.Errorf("A's bytes sent to B: %v, want 500", v)
	}
	recv := samples(t, regB, "relayd_p2p_peer_packets_total")
	if recv["received/"+OtherPeers] != 5 || recv["received/"+aName] != 0 {
		t.Errorf("B's packets received before it knows A: %v, want 5 under %q", recv, OtherPeers)
	}

	// Once B knows A, A's packets on the same stream count under A's own label.
	introduce(t, b, a)
	send(3)
	recv = samples(t, regB, "relayd_p2p_peer_packets_total")
	if recv["received/"+aName] != 3 || recv["received/"+OtherPeers] != 5 {
		t.Errorf("B's packets received after it knows A: %v, want 3 from A and 5 other", recv)
	}
	if v := samples(t, regB, "relayd_p2p_peer_bytes_total")["received/"+aName]; v != 300 {
		t.Errorf("B's bytes received from A: %v, want 300", v)
	}
	if got := b.PeerTraffic(); got[a.ID()] != (PeerBytes{In: 300}) || len(got) != 1 {
		t.Errorf("B's PeerTraffic = %v, want 300 bytes in from A only", got)
	}
	// A counts a batch once its write returned, which may be after B read it.
	eventually(t, 10*time.Second, "A's PeerTraffic of B at 800 bytes out", func() bool {
		return a.PeerTraffic()[b.ID()] == PeerBytes{Out: 800}
	})

	q := samples(t, regA, "relayd_p2p_peer_quality")
	if v, ok := q[bName]; !ok || v < 0 || v > 1 {
		t.Errorf("A's quality of B: %v (present %v), want in [0, 1]", v, ok)
	}
	if v, ok := q[OtherPeers]; !ok || !math.IsNaN(v) {
		t.Errorf("relayd_p2p_peer_quality{peer=%q} = %v (present %v), want NaN: A knows no other peer", OtherPeers, v, ok)
	}
	if d := samples(t, regA, "relayd_p2p_peer_down"); len(d) != 2 {
		t.Errorf("relayd_p2p_peer_down: %v, want B and other", d)
	}
}

func TestTrafficTableBounded(t *testing.T) {
	var tt trafficTable
	ids := make([]peer.ID, MaxPeerLabels+6)
	for i := range ids {
		ids[i] = peer.ID("peer-" + strconv.Itoa(i))
	}
	for i, id := range ids {
		c, own := tt.slot(id)
		if want := i < MaxPeerLabels; own != want {
			t.Fatalf("peer %d: own slot %v, want %v", i, own, want)
		}
		if !own && c != &tt.other {
			t.Fatalf("peer %d shares no counter with the others", i)
		}
	}
	// A slot once given is kept.
	if c, own := tt.slot(ids[3]); !own || c != tt.byPeer[ids[3]] {
		t.Error("peer 3 lost its slot")
	}
	if len(tt.byPeer) != MaxPeerLabels {
		t.Errorf("%d slots, want %d", len(tt.byPeer), MaxPeerLabels)
	}
}
