package p2p

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	crypto_pb "github.com/libp2p/go-libp2p/core/crypto/pb"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/peers"
)

// RelayLimit bounds each connection a node relays for two others (circuit relay v2). go-libp2p's
// defaults (2 minutes, 128 KiB) are meant for a hole punch's set-up; relayd relays mix traffic
// between nodes whose hole punch failed, so the limits are per hour and per hundreds of MiB.
// A relayed connection that reaches a limit is reset, and the next frame opens a new one.
type RelayLimit struct {
	// Duration is how long one relayed connection may last (default DefaultRelayDuration).
	Duration time.Duration
	// Data is how many bytes one relayed connection may carry in each direction (default
	// DefaultRelayData).
	Data int64
	// Reservations is how many nodes may hold a reservation on this node at once, and Circuits
	// how many relayed connections each of them may have open (defaults DefaultRelayReservations,
	// DefaultRelayCircuits).
	Reservations, Circuits int
}

// Defaults of RelayLimit. At the default stream rate of 10 frames a second (1,520 bytes each) a
// relayed link carries about 55 MB an hour each way.
const (
	DefaultRelayDuration     = time.Hour
	DefaultRelayData         = 256 << 20
	DefaultRelayReservations = 256
	DefaultRelayCircuits     = 64
	// relayBuffer is the buffer of each direction of a relayed connection (go-libp2p: 2 KiB),
	// large enough for a few frames per read.
	relayBuffer = 16 << 10
)

func (l RelayLimit) withDefaults() RelayLimit {
	if l.Duration == 0 {
		l.Duration = DefaultRelayDuration
	}
	if l.Data == 0 {
		l.Data = DefaultRelayData
	}
	if l.Reservations == 0 {
		l.Reservations = DefaultRelayReservations
	}
	if l.Circuits == 0 {
		l.Circuits = DefaultRelayCircuits
	}
	return l
}

// relayResources is the relay service's configuration under l.
func (l RelayLimit) relayResources() relayv2.Resources {
	r := relayv2.DefaultResources()
	r.Limit = &relayv2.RelayLimit{Duration: l.Duration, Data: l.Data}
	r.MaxReservations = l.Reservations
	r.MaxCircuits = l.Circuits
	r.BufferSize = relayBuffer
	// Nodes behind one carrier-grade NAT share an address; a reservation per node.
	r.MaxReservationsPerIP = l.Reservations
	r.MaxReservationsPerASN = l.Reservations
	return r
}

// Timings of autorelay: how soon a node that is not reachable looks for relays and how often it
// asks for candidates again (go-libp2p waits 3 minutes and backs off for an hour, sized for
// the public IPFS network; relayd's candidates are the few public nodes it knows already).
const (
	relayBootDelay   = 5 * time.Second
	relayMinInterval = 5 * time.Second
	relayBackoff     = 20 * time.Second
	// relayCount is how many relays a node that is not reachable holds reservations on.
	relayCount = 2
)

// traversalOptions are the libp2p options of NAT traversal (Config.Traversal): AutoNAT v1 and v2
// (clients and servers), the relay transport, a relay service while the node is public, autorelay
// over the host's public peers, and hole punching traced into h's reach records.
func (h *Host) traversalOptions(cfg Config) ([]libp2p.Option, error) {
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	// go-libp2p admits 8 connections from one IPv4 address (or IPv6 /56); a relayed connection
	// counts against its relay's address, so a relay carrying the circuits of a few nodes to
	// this one would have them refused.
	perIP := cfg.RelayLimit.Circuits * 4
	mgr, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits.AutoScale()),
		rcmgr.WithLimitPerSubnet([]rcmgr.ConnLimitPerSubnet{{PrefixLength: 32, ConnCount: perIP}},
			[]rcmgr.ConnLimitPerSubnet{{PrefixLength: 56, ConnCount: perIP}}))
	if err != nil {
		return nil, fmt.Errorf("resource manager: %w", err)
	}
	opts := []libp2p.Option{
		libp2p.ResourceManager(mgr),
		libp2p.EnableAutoNATv2(),
		libp2p.EnableNATService(),
		libp2p.EnableRelay(),
		libp2p.EnableRelayService(relayv2.WithResources(cfg.RelayLimit.relayResources()), relayv2.WithACL(relaydOnly{})),
		libp2p.EnableAutoRelayWithPeerSource(h.relayCandidates,
			autorelay.WithMinCandidates(1),
			autorelay.WithNumRelays(relayCount),
			autorelay.WithBootDelay(relayBootDelay),
			autorelay.WithMinInterval(relayMinInterval),
			autorelay.WithBackoff(relayBackoff)),
		libp2p.EnableHolePunching(holepunch.WithTracer(h.reach)),
	}
	switch {
	case len(cfg.Announce) > 0:
		// The operator says where the node is reached (a forwarded port, a public address).
		opts = append(opts, libp2p.ForceReachabilityPublic())
	case !anyPublic(cfg.ListenAddrs):
		// No interface holds a public address: a port can only be open through a forward the
		// operator would name with --announce, so the node is behind a NAT. Saying so at once
		// saves AutoNAT's rounds (it needs public addresses observed by four peers).
		opts = append(opts, libp2p.ForceReachabilityPrivate(), libp2p.AddrsFactory(behindNAT))
		h.natted = true
	}
	return opts, nil
}

// behindNAT is the address list of a node behind a NAT (what identify tells its peers and
// Host.Addrs announces): its relay addresses and private ones, without the public addresses
// its peers observed it from. The router drops connections dialled there, and such a dial from
// a peer, pending until its timeout, holds the very pair of ports the two would hole-punch
// through (both dial from their listen port), so the punch falls back to a random port the
// NAT maps elsewhere. Hole punching takes its observed addresses from the host's observations,
// not from this list (docs/NAT.md).
func behindNAT(addrs []ma.Multiaddr) []ma.Multiaddr {
	return slices.DeleteFunc(slices.Clone(addrs), func(a ma.Multiaddr) bool { return manet.IsPublicAddr(a) && !isCircuit(a) })
}

// relaydOnly is the relay service's ACL: it serves relayd nodes only, whose PeerIds are secp256k1
// keys (their chain keys), not the other libp2p nodes of the internet. A node need not have
// announced itself yet: a node behind a NAT takes a reservation before it has an address to
// announce.
type relaydOnly struct{}

func (relaydOnly) AllowReserve(p peer.ID, _ ma.Multiaddr) bool { return isRelayd(p) }

func (relaydOnly) AllowConnect(src peer.ID, _ ma.Multiaddr, dest peer.ID) bool {
	return isRelayd(src) && isRelayd(dest)
}

// isRelayd reports whether id could be a relayd node's: a secp256k1 PeerId.
func isRelayd(id peer.ID) bool {
	pub, err := id.ExtractPublicKey()
	return err == nil && pub.Type() == crypto_pb.KeyType_Secp256k1
}

// anyPublic reports whether a listen address is public, or unspecified on a host one of whose
// interfaces holds a public address.
func anyPublic(addrs []ma.Multiaddr) bool {
	for _, a := range addrs {
		ip, err := manet.ToIP(a)
		if err != nil {
			continue // a DNS name: the operator's to vouch for
		}
		if !ip.IsUnspecified() {
			if manet.IsPublicAddr(a) {
				return true
			}
			continue
		}
		ifaces, err := net.InterfaceAddrs()
		if err != nil {
			continue
		}
		for _, ia := range ifaces {
			if n, ok := ia.(*net.IPNet); ok {
				if m, err := manet.FromIP(n.IP); err == nil && manet.IsPublicAddr(m) {
					return true
				}
			}
		}
	}
	return false
}

// relayCandidates is autorelay's peer source: up to num known peers with a public direct address,
// in random order. Autorelay checks that they run a relay service (only public nodes do).
func (h *Host) relayCandidates(_ context.Context, num int) <-chan peer.AddrInfo {
	out := make(chan peer.AddrInfo, max(num, 0))
	defer close(out)
	select {
	case <-h.hostReady:
	default:
		return out
	}
	ids := h.knownPeers()
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		if len(out) == num {
			break
		}
		var addrs []ma.Multiaddr
		for _, a := range h.host.Peerstore().Addrs(id) {
			if !isCircuit(a) && manet.IsPublicAddr(a) {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) > 0 {
			out <- peer.AddrInfo{ID: id, Addrs: addrs}
		}
	}
	return out
}

// punchGrace bounds how long after its start a node behind a NAT waits for its hole-punching
// service (awaitHolePunching). go-libp2p starts it once a peer observed the node's public
// address, checking at 0.25, 0.75, 1.75, 3.75, 7.75 and 12.75 s and then every 5 s: a node slow
// to reach its first public peer (a loaded machine, a long chain to index) gets it at 12.75 s
// or later.
const punchGrace = 30 * time.Second

// awaitHolePunching makes a node behind a NAT wait, before its first connection to a peer it
// reaches only through relays, until its hole-punching service answers: the peer starts DCUtR
// as soon as the relayed connection opens, and DCUtR is not tried again on that connection, so
// a node that did not answer yet would stay relayed (docs/NAT.md). It waits only while it knows
// a public peer that can observe its address, at most until punchGrace after the start, and
// leaves the dial the last second of ctx. When the service is not up by then it returns
// errPunchNotReady, and the caller opens no connection now (it tries again later).
func (h *Host) awaitHolePunching(ctx context.Context, id peer.ID) error {
	if !h.natted || time.Since(h.started) > punchGrace || h.punchReady() || h.host.Network().Connectedness(id) == network.Connected {
		return nil
	}
	ps := h.host.Peerstore()
	public := func(a ma.Multiaddr) bool { return !isCircuit(a) && manet.IsPublicAddr(a) }
	if addrs := ps.Addrs(id); !slices.ContainsFunc(addrs, isCircuit) || slices.ContainsFunc(addrs, public) {
		return nil
	}
	if !slices.ContainsFunc(h.knownPeers(), func(p peer.ID) bool { return slices.ContainsFunc(ps.Addrs(p), public) }) {
		return nil // nobody can observe the node's public address
	}
	until := h.started.Add(punchGrace)
	if dl, ok := ctx.Deadline(); ok {
		if last := dl.Add(-time.Second); last.Before(until) {
			until = last
		}
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !h.punchReady() {
		select {
		case <-ctx.Done():
			if time.Since(h.started) > punchGrace {
				return nil
			}
			return errPunchNotReady
		case <-tick.C:
		}
	}
	return nil
}

// errPunchNotReady: a node behind a NAT opens no relayed connection before its hole-punching
// service answers, in its first punchGrace.
var errPunchNotReady = errors.New("not reaching relayed peers before hole punching is up")

// punchReady reports whether the host's hole-punching service answers DCUtR.
func (h *Host) punchReady() bool {
	return slices.Contains(h.host.Mux().Protocols(), holepunch.Protocol)
}

// isCircuit reports whether a is a circuit relay address.
func isCircuit(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}

// reachTracker records what the host's hole-punching service did (holepunch.EventTracer): the
// peers it reached directly after meeting them over a relay, and the counts.
type reachTracker struct {
	mu sync.Mutex
	// punched holds the peers the hole-punching service reached directly (by its direct dial or
	// its synchronised punch); a direct connection to them is "hole-punched".
	punched  map[peer.ID]bool
	attempts prometheus.Counter
	success  prometheus.Counter
	stats    HolePunchStats
}

// HolePunchStats counts what the host's hole-punching service (DCUtR) did since it started. When
// a node accepts a connection over a relay it first dials the other node's public addresses
// itself (DirectDials): the other node does the same at about the same time, which opens many
// NATs as a punch does; only if that fails do the two run a synchronised hole punch (HolePunches,
// up to three attempts, counted on both sides).
type HolePunchStats struct {
	DirectDials, DirectDialSuccesses uint64
	HolePunches, HolePunchSuccesses  uint64
}

func newReachTracker(m *metrics) *reachTracker {
	return &reachTracker{punched: map[peer.ID]bool{},
		attempts: m.holePunches.WithLabelValues("attempt"), success: m.holePunches.WithLabelValues("success")}
}

// Trace implements holepunch.EventTracer.
func (t *reachTracker) Trace(evt *holepunch.Event) {
	var success bool
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e := evt.Evt.(type) {
	case *holepunch.DirectDialEvt:
		t.stats.DirectDials++
		if success = e.Success; success {
			t.stats.DirectDialSuccesses++
		}
	case *holepunch.EndHolePunchEvt:
		t.stats.HolePunches++
		if success = e.Success; success {
			t.stats.HolePunchSuccesses++
		}
	default:
		return
	}
	t.attempts.Inc()
	if success {
		t.success.Inc()
		t.punched[evt.Remote] = true
	}
}

func (t *reachTracker) holePunched(id peer.ID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.punched[id]
}

// HolePunches returns what the host's hole-punching service did.
func (h *Host) HolePunches() HolePunchStats {
	h.reach.mu.Lock()
	defer h.reach.mu.Unlock()
	return h.reach.stats
}

// Reach says how the host reaches id now: over a direct connection (hole-punched if a hole punch
// opened it), only over a relay, or not at all.
func (h *Host) Reach(id peer.ID) peers.Reach {
	relayed := false
	for _, c := range h.host.Network().ConnsToPeer(id) {
		if c.Stat().Limited || isCircuit(c.RemoteMultiaddr()) {
			relayed = true
			continue
		}
		if h.reach.holePunched(id) {
			return peers.ReachHolePunched
		}
		return peers.ReachDirect
	}
	if relayed {
		return peers.ReachRelayed
	}
	return peers.ReachNone
}

// hasDirectConn reports whether the host has a connection to id that no relay carries.
func (h *Host) hasDirectConn(id peer.ID) bool {
	for _, c := range h.host.Network().ConnsToPeer(id) {
		if !c.Stat().Limited && !isCircuit(c.RemoteMultiaddr()) {
			return true
		}
	}
	return false
}

// RelayAddrs are the circuit addresses of the host's relay reservations (with its /p2p suffix
// after /p2p-circuit): none while it is reachable directly or holds no reservation.
func (h *Host) RelayAddrs() []ma.Multiaddr {
	var out []ma.Multiaddr
	self := ma.StringCast("/p2p/" + h.self.String())
	for _, a := range h.host.Addrs() {
		if isCircuit(a) {
			out = append(out, a.Encapsulate(self))
		}
	}
	return out
}

// Reachability is what AutoNAT says of the host: public, private, or unknown (not yet decided, or
// Config.Traversal off).
func (h *Host) Reachability() network.Reachability {
	if r, ok := h.host.(interface{ Reachability() network.Reachability }); ok {
		return r.Reachability()
	}
	return network.ReachabilityUnknown
}

// limitedOK lets a stream open over a relayed (limited) connection: relayd's relay limits are
// sized for its traffic (RelayLimit).
func limitedOK(ctx context.Context) context.Context {
	return network.WithAllowLimitedConn(ctx, "relayd frames")
}
