package p2p

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/wait"
)

const (
	tcpLoopback  = "/ip4/127.0.0.1/tcp/0"
	quicLoopback = "/ip4/127.0.0.1/udp/0/quic-v1"
	testNetwork  = "test"
)

func newKey(t testing.TB) crypto.PrivKey {
	t.Helper()
	k, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustAddrs(t testing.TB, ss ...string) []ma.Multiaddr {
	t.Helper()
	out := make([]ma.Multiaddr, 0, len(ss))
	for _, s := range ss {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// testConfig returns a fast config on 127.0.0.1 TCP with a fresh key and registry.
func testConfig(t testing.TB) Config {
	return Config{
		PrivKey:           newKey(t),
		ListenAddrs:       mustAddrs(t, tcpLoopback),
		Network:           testNetwork,
		HeartbeatInterval: 20 * time.Millisecond,
		PingTimeout:       2 * time.Second,
		DialTimeout:       2 * time.Second,
		BackoffMin:        5 * time.Millisecond,
		BackoffMax:        50 * time.Millisecond,
		Registerer:        prometheus.NewRegistry(),
	}
}

// newTestHost starts a host and closes it when the test ends.
func newTestHost(t testing.TB, edit func(*Config)) *Host {
	t.Helper()
	cfg := testConfig(t)
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// addrInfo returns h's AddrInfo as another node would learn it.
func addrInfo(t testing.TB, h *Host) peer.AddrInfo {
	t.Helper()
	infos, err := peer.AddrInfosFromP2pAddrs(h.Addrs()...)
	if err != nil || len(infos) != 1 {
		t.Fatalf("AddrInfosFromP2pAddrs(%v): %v, %d infos", h.Addrs(), err, len(infos))
	}
	return infos[0]
}

// introduce tells a about b.
func introduce(t testing.TB, a, b *Host) {
	t.Helper()
	if err := a.AddPeer(addrInfo(t, b)); err != nil {
		t.Fatalf("AddPeer: %v", err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, timeout, what)
}

// counterValue returns the value of a counter in reg with the given labels.
func counterValue(t testing.TB, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s%v not found", name, labels)
	return 0
}
