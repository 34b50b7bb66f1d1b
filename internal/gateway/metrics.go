package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/carrier"
)

// RegisterMetrics exposes c's counters (carrier.Stats) on reg as relayd_session_* counters:
// reply blocks, frames and answers by what became of them, and the network's failed sends by
// reason, which is how a session that stalls (channels that ran dry: reason no_balance) says why.
// The failures of each of reasons are exposed from the start (at 0), so that dashboards and
// alert rules find the series before a first failure.
func RegisterMetrics(reg prometheus.Registerer, c *carrier.Carrier, reasons ...string) error {
	return reg.Register(&statsCollector{c: c, reasons: reasons})
}

var (
	descBlocks = prometheus.NewDesc("relayd_session_blocks_total",
		"Reply blocks of sessions: sent (by entries; two packets each), failed (an entry could not make or send one), received (assembled by exits), used (an exit answered on it), dropped (expired, malformed, beyond the stock, of an ended session), unjoined (an exit dropped a half that came too late to be joined with its other half).",
		[]string{"event"}, nil)
	descFrames = prometheus.NewDesc("relayd_session_frames_total",
		"Session frames: sent and received (both directions), dropped (a full queue, or a send the network failed).",
		[]string{"event"}, nil)
	descAnswers = prometheus.NewDesc("relayd_session_answers_total",
		"Session frames carried back on reply blocks: sent by this node as an exit, received as an entry.",
		[]string{"direction"}, nil)
	descMalformed = prometheus.NewDesc("relayd_session_malformed_total",
		"Texts of the sessions' kinds that were refused as malformed.", nil, nil)
	descFailures = prometheus.NewDesc("relayd_session_send_failures_total",
		"Sends of session frames, block parts and answers the network failed, by reason (no_balance: a channel on the path has too little for its ticket).",
		[]string{"reason"}, nil)
)

type statsCollector struct {
	c       *carrier.Carrier
	reasons []string
}

func (s *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBlocks, descFrames, descAnswers, descMalformed, descFailures} {
		ch <- d
	}
}

func (s *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := s.c.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for event, v := range map[string]uint64{"sent": st.BlocksSent, "failed": st.BlocksFailed, "received": st.BlocksReceived,
		"used": st.BlocksUsed, "dropped": st.BlocksDropped, "unjoined": st.HalvesDropped} {
		counter(descBlocks, v, event)
	}
	for event, v := range map[string]uint64{"sent": st.FramesSent, "received": st.FramesReceived, "dropped": st.FramesDropped} {
		counter(descFrames, v, event)
	}
	counter(descAnswers, st.AnswersSent, "sent")
	counter(descAnswers, st.AnswersReceived, "received")
	counter(descMalformed, st.Malformed)
	for reason, v := range st.Failures {
		counter(descFailures, v, reason)
	}
	for _, reason := range s.reasons {
		if _, ok := st.Failures[reason]; !ok {
			counter(descFailures, 0, reason)
		}
	}
}
