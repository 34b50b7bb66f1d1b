package ledger

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// listedGraph is a ChannelGraph over a channelstest.Map and the channels a test opened on it.
type listedGraph struct {
	*channelstest.Map
	pairs [][2]common.Address
}

func (g listedGraph) list(match func(src, dst common.Address) bool) []channels.Channel {
	var out []channels.Channel
	for _, p := range g.pairs {
		if c, ok := g.Channel(p[0], p[1]); ok && match(p[0], p[1]) {
			out = append(out, c)
		}
	}
	return out
}

func (g listedGraph) Incoming(a common.Address) []channels.Channel {
	return g.list(func(_, dst common.Address) bool { return dst == a })
}

func (g listedGraph) Outgoing(a common.Address) []channels.Channel {
	return g.list(func(src, _ common.Address) bool { return src == a })
}

// gather collects c and returns its samples by metric name and label values ("/"-joined, in
// label-name order: counterparty first).
func gather(t *testing.T, c prometheus.Collector) map[string]map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		m := map[string]float64{}
		for _, s := range mf.GetMetric() {
			key := ""
			for i, lp := range s.GetLabel() {
				if i > 0 {
					key += "/"
				}
				key += lp.GetValue()
			}
			if s.GetCounter() != nil {
				m[key] = s.GetCounter().GetValue()
			} else {
				m[key] = s.GetGauge().GetValue()
			}
		}
		out[mf.GetName()] = m
	}
	return out
}

func TestChannelMetrics(t *testing.T) {
	e := newLedgerEnv(t)
	dst := common.Address{0xd5}
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)      // 1 token in
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(200)) // 2 tokens out
	g := listedGraph{Map: e.chans, pairs: [][2]common.Address{{e.sourceAddr, e.selfAddr}, {e.selfAddr, dst}}}
	ops := &Operations{Channels: g, Self: e.selfAddr, Ledger: e.l}
	c := channelCollector{ops}
	src, out := e.sourceAddr.Hex(), dst.Hex()

	e.acknowledge(t, 3) // three tickets of PricePerHop (0.01 token), all winning
	if _, err := e.l.Redeem(t.Context(), &fakeRedeemer{}, nil, "test"); err != nil {
		t.Fatal(err)
	}
	tk := e.incoming(t, 4, PricePerHop) // a fourth, acknowledged, not redeemed
	if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
		t.Fatal(err)
	}
	if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk, Response: responseFor(4)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1}); err != nil {
		t.Fatal(err)
	}

	got := gather(t, c)
	cent := token.FromUint256(&PricePerHop).Float64()
	for _, w := range []struct {
		metric, key string
		want        float64
	}{
		{"relayd_channel_balance_tokens", src + "/incoming", 1},
		{"relayd_channel_balance_tokens", out + "/outgoing", 2},
		{"relayd_channel_balance_tokens", OtherCounterparties + "/outgoing", 0},
		{"relayd_channel_available_tokens", out, 2 - cent},
		{"relayd_channel_unredeemed_tickets", src, 1},
		{"relayd_channel_unredeemed_value_tokens", src, cent},
		{"relayd_channel_tickets_total", src + "/received", 4},
		{"relayd_channel_tickets_total", src + "/redeemed", 3},
		{"relayd_channel_ticket_value_tokens_total", src + "/received", 4 * cent},
		{"relayd_channel_ticket_value_tokens_total", src + "/redeemed", 3 * cent},
		{"relayd_channel_tickets_total", OtherCounterparties + "/redeemed", 0},
	} {
		v, ok := got[w.metric][w.key]
		if !ok || v < w.want-1e-9 || v > w.want+1e-9 {
			t.Errorf("%s{%s} = %v (present %v), want %v", w.metric, w.key, v, ok, w.want)
		}
	}
}

func TestCounterpartiesBounded(t *testing.T) {
	var c counterparties
	for i := range MaxChannelLabels + 5 {
		a := common.Address{byte(i), 1}
		c.received(a, &PricePerHop)
		want := a.Hex()
		if i >= MaxChannelLabels {
			want = OtherCounterparties
		}
		if got := c.label(a); got != want {
			t.Fatalf("counterparty %d: label %q, want %q", i, got, want)
		}
	}
	s := c.snapshot()
	if len(s) != MaxChannelLabels+1 || s[OtherCounterparties].received != 5 {
		t.Errorf("%d labels, other received %d; want %d and 5", len(s), s[OtherCounterparties].received, MaxChannelLabels+1)
	}
}
