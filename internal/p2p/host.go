package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"

	"github.com/relayd/relayd/internal/health"
)

// Handler receives the frames of one protocol. from is the authenticated sender.
//
// The read loop of a stream calls its handler sequentially, one frame at a time,
// so frames from one peer on one protocol arrive in order; a handler that blocks
// stalls that stream (and, through flow control, the sender's queue), so it must
// return quickly and hand heavy work to its own workers. frame is only valid
// during the call: the read loop reuses its buffer for the next frame, so a
// handler that keeps the bytes must copy them. Handlers of different streams run
// concurrently.
type Handler func(from peer.ID, frame []byte)

// Host is the node's libp2p transport. Create it with New, register handlers with
// Handle, add peers with AddPeer, run the heartbeat with Run and release it with
// Close. All methods are safe for concurrent use.
type Host struct {
	cfg     Config
	log     *slog.Logger
	host    host.Host
	self    peer.ID
	pids    [3]protocol.ID // indexed by Protocol-1
	metrics *metrics

	// ctx ends when Close starts; every goroutine and dial of the host derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	handlers [numFrameProtocols]atomic.Pointer[Handler]
	running  atomic.Bool

	mu     sync.RWMutex // guards closed, out and wg.Add against Close
	closed bool
	out    map[outKey]*outbound
	wg     sync.WaitGroup // writers, inbound stream loops, heartbeat pings

	// reach records hole punches (Reach); hostReady is closed once host is set, for the callbacks
	// libp2p starts before New returns (relayCandidates).
	reach *reachTracker
	// natted: the node is behind a NAT (no public address, none announced): its first
	// connections to peers reached only through relays wait for its hole-punching service.
	natted    bool
	started   time.Time
	hostReady chan struct{}

	peersMu sync.Mutex
	// peersVersion changes whenever a peer is added or removed or goes down or up (PeersVersion).
	peersVersion atomic.Uint64
	peers        map[peer.ID]*peerState
	// traffic counts packets per peer (relayd_p2p_peer_*).
	traffic trafficTable
}

// New creates the libp2p host and starts listening on cfg.ListenAddrs. Inbound
// heartbeat pings are answered at once; msg and ack streams are accepted once
// their handler is registered with Handle. New starts no goroutines of its own:
// the heartbeat runs in Run, and writers start with the first Send to a peer.
// Everything New starts ends in Close.
//
// The host uses TCP with Noise and Yamux, and QUIC v1 (which brings its own TLS 1.3
// security and multiplexing); it has no mDNS, DHT, NAT port mapping or libp2p metrics, and
// relays and hole punching only with Config.Traversal.
func New(cfg Config) (*Host, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, a := range cfg.ListenAddrs {
		if err := probeListen(a); err != nil {
			return nil, err
		}
	}
	m := newMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{
		cfg:       cfg,
		log:       cfg.Logger.With(slog.String("component", "p2p")),
		metrics:   m,
		ctx:       ctx,
		cancel:    cancel,
		out:       make(map[outKey]*outbound),
		peers:     make(map[peer.ID]*peerState),
		hostReady: make(chan struct{}),
		started:   time.Now(),
	}
	h.reach = newReachTracker(m)
	tcpOpts := []any{tcp.DisableReuseport()}
	if cfg.Traversal {
		tcpOpts = nil // TCP hole punching dials from the listen port
	}
	opts := []libp2p.Option{
		libp2p.Identity(cfg.PrivKey),
		libp2p.NoListenAddrs,
		libp2p.Transport(tcp.NewTCPTransport, tcpOpts...),
		libp2p.Transport(libp2pquic.NewTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.Ping(false),
		libp2p.DisableMetrics(),
		libp2p.WithDialTimeout(cfg.DialTimeout),
		libp2p.SwarmOpts(swarm.WithDialRanker(tcpFirstRanker)),
	}
	if len(cfg.Announce) > 0 {
		announce := slices.Clone(cfg.Announce)
		opts = append(opts, libp2p.AddrsFactory(func([]ma.Multiaddr) []ma.Multiaddr { return slices.Clone(announce) }))
	}
	if cfg.Traversal {
		more, err := h.traversalOptions(cfg)
		if err != nil {
			cancel()
			return nil, err
		}
		opts = append(opts, more...)
	} else {
		opts = append(opts, libp2p.DisableRelay())
	}
	lh, err := libp2p.New(opts...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("create libp2p host: %w", err)
	}
	h.host, h.self = lh, lh.ID()
	close(h.hostReady)
	// Listen one address at a time: libp2p's Listen succeeds if any address works,
	// and we want every configured address or a clear error.
	for _, a := range cfg.ListenAddrs {
		if err := lh.Network().Listen(a); err != nil {
			cancel()
			_ = lh.Close()
			return nil, listenError(a, err)
		}
	}
	m.collectors = append(m.collectors, peerCollector{h})
	if err := m.register(cfg.Registerer); err != nil {
		cancel()
		_ = lh.Close()
		return nil, err
	}

	for _, p := range []Protocol{ProtocolMsg, ProtocolAck, ProtocolHeartbeat} {
		h.pids[p-1] = p.ID(cfg.Network)
	}
	lh.SetStreamHandler(h.pids[ProtocolHeartbeat-1], h.serveHeartbeat)
	h.log.Info("p2p host listening", slog.String("peer_id", h.self.String()), slog.Any("addrs", lh.Network().ListenAddresses()))
	return h, nil
}

// quicDialDelay is how long a dial to a peer with TCP addresses waits before it
// also tries the peer's QUIC addresses.
const quicDialDelay = 250 * time.Millisecond

// tcpFirstRanker is the swarm's dial ranker: it dials TCP addresses at once and
// other addresses (QUIC) after quicDialDelay if the peer has a TCP address. On one
// long-lived stream TCP+Noise+Yamux carries about three times the frames per
// second of QUIC on loopback, so TCP is preferred when both work.
func tcpFirstRanker(addrs []ma.Multiaddr) []network.AddrDelay {
	hasTCP := slices.ContainsFunc(addrs, isTCP)
	out := make([]network.AddrDelay, 0, len(addrs))
	for _, a := range addrs {
		var d time.Duration
		if hasTCP && !isTCP(a) {
			d = quicDialDelay
		}
		out = append(out, network.AddrDelay{Addr: a, Delay: d})
	}
	return out
}

func isTCP(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_TCP)
	return err == nil
}

// probeListen fails with ErrAddrInUse if a's fixed TCP or UDP port is taken. It
// is needed because libp2p binds QUIC sockets with SO_REUSEPORT, which would let a
// second node silently share the port. Port 0 and other address kinds pass.
func probeListen(a ma.Multiaddr) error {
	network, hostport, err := manet.DialArgs(a)
	if err != nil {
		return nil // not an IP address: libp2p reports it when listening
	}
	if _, port, err := net.SplitHostPort(hostport); err != nil || port == "0" {
		return nil
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
		l, err := net.Listen(network, hostport)
		if err != nil {
			return listenError(a, err)
		}
		return l.Close()
	case "udp", "udp4", "udp6":
		c, err := net.ListenPacket(network, hostport)
		if err != nil {
			return listenError(a, err)
		}
		return c.Close()
	}
	return nil
}

// listenError wraps a listen failure on a, marking a taken port with ErrAddrInUse.
func listenError(a ma.Multiaddr, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use") {
		return fmt.Errorf("listen on %s: %w: %w", a, ErrAddrInUse, err)
	}
	return fmt.Errorf("listen on %s: %w", a, err)
}

// ID returns the node's own PeerId.
func (h *Host) ID() peer.ID { return h.self }

// Addrs returns the node's listen multiaddrs with its /p2p/<PeerId> suffix, in a
// form other nodes can pass to AddPeer through peer.AddrInfoFromP2pAddr.
func (h *Host) Addrs() []ma.Multiaddr {
	addrs := h.host.Addrs()
	if len(addrs) == 0 {
		addrs = h.host.Network().ListenAddresses()
	}
	out, err := peer.AddrInfoToP2pAddrs(&peer.AddrInfo{ID: h.self, Addrs: addrs})
	if err != nil {
		return nil
	}
	return out
}

// Handle registers fn for frames of proto (ProtocolMsg or ProtocolAck), replacing
// any earlier handler, and starts accepting inbound streams of that protocol.
// Until a protocol has a handler, peers cannot open streams for it.
func (h *Host) Handle(proto Protocol, fn Handler) error {
	idx, err := proto.frameIndex()
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("handle %s: nil handler", proto)
	}
	h.handlers[idx].Store(&fn)
	h.host.SetStreamHandler(h.pids[proto-1], func(s network.Stream) { h.serveFrames(idx, s) })
	return nil
}

// track registers one goroutine of the host with the WaitGroup, unless the host
// is closed. Every call that returns true must be paired with h.wg.Done.
func (h *Host) track() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// Close stops the heartbeat, the writers and the inbound read loops, closes every
// connection and the listeners, and waits for all of the host's goroutines,
// including handler calls in progress. Frames still queued are dropped. Close is
// idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()

	h.cancel()
	for _, p := range []Protocol{ProtocolMsg, ProtocolAck, ProtocolHeartbeat} {
		h.host.RemoveStreamHandler(h.pids[p-1])
	}
	// Closing the libp2p host closes all connections, which unblocks stream reads
	// and writes in our goroutines.
	err := h.host.Close()
	h.wg.Wait()
	if err != nil {
		return fmt.Errorf("close libp2p host: %w", err)
	}
	return nil
}

// hasRoute reports whether the host can try to reach id: it is connected or has
// at least one address for it.
func (h *Host) hasRoute(id peer.ID) bool {
	if c := h.host.Network().Connectedness(id); c == network.Connected || c == network.Limited {
		return true
	}
	return len(h.host.Peerstore().Addrs(id)) > 0
}

// Checks reports the transport's readiness (health.Checker): it listens on at least one address.
func (h *Host) Checks(context.Context) []health.Check {
	n := len(h.Addrs())
	if n == 0 {
		return []health.Check{{Name: "p2p", Detail: "not listening"}}
	}
	detail := "listening on " + strconv.Itoa(n) + " addresses"
	if h.cfg.Traversal {
		// AutoNAT's verdict, and how others reach a node that is not reachable (docs/NAT.md).
		detail += "; reachability " + strings.ToLower(h.Reachability().String()) +
			", " + strconv.Itoa(len(h.RelayAddrs())) + " relay addresses"
	}
	return []health.Check{{Name: "p2p", Ready: true, Detail: detail}}
}
