package p2p

import (
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"

	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// connProtectTag marks connections to known peers so the libp2p connection manager
// never trims them.
const connProtectTag = "relayd-peer"

// peerState is what the host keeps per known peer besides the peerstore.
type peerState struct {
	quality  float64
	lastSeen time.Time
	latency  time.Duration
	down     bool
	sent     uint64 // pings recorded
	success  uint64 // pings answered
}

// AddPeer adds a peer (from an on-chain announcement or a static list) to the
// known peers that the heartbeat pings, or updates it. Non-empty info.Addrs
// replace the addresses known for the peer; empty info.Addrs keep them. Adding a
// peer again ends any dial backoff towards it, so a restarted peer announced on
// new addresses is reached by the next Send. The ID must be a secp256k1 PeerId
// other than the node's own.
func (h *Host) AddPeer(info peer.AddrInfo) error {
	if _, err := identity.PubKeyFromPeerID(info.ID); err != nil {
		return fmt.Errorf("add peer: %w", err)
	}
	if info.ID == h.self {
		return fmt.Errorf("add peer: %w", ErrSelf)
	}
	h.mu.RLock()
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	ps := h.host.Peerstore()
	if len(info.Addrs) > 0 {
		ps.ClearAddrs(info.ID)
		ps.AddAddrs(info.ID, info.Addrs, peerstore.PermanentAddrTTL)
	}
	h.host.ConnManager().Protect(info.ID, connProtectTag)
	if sw, ok := h.host.Network().(*swarm.Swarm); ok {
		sw.Backoff().Clear(info.ID)
	}
	h.peersMu.Lock()
	if _, ok := h.peers[info.ID]; !ok {
		h.peers[info.ID] = &peerState{quality: InitialQuality}
		h.peersVersion.Add(1)
	}
	h.peersMu.Unlock()

	h.mu.RLock()
	for idx := range numFrameProtocols {
		if o, ok := h.out[outKey{peer: info.ID, idx: idx}]; ok {
			o.resetBackoff()
		}
	}
	h.mu.RUnlock()
	return nil
}

// RemovePeer forgets a known peer: the heartbeat stops pinging it and its
// connections are no longer protected. Its addresses are cleared, so Send fails
// with ErrNoAddress once it is disconnected. Removing an unknown peer does nothing.
func (h *Host) RemovePeer(id peer.ID) {
	h.peersMu.Lock()
	delete(h.peers, id)
	h.peersVersion.Add(1)
	h.peersMu.Unlock()
	h.host.ConnManager().Unprotect(id, connProtectTag)
	h.host.Peerstore().ClearAddrs(id)
}

// PeersVersion is a number that changes whenever a known peer is added or removed or goes down
// or up (peers.Info.Down); a caller that derives something from Peers can tell by it when to derive
// again. Qualities move with every heartbeat without changing it.
func (h *Host) PeersVersion() uint64 { return h.peersVersion.Load() }

// Peers returns the known peers, sorted by ID.
func (h *Host) Peers() []peers.Info {
	h.peersMu.Lock()
	out := make([]peers.Info, 0, len(h.peers))
	for id, st := range h.peers {
		out = append(out, peers.Info{ID: id, Quality: st.quality, LastSeen: st.lastSeen, Latency: st.latency, Down: st.down,
			HeartbeatsSent: st.sent, HeartbeatsSucceeded: st.success})
	}
	h.peersMu.Unlock()
	for i := range out {
		out[i].Addrs = h.host.Peerstore().Addrs(out[i].ID)
		out[i].Reach = h.Reach(out[i].ID)
		out[i].Connected = out[i].Reach != peers.ReachNone
	}
	slices.SortFunc(out, func(a, b peers.Info) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// markDown records that sending to a known peer failed; its next successful heartbeat clears it.
func (h *Host) markDown(id peer.ID) {
	h.peersMu.Lock()
	defer h.peersMu.Unlock()
	if st, ok := h.peers[id]; ok && !st.down {
		st.down = true
		h.peersVersion.Add(1)
		h.log.Debug("p2p peer marked down until its next heartbeat", "peer_id", id.String())
	}
}

// knownPeers returns the IDs of the known peers.
func (h *Host) knownPeers() []peer.ID {
	h.peersMu.Lock()
	defer h.peersMu.Unlock()
	ids := make([]peer.ID, 0, len(h.peers))
	for id := range h.peers {
		ids = append(ids, id)
	}
	return ids
}

// recordPing updates a known peer's quality, last-seen time and latency.
func (h *Host) recordPing(id peer.ID, rtt time.Duration, err error, now time.Time) {
	if err == nil {
		h.metrics.heartbeats.WithLabelValues("ok").Inc()
	} else {
		h.metrics.heartbeats.WithLabelValues("fail").Inc()
	}
	h.peersMu.Lock()
	defer h.peersMu.Unlock()
	st, ok := h.peers[id]
	if !ok {
		return
	}
	st.sent++
	if err != nil {
		st.quality *= 1 - QualityWeight
		return
	}
	if st.down {
		st.down = false
		h.peersVersion.Add(1)
	}
	st.success++
	st.quality = st.quality*(1-QualityWeight) + QualityWeight
	st.lastSeen = now
	st.latency = rtt
}
