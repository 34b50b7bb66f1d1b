package ledger

import (
	"context"
	"time"

	"github.com/holiman/uint256"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/token"
)

var (
	ticketsDesc     = prometheus.NewDesc("relayd_tickets", "Tickets of this node by state.", []string{"state"}, nil)
	ticketValueDesc = prometheus.NewDesc("relayd_ticket_value_tokens",
		"Value of this node's tickets by state, in tokens: unredeemed (acknowledged, not yet redeemed), redeemed (paid by the contract), rejected.",
		[]string{"state"}, nil)
	balanceDesc = prometheus.NewDesc("relayd_balance_tokens",
		"This node's balance read from the chain at scrape time, in whole units: currency native (gas) or token (relay token).",
		[]string{"currency"}, nil)
)

// ticketCollector reports the ledger's ticket statistics at scrape time.
type ticketCollector struct{ l *Ledger }

func (c ticketCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- ticketsDesc
	ch <- ticketValueDesc
}

func (c ticketCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.l.Statistics()
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
		ch <- prometheus.MustNewConstMetric(ticketValueDesc, prometheus.GaugeValue, token.FromUint256(v).Float64(), state)
	}
}

// balanceTimeout bounds the chain reads of one scrape; a provider slower than that leaves the
// balances out of that scrape.
const balanceTimeout = 3 * time.Second

// BalanceCollector reports the node's native and token balances, read from the chain at scrape
// time (relayd_balance_tokens), and with a Ledger the balances and tickets of each of its
// channels (relayd_channel_*, channelmetrics.go), read from the indexed graph, the ledger and
// the store.
func (o *Operations) BalanceCollector() prometheus.Collector { return balanceCollector{o} }

type balanceCollector struct{ o *Operations }

func (c balanceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- balanceDesc
	if c.o.Ledger != nil {
		channelCollector(c).Describe(ch)
	}
}

func (c balanceCollector) Collect(ch chan<- prometheus.Metric) {
	if c.o.Ledger != nil {
		channelCollector(c).Collect(ch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), balanceTimeout)
	defer cancel()
	if v, err := c.o.Chain.NativeBalance(ctx, c.o.Self); err == nil {
		ch <- prometheus.MustNewConstMetric(balanceDesc, prometheus.GaugeValue, token.Of(v).Float64(), "native")
	}
	if v, err := c.o.Chain.TokenBalance(ctx, c.o.Self); err == nil {
		ch <- prometheus.MustNewConstMetric(balanceDesc, prometheus.GaugeValue, token.Of(v).Float64(), "token")
	}
}
