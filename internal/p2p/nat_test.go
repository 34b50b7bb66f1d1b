package p2p

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/peers"
)

func TestAnnounceIsAllTheHostGives(t *testing.T) {
	announce := mustAddrs(t, "/ip4/203.0.113.7/tcp/9091", "/dns/relay.example/udp/9091/quic-v1")
	h := newTestHost(t, func(c *Config) { c.Announce = announce })
	got := h.host.Addrs()
	slices.SortFunc(got, ma.Multiaddr.Compare)
	want := slices.Clone(announce)
	slices.SortFunc(want, ma.Multiaddr.Compare)
	if !slices.EqualFunc(got, want, ma.Multiaddr.Equal) {
		t.Fatalf("host addresses %v, want exactly %v", got, want)
	}
}

func TestRelayLimitDefaults(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.RelayLimit = RelayLimit{Data: 1 << 20} })
	if got := h.cfg.RelayLimit; got.Data != 1<<20 || got.Duration != DefaultRelayDuration || got.Circuits != DefaultRelayCircuits {
		t.Fatalf("RelayLimit %+v: want Data kept and the defaults elsewhere", got)
	}
	cfg := testConfig(t)
	cfg.RelayLimit.Duration = -time.Second
	if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative RelayLimit: %v, want ErrInvalidConfig", err)
	}
}

// TestRelayedThenDirect: c reaches b through a circuit on relay r (b holds a reservation there),
// more frames than go-libp2p's default relay limit allows flow over the relayed connection and
// both ends say "relayed"; once c learns b's direct address and connects, the frames move to the
// direct connection without a loss.
func TestRelayedThenDirect(t *testing.T) {
	traversal := func(c *Config) { c.Traversal = true }
	// r vouches for its address (Announce), which makes it public and starts its relay service.
	var r *Host
	rAddrs := mustAddrs(t, "/ip4/127.0.0.1/tcp/0")
	r = newTestHost(t, func(c *Config) {
		traversal(c)
		c.ListenAddrs = rAddrs
		c.Announce = mustAddrs(t, "/ip4/127.0.0.1/tcp/1") // replaced below by the real port
	})
	rInfo := peer.AddrInfo{ID: r.ID(), Addrs: slices.DeleteFunc(r.host.Network().ListenAddresses(), isCircuit)}
	b := newTestHost(t, traversal)
	c := newTestHost(t, traversal)

	eventually(t, 20*time.Second, "relay service on r", func() bool {
		return slices.Contains(r.host.Mux().Protocols(), "/libp2p/circuit/relay/0.2.0/hop")
	})
	// A libp2p node that is no relayd node (an Ed25519 PeerId) gets no reservation.
	stranger, err := libp2p.New(libp2p.NoListenAddrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stranger.Close() })
	if err := stranger.Connect(t.Context(), rInfo); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Reserve(t.Context(), stranger, rInfo); err == nil {
		t.Fatal("r reserved a slot for a libp2p node with an Ed25519 PeerId")
	}

	if err := b.host.Connect(t.Context(), rInfo); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Reserve(t.Context(), b.host, rInfo); err != nil {
		t.Fatalf("reserve on r: %v", err)
	}
	circuit, err := ma.NewMultiaddr(rInfo.Addrs[0].String() + "/p2p/" + r.ID().String() + "/p2p-circuit")
	if err != nil {
		t.Fatal(err)
	}

	var got atomic.Int64
	if err := b.Handle(ProtocolMsg, func(peer.ID, []byte) { got.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := c.AddPeer(peer.AddrInfo{ID: b.ID(), Addrs: []ma.Multiaddr{circuit}}); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 1520)
	send := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for range n {
			sendRetry(t, c, b.ID(), ProtocolMsg, frame, deadline)
		}
	}
	// 300 KB: beyond go-libp2p's default relay limit of 128 KiB, which would reset the circuit.
	send(200)
	eventually(t, 20*time.Second, "200 frames over the relay", func() bool { return got.Load() == 200 })
	if c.Reach(b.ID()) != peers.ReachRelayed || b.Reach(c.ID()) != peers.ReachRelayed {
		t.Fatalf("reach c→b %q, b→c %q; want relayed both ways", c.Reach(b.ID()), b.Reach(c.ID()))
	}

	if err := c.AddPeer(addrInfo(t, b)); err != nil {
		t.Fatal(err)
	}
	if err := c.host.Connect(network.WithForceDirectDial(t.Context(), "test"), addrInfo(t, b)); err != nil {
		t.Fatal(err)
	}
	if c.Reach(b.ID()) != peers.ReachDirect {
		t.Fatalf("reach c→b %q after a direct dial, want direct", c.Reach(b.ID()))
	}
	send(10)
	eventually(t, 20*time.Second, "10 more frames", func() bool { return got.Load() == 210 })
	for _, s := range c.host.Network().ConnsToPeer(b.ID()) {
		for _, st := range s.GetStreams() {
			if st.Protocol() == ProtocolMsg.ID(testNetwork) && s.Stat().Limited {
				t.Fatal("the msg stream stayed on the relayed connection")
			}
		}
	}
	if hp := c.HolePunches(); hp.HolePunches != 0 {
		t.Fatalf("hole punches %+v on loopback, want none", hp)
	}
}

func TestParseAnnounce(t *testing.T) {
	got, err := ParseAnnounce([]string{"/ip4/11.0.0.1/tcp/9091", "/dns/n.example.org/udp/9091/quic-v1/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u"})
	if err != nil || len(got) != 2 || got[0].String() != "/ip4/11.0.0.1/tcp/9091" || got[1].String() != "/dns/n.example.org/udp/9091/quic-v1" {
		t.Fatalf("ParseAnnounce: %v, %v", got, err)
	}
	for _, bad := range []string{"nope", "/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u"} {
		if _, err := ParseAnnounce([]string{bad}); err == nil {
			t.Errorf("ParseAnnounce(%q) accepted", bad)
		}
	}
}

func TestChecksSayReachability(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.Traversal = true })
	checks := h.Checks(t.Context())
	// 127.0.0.1 is no public address: the host knows at once it is behind a NAT.
	if len(checks) != 1 || !checks[0].Ready || !strings.Contains(checks[0].Detail, "reachability private, 0 relay addresses") {
		t.Fatalf("checks %+v", checks)
	}
}
