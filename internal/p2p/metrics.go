package p2p

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a frame is dropped, as the "reason" label of relayd_p2p_frames_dropped_total.
const (
	dropQueueFull   = "queue_full"   // Send found the outbound queue full
	dropOversized   = "oversized"    // frame above MaxFrameSize, sent or received
	dropBadFrame    = "bad_frame"    // malformed frame received (zero length, truncated)
	dropStreamError = "stream_error" // queued frame lost because the stream failed
	dropUnreachable = "unreachable"  // queued frame dropped while the peer is backing off
)

var dropReasons = []string{dropQueueFull, dropOversized, dropBadFrame, dropStreamError, dropUnreachable}

// frameMetrics are the counters of one frame protocol, bound to its label once so
// the hot path does no label lookups.
type frameMetrics struct {
	sent, received           prometheus.Counter
	bytesSent, bytesReceived prometheus.Counter
	writes                   prometheus.Counter
	dropped                  map[string]prometheus.Counter
}

// metrics holds the host's prometheus collectors. They exist whether or not a
// registerer was given, so callers never check for nil.
type metrics struct {
	frames     [numFrameProtocols]frameMetrics
	heartbeats *prometheus.CounterVec
	// holePunches counts DCUtR attempts and successes (Config.Traversal).
	holePunches *prometheus.CounterVec
	collectors  []prometheus.Collector
}

// newMetrics creates the host's collectors, unregistered.
func newMetrics() *metrics {
	sent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frames_sent_total",
		Help: "Frames written to peers, by protocol.",
	}, []string{"protocol"})
	received := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frames_received_total",
		Help: "Frames received from peers and passed to the handler, by protocol.",
	}, []string{"protocol"})
	bytesSent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frame_bytes_sent_total",
		Help: "Frame bytes written to peers (without length prefixes), by protocol.",
	}, []string{"protocol"})
	bytesReceived := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frame_bytes_received_total",
		Help: "Frame bytes received from peers (without length prefixes), by protocol.",
	}, []string{"protocol"})
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frame_writes_total",
		Help: "Flushes of frames to peers' streams, by protocol: frames sent divided by this is how many frames a write carried.",
	}, []string{"protocol"})
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "frames_dropped_total",
		Help: "Frames dropped, by protocol and reason (queue_full, oversized, bad_frame, stream_error, unreachable).",
	}, []string{"protocol", "reason"})
	heartbeats := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "heartbeats_total",
		Help: "Heartbeat pings, by result (ok, fail).",
	}, []string{"result"})

	holePunches := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relayd", Subsystem: "p2p", Name: "hole_punches_total",
		Help: "Direct connections the hole-punching service (DCUtR) tried after meeting a peer over a relay, its direct dials and synchronised punches together, by result: attempt (every one that ended) and success (those that opened a direct connection).",
	}, []string{"result"})

	m := &metrics{
		heartbeats:  heartbeats,
		holePunches: holePunches,
		collectors:  []prometheus.Collector{sent, received, bytesSent, bytesReceived, writes, dropped, heartbeats, holePunches},
	}
	for i, p := range []Protocol{ProtocolMsg, ProtocolAck} {
		name := p.String()
		fm := frameMetrics{
			sent:          sent.WithLabelValues(name),
			received:      received.WithLabelValues(name),
			bytesSent:     bytesSent.WithLabelValues(name),
			bytesReceived: bytesReceived.WithLabelValues(name),
			writes:        writes.WithLabelValues(name),
			dropped:       make(map[string]prometheus.Counter, len(dropReasons)),
		}
		for _, r := range dropReasons {
			fm.dropped[r] = dropped.WithLabelValues(name, r)
		}
		m.frames[i] = fm
	}
	heartbeats.WithLabelValues("ok")
	heartbeats.WithLabelValues("fail")

	return m
}

// register registers every collector with reg, or none of them.
func (m *metrics) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for i, c := range m.collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range m.collectors[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("register p2p metrics: %w", err)
		}
	}
	return nil
}
