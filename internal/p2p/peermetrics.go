package p2p

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

// MaxPeerLabels is how many peers have series of their own in the per-peer metrics
// (relayd_p2p_peer_*): the first known peers the host counts traffic for or reports, for the
// life of the process. Every other peer, and any peer that is not known (AddPeer), is counted
// under the peer label OtherPeers, so a scrape holds at most MaxPeerLabels+1 series per metric
// and name.
const MaxPeerLabels = 64

// OtherPeers is the peer label of the peers past MaxPeerLabels and of unknown ones.
const OtherPeers = "other"

var (
	peerPacketsDesc = prometheus.NewDesc("relayd_p2p_peer_packets_total",
		"Packets (msg frames) written to (direction sent) and received from (received) a peer, by its PeerId. "+
			"At most 64 peers have their own label; the others and unknown peers are summed under peer=\"other\".",
		[]string{"peer", "direction"}, nil)
	peerBytesDesc = prometheus.NewDesc("relayd_p2p_peer_bytes_total",
		"Bytes of the packets (msg frames, without length prefixes) written to (direction sent) and received from (received) a peer. "+
			"At most 64 peers have their own label; the others and unknown peers are summed under peer=\"other\".",
		[]string{"peer", "direction"}, nil)
	peerQualityDesc = prometheus.NewDesc("relayd_p2p_peer_quality",
		"A known peer's heartbeat quality in [0, 1] (an exponentially weighted share of answered heartbeats). "+
			"At most 64 peers have their own label; peer=\"other\" is the mean quality of the other known peers (NaN when there are none).",
		[]string{"peer"}, nil)
	peerDownDesc = prometheus.NewDesc("relayd_p2p_peer_down",
		"1 when sending to a known peer failed since its last answered heartbeat, else 0. "+
			"At most 64 peers have their own label; peer=\"other\" counts the other known peers that are down.",
		[]string{"peer"}, nil)
)

// peerTraffic counts one peer's packets (msg frames) and their bytes, each way.
type peerTraffic struct {
	sent, sentBytes, received, receivedBytes atomic.Uint64
}

func (t *peerTraffic) countSent(frames, bytes int) {
	t.sent.Add(uint64(frames))
	t.sentBytes.Add(uint64(bytes))
}

func (t *peerTraffic) countReceived(bytes int) {
	t.received.Add(1)
	t.receivedBytes.Add(uint64(bytes))
}

// trafficTable holds the per-peer counters: a peer keeps the slot it was given for the life of
// the process, so that its counters only grow.
type trafficTable struct {
	mu     sync.Mutex
	byPeer map[peer.ID]*peerTraffic
	other  peerTraffic
}

// slot returns id's counters, giving it a slot of its own while fewer than MaxPeerLabels are
// taken; ok is false when id shares OtherPeers.
func (t *trafficTable) slot(id peer.ID) (c *peerTraffic, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.byPeer[id]; ok {
		return c, true
	}
	if t.byPeer == nil {
		t.byPeer = make(map[peer.ID]*peerTraffic)
	}
	if len(t.byPeer) >= MaxPeerLabels {
		return &t.other, false
	}
	c = &peerTraffic{}
	t.byPeer[id] = c
	return c, true
}

// trafficCounter follows which counters a stream's frames go to: a peer that was not known when
// the stream opened (its frames counted under OtherPeers) is looked up again once the known
// peers change.
type trafficCounter struct {
	h       *Host
	id      peer.ID
	c       *peerTraffic
	version uint64
}

func (h *Host) trafficCounter(id peer.ID) *trafficCounter {
	tc := &trafficCounter{h: h, id: id}
	tc.resolve()
	return tc
}

func (tc *trafficCounter) resolve() {
	tc.version = tc.h.peersVersion.Load()
	tc.h.peersMu.Lock()
	_, known := tc.h.peers[tc.id]
	tc.h.peersMu.Unlock()
	tc.c = &tc.h.traffic.other
	if known {
		tc.c, _ = tc.h.traffic.slot(tc.id)
	}
}

// counters returns the counters the peer's frames go to now.
func (tc *trafficCounter) counters() *peerTraffic {
	if tc.c == &tc.h.traffic.other && tc.h.peersVersion.Load() != tc.version {
		tc.resolve()
	}
	return tc.c
}

// PeerBytes are the bytes of the packets (msg frames) a peer sent this node (In) and this node
// sent it (Out) since the host started.
type PeerBytes struct{ In, Out uint64 }

// PeerTraffic returns PeerBytes for each peer with counters of its own (at most MaxPeerLabels
// known peers, those of relayd_p2p_peer_bytes_total); the others' are not in it.
func (h *Host) PeerTraffic() map[peer.ID]PeerBytes {
	h.traffic.mu.Lock()
	defer h.traffic.mu.Unlock()
	out := make(map[peer.ID]PeerBytes, len(h.traffic.byPeer))
	for id, t := range h.traffic.byPeer {
		out[id] = PeerBytes{In: t.receivedBytes.Load(), Out: t.sentBytes.Load()}
	}
	return out
}

// peerCollector reports the relayd_p2p_peer_* metrics at scrape time.
type peerCollector struct{ h *Host }

func (c peerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- peerPacketsDesc
	ch <- peerBytesDesc
	ch <- peerQualityDesc
	ch <- peerDownDesc
}

func (c peerCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	type state struct {
		quality float64
		down    bool
	}
	h.peersMu.Lock()
	known := make(map[peer.ID]state, len(h.peers))
	for id, st := range h.peers {
		known[id] = state{st.quality, st.down}
	}
	h.peersMu.Unlock()

	var otherQuality float64
	var others, othersDown int
	for id, st := range known {
		if _, own := h.traffic.slot(id); !own {
			otherQuality += st.quality
			others++
			if st.down {
				othersDown++
			}
			continue
		}
		name := id.String()
		ch <- prometheus.MustNewConstMetric(peerQualityDesc, prometheus.GaugeValue, st.quality, name)
		ch <- prometheus.MustNewConstMetric(peerDownDesc, prometheus.GaugeValue, b2f(st.down), name)
	}
	if others > 0 {
		otherQuality /= float64(others)
	} else {
		otherQuality = math.NaN() // no other peer: no mean (a 0 would read as a bad peer)
	}
	ch <- prometheus.MustNewConstMetric(peerQualityDesc, prometheus.GaugeValue, otherQuality, OtherPeers)
	ch <- prometheus.MustNewConstMetric(peerDownDesc, prometheus.GaugeValue, float64(othersDown), OtherPeers)

	h.traffic.mu.Lock()
	traffic := make(map[string]*peerTraffic, len(h.traffic.byPeer)+1)
	for id, t := range h.traffic.byPeer {
		traffic[id.String()] = t
	}
	h.traffic.mu.Unlock()
	traffic[OtherPeers] = &h.traffic.other
	for name, t := range traffic {
		ch <- prometheus.MustNewConstMetric(peerPacketsDesc, prometheus.CounterValue, float64(t.sent.Load()), name, "sent")
		ch <- prometheus.MustNewConstMetric(peerPacketsDesc, prometheus.CounterValue, float64(t.received.Load()), name, "received")
		ch <- prometheus.MustNewConstMetric(peerBytesDesc, prometheus.CounterValue, float64(t.sentBytes.Load()), name, "sent")
		ch <- prometheus.MustNewConstMetric(peerBytesDesc, prometheus.CounterValue, float64(t.receivedBytes.Load()), name, "received")
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
