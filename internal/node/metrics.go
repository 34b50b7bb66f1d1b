package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// nodeMetrics are the node-level metrics; the transport and the relay
// register their own into the same registry.
type nodeMetrics struct {
	latency prometheus.Histogram
}

// registerMetrics adds the process, Go runtime, message latency and ticket
// metrics to the node's registry.
func (n *Node) registerMetrics() {
	n.metrics.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
	)
	n.nm.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "relayd", Name: "message_latency_seconds",
		Help:    "Time from the sender's timestamp to delivery at this node, for messages it received.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	n.metrics.MustRegister(n.nm.latency)
	if n.msg != nil && n.msg.ledger != nil {
		n.metrics.MustRegister(ticketCollector{n.msg})
	}
}

var ticketsDesc = prometheus.NewDesc("relayd_tickets", "Tickets of this node by state.", []string{"state"}, nil)

// ticketCollector reports the ledger's ticket statistics at scrape time.
type ticketCollector struct{ m *messaging }

func (c ticketCollector) Describe(ch chan<- *prometheus.Desc) { ch <- ticketsDesc }

func (c ticketCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.m.ledger.Statistics()
	if err != nil {
		return
	}
	for state, v := range map[string]uint64{
		"pending": st.Pending, "unredeemed": st.Unredeemed, "redeemed": st.Redeemed,
		"losing": st.LosingTickets, "neglected": st.Neglected, "rejected": st.Rejected,
	} {
		ch <- prometheus.MustNewConstMetric(ticketsDesc, prometheus.GaugeValue, float64(v), state)
	}
}
