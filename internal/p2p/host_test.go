package p2p

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// sendRetry sends frame, retrying while the queue is full, until the deadline.
func sendRetry(t testing.TB, h *Host, to peer.ID, proto Protocol, frame []byte, deadline time.Time) {
	t.Helper()
	for {
		err := h.Send(context.Background(), to, proto, frame)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrQueueFull) {
			t.Fatalf("Send: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Send: queue still full at deadline")
		}
		time.Sleep(100 * time.Microsecond) // back off while the writer drains
	}
}

// streamsTo counts h's open streams to p with protocol pid and direction dir.
func streamsTo(h *Host, p peer.ID, pid protocol.ID, dir network.Direction) int {
	n := 0
	for _, c := range h.host.Network().ConnsToPeer(p) {
		for _, s := range c.GetStreams() {
			if s.Protocol() == pid && s.Stat().Direction == dir {
				n++
			}
		}
	}
	return n
}

func TestSendInOrderOnOneStream(t *testing.T) {
	const frames = 10_000
	a := newTestHost(t, nil)
	var regB *prometheus.Registry
	b := newTestHost(t, func(c *Config) {
		regB = prometheus.NewRegistry()
		c.Registerer = regB
	})

	var (
		mu      sync.Mutex
		next    uint64
		badFrom error
	)
	if err := b.Handle(ProtocolMsg, func(from peer.ID, frame []byte) {
		mu.Lock()
		defer mu.Unlock()
		if from != a.ID() && badFrom == nil {
			badFrom = errors.New("frame from unexpected peer " + from.String())
		}
		if got := binary.BigEndian.Uint64(frame); got != next && badFrom == nil {
			badFrom = errors.New("frame out of order")
		}
		next++
	}); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b)

	deadline := time.Now().Add(60 * time.Second)
	frame := make([]byte, 256)
	maxStreams := 0
	for i := range uint64(frames) {
		binary.BigEndian.PutUint64(frame, i)
		sendRetry(t, a, b.ID(), ProtocolMsg, frame, deadline)
		if i%1000 == 999 {
			maxStreams = max(maxStreams, streamsTo(a, b.ID(), ProtocolMsg.ID(testNetwork), network.DirOutbound))
		}
	}
	eventually(t, time.Until(deadline), "all frames delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return next == frames
	})
	mu.Lock()
	if badFrom != nil {
		t.Fatal(badFrom)
	}
	mu.Unlock()

	if maxStreams != 1 {
		t.Errorf("outbound msg streams during the run: max %d, want 1", maxStreams)
	}
	if n := streamsTo(a, b.ID(), ProtocolMsg.ID(testNetwork), network.DirOutbound); n != 1 {
		t.Errorf("A's outbound msg streams to B: %d, want 1", n)
	}
	if n := streamsTo(b, a.ID(), ProtocolMsg.ID(testNetwork), network.DirInbound); n != 1 {
		t.Errorf("B's inbound msg streams from A: %d, want 1", n)
	}
	if got := counterValue(t, regB, "relayd_p2p_frames_received_total", map[string]string{"protocol": "msg"}); got != frames {
		t.Errorf("frames_received_total = %v, want %d", got, frames)
	}
	if got := counterValue(t, regB, "relayd_p2p_frame_bytes_received_total", map[string]string{"protocol": "msg"}); got != frames*256 {
		t.Errorf("frame_bytes_received_total = %v, want %d", got, frames*256)
	}
}

func TestTransports(t *testing.T) {
	for _, tc := range []struct {
		name, listen, want string
	}{
		{"tcp", tcpLoopback, "/tcp/"},
		{"quic", quicLoopback, "/quic-v1"},
		{"both prefers tcp", tcpLoopback + " " + quicLoopback, "/tcp/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			listen := func(c *Config) { c.ListenAddrs = mustAddrs(t, strings.Fields(tc.listen)...) }
			a := newTestHost(t, listen)
			b := newTestHost(t, listen)
			var msgs, acks atomic.Int64
			if err := b.Handle(ProtocolMsg, func(peer.ID, []byte) { msgs.Add(1) }); err != nil {
				t.Fatal(err)
			}
			if err := b.Handle(ProtocolAck, func(peer.ID, []byte) { acks.Add(1) }); err != nil {
				t.Fatal(err)
			}
			if n := len(b.Addrs()); n != len(strings.Fields(tc.listen)) {
				t.Errorf("B has %d addrs %v, want one per listen address", n, b.Addrs())
			}
			introduce(t, a, b)
			deadline := time.Now().Add(20 * time.Second)
			for range 100 {
				sendRetry(t, a, b.ID(), ProtocolMsg, []byte("packet"), deadline)
				sendRetry(t, a, b.ID(), ProtocolAck, []byte("ack"), deadline)
			}
			eventually(t, time.Until(deadline), "frames on both protocols", func() bool {
				return msgs.Load() == 100 && acks.Load() == 100
			})
			var conn network.Conn
			for _, c := range a.host.Network().ConnsToPeer(b.ID()) {
				if strings.Contains(c.RemoteMultiaddr().String(), tc.want) {
					conn = c
				}
			}
			if conn == nil {
				t.Fatalf("no %s connection to B: %v", tc.want, a.host.Network().ConnsToPeer(b.ID()))
			}
			if tc.want == "/tcp/" {
				if got := conn.ConnState().Security; got != "/noise" {
					t.Errorf("TCP security = %q, want /noise", got)
				}
				if got := conn.ConnState().StreamMultiplexer; got != "/yamux/1.0.0" {
					t.Errorf("TCP muxer = %q, want /yamux/1.0.0", got)
				}
			}
			if _, err := a.Ping(t.Context(), b.ID()); err != nil {
				t.Errorf("Ping over %s: %v", tc.name, err)
			}
		})
	}
}

func TestOversizedFrameRefused(t *testing.T) {
	const maxFrame = 1024
	var regA *prometheus.Registry
	a := newTestHost(t, func(c *Config) {
		c.MaxFrameSize = maxFrame
		regA = prometheus.NewRegistry()
		c.Registerer = regA
	})
	b := newTestHost(t, func(c *Config) { c.MaxFrameSize = maxFrame })
	var got atomic.Int64
	if err := b.Handle(ProtocolMsg, func(_ peer.ID, f []byte) { got.Add(int64(len(f))) }); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b)

	err := a.Send(t.Context(), b.ID(), ProtocolMsg, make([]byte, maxFrame+1))
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Send(max+1) = %v, want ErrFrameTooLarge", err)
	}
	if v := counterValue(t, regA, "relayd_p2p_frames_dropped_total", map[string]string{"protocol": "msg", "reason": "oversized"}); v != 1 {
		t.Errorf("dropped{oversized} = %v, want 1", v)
	}
	if err := a.Send(t.Context(), b.ID(), ProtocolMsg, make([]byte, maxFrame)); err != nil {
		t.Fatalf("Send(max) = %v", err)
	}
	eventually(t, 10*time.Second, "max-size frame delivered", func() bool { return got.Load() == maxFrame })
}

func TestReceiveRejectsBadLength(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length uint32
		reason string
	}{
		{"oversized", 1 << 20, dropOversized},
		{"zero", 0, dropBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var regB *prometheus.Registry
			b := newTestHost(t, func(c *Config) {
				c.MaxFrameSize = 1024
				regB = prometheus.NewRegistry()
				c.Registerer = regB
			})
			if err := b.Handle(ProtocolMsg, func(peer.ID, []byte) { t.Error("handler called for a bad frame") }); err != nil {
				t.Fatal(err)
			}
			a := newTestHost(t, nil)
			introduce(t, a, b)

			// Write a raw header on a stream of our own, bypassing Send's checks.
			s, err := a.host.NewStream(t.Context(), b.ID(), ProtocolMsg.ID(testNetwork))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Reset()
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], tc.length)
			if _, err := s.Write(append(hdr[:], "payload"...)); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "frame dropped on receive", func() bool {
				return counterValue(t, regB, "relayd_p2p_frames_dropped_total", map[string]string{"protocol": "msg", "reason": tc.reason}) == 1
			})
			// The stream is dropped: reading from it fails.
			_ = s.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := bufio.NewReader(s).ReadByte(); err == nil {
				t.Error("stream still open after a bad frame")
			}
		})
	}
}

func TestQueueFullDoesNotBlock(t *testing.T) {
	var regA *prometheus.Registry
	a := newTestHost(t, func(c *Config) {
		c.QueueSize = 4
		regA = prometheus.NewRegistry()
		c.Registerer = regA
	})
	b := newTestHost(t, nil)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the hosts' Close: Close waits for handlers
	if err := b.Handle(ProtocolMsg, func(peer.ID, []byte) { <-release }); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b)

	frame := make([]byte, DefaultMaxFrameSize)
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for err == nil {
		if time.Now().After(deadline) {
			t.Fatal("queue never filled")
		}
		start := time.Now()
		err = a.Send(t.Context(), b.ID(), ProtocolMsg, frame)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Send blocked for %s", d)
		}
		if err == nil {
			time.Sleep(100 * time.Microsecond) // let the writer take the frame
		}
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Send = %v, want ErrQueueFull", err)
	}
	if v := counterValue(t, regA, "relayd_p2p_frames_dropped_total", map[string]string{"protocol": "msg", "reason": "queue_full"}); v != 1 {
		t.Errorf("dropped{queue_full} = %v, want 1", v)
	}
	unblock()
}

// startCounting starts a host with key on addr that counts the frames it receives on proto.
// The caller closes it.
func startCounting(t *testing.T, key crypto.PrivKey, addr string, proto Protocol) (*Host, *atomic.Int64) {
	t.Helper()
	h, err := New(Config{PrivKey: key, ListenAddrs: mustAddrs(t, addr), Network: testNetwork})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	if err := h.Handle(proto, func(peer.ID, []byte) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	return h, &n
}

func TestRestartedPeerReachedAgain(t *testing.T) {
	a := newTestHost(t, nil)
	keyB := newKey(t)
	startB := func() (*Host, *atomic.Int64) { return startCounting(t, keyB, tcpLoopback, ProtocolMsg) }
	b1, got1 := startB()
	introduce(t, a, b1)
	if err := a.Send(t.Context(), b1.ID(), ProtocolMsg, []byte("one")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "first B receives", func() bool { return got1.Load() == 1 })
	oldAddrs := b1.Addrs()
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}

	b2, got2 := startB()
	defer b2.Close()
	if b2.Addrs()[0].Equal(oldAddrs[0]) {
		t.Fatalf("restarted B reuses address %s", oldAddrs[0])
	}
	introduce(t, a, b2)
	// The old stream may still look usable until a write fails, so keep sending.
	eventually(t, 20*time.Second, "restarted B receives", func() bool {
		_ = a.Send(t.Context(), b2.ID(), ProtocolMsg, []byte("again"))
		return got2.Load() > 0
	})
	if n := streamsTo(a, b2.ID(), ProtocolMsg.ID(testNetwork), network.DirOutbound); n != 1 {
		t.Errorf("outbound msg streams after restart: %d, want 1", n)
	}
}

func TestSendErrors(t *testing.T) {
	a := newTestHost(t, nil)
	b := newTestHost(t, nil)
	introduce(t, a, b)
	unknown, err := peer.IDFromPrivateKey(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	for _, tc := range []struct {
		name  string
		ctx   context.Context
		to    peer.ID
		proto Protocol
		frame []byte
		want  error
	}{
		{"unknown peer", t.Context(), unknown, ProtocolMsg, []byte("x"), ErrNoAddress},
		{"self", t.Context(), a.ID(), ProtocolMsg, []byte("x"), ErrSelf},
		{"heartbeat protocol", t.Context(), b.ID(), ProtocolHeartbeat, []byte("x"), ErrUnknownProtocol},
		{"zero protocol", t.Context(), b.ID(), 0, []byte("x"), ErrUnknownProtocol},
		{"empty frame", t.Context(), b.ID(), ProtocolAck, nil, ErrBadFrame},
		{"oversized", t.Context(), b.ID(), ProtocolAck, make([]byte, DefaultMaxFrameSize+1), ErrFrameTooLarge},
		{"cancelled context", canceled, b.ID(), ProtocolMsg, []byte("x"), context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := a.Send(tc.ctx, tc.to, tc.proto, tc.frame); !errors.Is(err, tc.want) {
				t.Errorf("Send = %v, want %v", err, tc.want)
			}
		})
	}

	t.Run("closed", func(t *testing.T) {
		c := newTestHost(t, nil)
		introduce(t, c, b)
		if err := c.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x")); err != nil {
			t.Fatal(err) // creates the outbound stream state before Close
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x")); !errors.Is(err, ErrClosed) {
			t.Errorf("Send after Close = %v, want ErrClosed", err)
		}
		if _, err := c.Ping(t.Context(), b.ID()); !errors.Is(err, ErrClosed) {
			t.Errorf("Ping after Close = %v, want ErrClosed", err)
		}
		if err := c.AddPeer(addrInfo(t, b)); !errors.Is(err, ErrClosed) {
			t.Errorf("AddPeer after Close = %v, want ErrClosed", err)
		}
		if err := c.Run(t.Context()); err != nil {
			t.Errorf("Run after Close = %v, want nil", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

func TestStreamFailureBacksOff(t *testing.T) {
	a := newTestHost(t, func(c *Config) {
		c.BackoffMin = time.Hour // the first failure blocks sends for the rest of the test
		c.BackoffMax = time.Hour
	})
	b := newTestHost(t, nil)
	introduce(t, a, b)
	// B never registered a msg handler, so it refuses the stream.
	if err := a.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "ErrUnreachable", func() bool {
		err := a.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x"))
		return errors.Is(err, ErrUnreachable)
	})
	// AddPeer ends the backoff.
	introduce(t, a, b)
	if err := a.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x")); err != nil {
		t.Errorf("Send after AddPeer = %v, want nil", err)
	}
}

func TestNewConfigErrors(t *testing.T) {
	edKey, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no key", func(c *Config) { c.PrivKey = nil }},
		{"ed25519 key", func(c *Config) { c.PrivKey = edKey }},
		{"no listen addrs", func(c *Config) { c.ListenAddrs = nil }},
		{"empty network", func(c *Config) { c.Network = "" }},
		{"slash in network", func(c *Config) { c.Network = "a/b" }},
		{"negative interval", func(c *Config) { c.HeartbeatInterval = -1 }},
		{"negative queue", func(c *Config) { c.QueueSize = -1 }},
		{"negative ack delay", func(c *Config) { c.AckDelay = -time.Millisecond }},
		{"huge frames", func(c *Config) { c.MaxFrameSize = MaxFrameSizeLimit + 1 }},
		{"backoff max below min", func(c *Config) { c.BackoffMin, c.BackoffMax = time.Second, time.Millisecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			tc.edit(&cfg)
			h, err := New(cfg)
			if err == nil {
				h.Close()
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestListenAddrInUse(t *testing.T) {
	for _, listen := range []string{tcpLoopback, quicLoopback} {
		t.Run(listen, func(t *testing.T) {
			first := newTestHost(t, func(c *Config) { c.ListenAddrs = mustAddrs(t, listen) })
			taken := first.host.Network().ListenAddresses()[0]
			cfg := testConfig(t)
			cfg.ListenAddrs = append(mustAddrs(t, tcpLoopback), taken)
			h, err := New(cfg)
			if err == nil {
				h.Close()
			}
			if !errors.Is(err, ErrAddrInUse) {
				t.Fatalf("New on %s = %v, want ErrAddrInUse", taken, err)
			}
			if !strings.Contains(err.Error(), taken.String()) {
				t.Errorf("error %q does not name the address", err)
			}
			// The failed New left nothing registered: the registry is usable again.
			cfg.ListenAddrs = mustAddrs(t, tcpLoopback)
			if again, err := New(cfg); err != nil {
				t.Errorf("New after a failed New with the same registry: %v", err)
			} else {
				again.Close()
			}
		})
	}
}

func TestAddPeerAndPeers(t *testing.T) {
	a := newTestHost(t, nil)
	b := newTestHost(t, nil)
	edKey, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	edID, err := peer.IDFromPrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddPeer(peer.AddrInfo{ID: a.ID(), Addrs: b.host.Addrs()}); !errors.Is(err, ErrSelf) {
		t.Errorf("AddPeer(self) = %v, want ErrSelf", err)
	}
	if err := a.AddPeer(peer.AddrInfo{ID: edID, Addrs: b.host.Addrs()}); !errors.Is(err, ErrInvalidPeerID) {
		t.Errorf("AddPeer(ed25519) = %v, want ErrInvalidPeerID", err)
	}
	introduce(t, a, b)
	peers := a.Peers()
	if len(peers) != 1 {
		t.Fatalf("Peers() = %d peers, want 1", len(peers))
	}
	p := peers[0]
	if p.ID != b.ID() || len(p.Addrs) == 0 || p.Quality != InitialQuality || !p.LastSeen.IsZero() || p.Connected {
		t.Errorf("Peers()[0] = %+v", p)
	}
	a.RemovePeer(b.ID())
	if n := len(a.Peers()); n != 0 {
		t.Errorf("Peers() after RemovePeer = %d, want 0", n)
	}
}

func TestProtocolIDs(t *testing.T) {
	for _, tc := range []struct {
		p    Protocol
		want protocol.ID
	}{
		{ProtocolMsg, "/relay/dufour/msg/1.0.0"},
		{ProtocolAck, "/relay/dufour/ack/1.0.0"},
		{ProtocolHeartbeat, "/relay/dufour/heartbeat/1.0.0"},
	} {
		if got := tc.p.ID("dufour"); got != tc.want {
			t.Errorf("%s.ID = %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestPeerRestartedInPlaceReachedAgain: B is killed and comes back on the same address and
// dials A itself (as a restarted relayer forwarding its next packet does); A's acknowledgements
// to B, whose old stream died with B, reach the new B within seconds.
func TestPeerRestartedInPlaceReachedAgain(t *testing.T) {
	a := newTestHost(t, nil)
	keyB := newKey(t)
	startB := func(addr string) (*Host, *atomic.Int64) { return startCounting(t, keyB, addr, ProtocolAck) }
	b1, got1 := startB(tcpLoopback)
	introduce(t, b1, a)
	if err := b1.Send(t.Context(), a.ID(), ProtocolMsg, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "A knows B", func() bool { return a.hasRoute(b1.ID()) })
	if err := a.Send(t.Context(), b1.ID(), ProtocolAck, []byte("ack 1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "first B receives", func() bool { return got1.Load() == 1 })
	listen := strings.TrimSuffix(b1.Addrs()[0].String(), "/p2p/"+b1.ID().String())
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	b2, got2 := startB(listen)
	defer b2.Close()
	introduce(t, b2, a)
	if err := b2.Send(t.Context(), a.ID(), ProtocolMsg, []byte("back")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "B's new connection", func() bool { return len(a.host.Network().ConnsToPeer(b2.ID())) > 0 })
	// Every acknowledgement is taken and arrives: the first write goes to the stream that died
	// with the old B and is repeated on a new one, and none is refused for a backoff.
	const n = 20
	for i := range n {
		if err := a.Send(t.Context(), b2.ID(), ProtocolAck, []byte("ack")); err != nil {
			t.Fatalf("ack %d: %v", i, err)
		}
	}
	eventually(t, 10*time.Second, "restarted B receives every ack", func() bool { return got2.Load() == n })
}

// TestFailedSendMarksPeerDown: a peer a stream cannot be opened to counts as down (for path
// selection) until its next successful heartbeat.
func TestFailedSendMarksPeerDown(t *testing.T) {
	a := newTestHost(t, func(c *Config) { c.HeartbeatInterval = 50 * time.Millisecond })
	b := newTestHost(t, nil) // no msg handler: it refuses the stream
	introduce(t, a, b)
	down := func() bool {
		for _, p := range a.Peers() {
			if p.ID == b.ID() {
				return p.Down
			}
		}
		t.Fatal("B is not a known peer")
		return false
	}
	if down() {
		t.Fatal("a peer never sent to is down")
	}
	// PeersVersion changes with each change of Down (callers rebuild what they derived from Peers).
	v0 := a.PeersVersion()
	if err := a.Send(t.Context(), b.ID(), ProtocolMsg, []byte("x")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "B marked down", down)
	v1 := a.PeersVersion()
	if v1 == v0 {
		t.Fatal("PeersVersion did not change when B went down")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 10*time.Second, "B up again after a heartbeat", func() bool { return !down() })
	v2 := a.PeersVersion()
	if v2 == v1 {
		t.Fatal("PeersVersion did not change when B came back")
	}
	a.RemovePeer(b.ID())
	if a.PeersVersion() == v2 {
		t.Fatal("PeersVersion did not change when B was removed")
	}
}
