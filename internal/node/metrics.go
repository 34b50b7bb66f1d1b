package node

import (
	"context"
	"math/big"
	"time"

	"github.com/holiman/uint256"
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
	n.metrics.MustRegister(nodeCollector{n: n, build: ReadBuildInfo()})
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
	for state, v := range map[string]*uint256.Int{
		"unredeemed": &st.UnredeemedValue, "redeemed": &st.RedeemedValue, "rejected": &st.RejectedValue,
	} {
		ch <- prometheus.MustNewConstMetric(ticketValueDesc, prometheus.GaugeValue, inTokens(v.ToBig()), state)
	}
}

var ticketValueDesc = prometheus.NewDesc("relayd_ticket_value_tokens",
	"Value of this node's tickets by state, in tokens: unredeemed (acknowledged, not yet redeemed), redeemed (paid by the contract), rejected.",
	[]string{"state"}, nil)

// Descriptions of the node-level gauges nodeCollector reports.
var (
	buildInfoDesc = prometheus.NewDesc("relayd_build_info",
		"Always 1; the labels say which build runs: version, VCS revision and Go version.", []string{"version", "revision", "go"}, nil)
	peersDesc = prometheus.NewDesc("relayd_peers",
		"Peers by state: known (the transport's peer set), connected (an open connection now), announced (nodes announced on chain, this one included).",
		[]string{"state"}, nil)
	chainHeadDesc = prometheus.NewDesc("relayd_chain_head_block",
		"The chain provider's latest block as the indexer last read it.", nil, nil)
	chainIndexedDesc = prometheus.NewDesc("relayd_chain_indexed_block",
		"The last block the indexer has read into the channel graph; the head minus this is the indexer's lag.", nil, nil)
	balanceDesc = prometheus.NewDesc("relayd_balance_tokens",
		"This node's balance read from the chain at scrape time, in whole units: currency native (gas) or token (relay token).",
		[]string{"currency"}, nil)
)

// balanceTimeout bounds the chain reads of one scrape; a provider slower than that leaves the
// balances out of that scrape.
const balanceTimeout = 3 * time.Second

// nodeCollector reports build info, peers and, with a chain, the indexer's progress and the
// node's balances, at scrape time.
type nodeCollector struct {
	n     *Node
	build BuildInfo
}

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{buildInfoDesc, peersDesc, chainHeadDesc, chainIndexedDesc, balanceDesc} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(buildInfoDesc, prometheus.GaugeValue, 1, c.build.Version, c.build.Revision, c.build.Go)
	if c.n.host != nil {
		peers := c.n.host.Peers()
		connected := 0
		for _, p := range peers {
			if p.Connected {
				connected++
			}
		}
		ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(len(peers)), "known")
		ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(connected), "connected")
	}
	s := c.n.chain
	if s == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(len(s.graph.Peers())), "announced")
	ch <- prometheus.MustNewConstMetric(chainHeadDesc, prometheus.GaugeValue, float64(s.indexer.Head()))
	if next := s.indexer.Next(); next > 0 {
		ch <- prometheus.MustNewConstMetric(chainIndexedDesc, prometheus.GaugeValue, float64(next-1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), balanceTimeout)
	defer cancel()
	self := c.n.id.Address()
	if v, err := s.client.NativeBalance(ctx, self); err == nil {
		ch <- prometheus.MustNewConstMetric(balanceDesc, prometheus.GaugeValue, inTokens(v), "native")
	}
	if v, err := s.client.TokenBalance(ctx, self); err == nil {
		ch <- prometheus.MustNewConstMetric(balanceDesc, prometheus.GaugeValue, inTokens(v), "token")
	}
}

// inTokens converts an amount in the smallest unit (18 decimals) to whole units, as a float
// (exact to about 15 significant digits, which is what a gauge shows).
func inTokens(v *big.Int) float64 {
	if v == nil {
		return 0
	}
	f, _ := new(big.Rat).SetFrac(v, unit).Float64()
	return f
}
