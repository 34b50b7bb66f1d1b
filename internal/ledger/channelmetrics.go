package ledger

import (
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/token"
)

// MaxChannelLabels is how many counterparties have series of their own in the per-channel
// metrics (relayd_channel_*): the first this node's channels or tickets name, for the life of the
// process. The others are summed under the counterparty label OtherCounterparties, so a scrape
// holds at most MaxChannelLabels+1 series per metric and direction or state.
const MaxChannelLabels = 64

// OtherCounterparties is the counterparty label of the counterparties past MaxChannelLabels.
const OtherCounterparties = "other"

const boundNote = " Labelled by the counterparty's chain address; at most 64 counterparties have their own label, the others are summed under counterparty=\"other\"."

var (
	channelBalanceDesc = prometheus.NewDesc("relayd_channel_balance_tokens",
		"The balance of this node's open or closing channels as indexed from the chain, in tokens, by direction: outgoing (this node pays) or incoming (the counterparty pays)."+boundNote,
		[]string{"direction", "counterparty"}, nil)
	channelAvailableDesc = prometheus.NewDesc("relayd_channel_available_tokens",
		"What an open outgoing channel can still pay, in tokens: its balance less what the tickets signed on it and not yet passed by the chain are expected to draw. Near 0 the channel is depleted."+boundNote,
		[]string{"counterparty"}, nil)
	channelUnredeemedDesc = prometheus.NewDesc("relayd_channel_unredeemed_tickets",
		"Acknowledged winning tickets of an incoming channel not yet redeemed (read from the store at scrape time)."+boundNote,
		[]string{"counterparty"}, nil)
	channelUnredeemedValueDesc = prometheus.NewDesc("relayd_channel_unredeemed_value_tokens",
		"Face value of the acknowledged winning tickets of an incoming channel not yet redeemed, in tokens."+boundNote,
		[]string{"counterparty"}, nil)
	channelTicketsDesc = prometheus.NewDesc("relayd_channel_tickets_total",
		"Tickets of an incoming channel since the node started, by state: received (accepted, winning or not) or redeemed (paid by the contract)."+boundNote,
		[]string{"state", "counterparty"}, nil)
	channelTicketValueDesc = prometheus.NewDesc("relayd_channel_ticket_value_tokens_total",
		"Face value of an incoming channel's tickets since the node started, in tokens, by state: received or redeemed (what the contract paid: earnings)."+boundNote,
		[]string{"state", "counterparty"}, nil)
)

// partyCounts are the ticket counters of one counterparty (or of OtherCounterparties).
type partyCounts struct {
	received, redeemed           uint64
	receivedValue, redeemedValue uint256.Int
}

// counterparties holds the per-counterparty ticket counters: a counterparty keeps the label it
// was given for the life of the process, so that its counters only grow.
type counterparties struct {
	mu     sync.Mutex
	byAddr map[common.Address]*partyCounts
	other  partyCounts
}

// slot returns a's counters, giving it a label of its own while fewer than MaxChannelLabels are
// taken; own is false when a shares OtherCounterparties. c.mu must be held.
func (c *counterparties) slot(a common.Address) (pc *partyCounts, own bool) {
	if pc, ok := c.byAddr[a]; ok {
		return pc, true
	}
	if len(c.byAddr) >= MaxChannelLabels {
		return &c.other, false
	}
	if c.byAddr == nil {
		c.byAddr = make(map[common.Address]*partyCounts)
	}
	pc = &partyCounts{}
	c.byAddr[a] = pc
	return pc, true
}

// label returns a's counterparty label.
func (c *counterparties) label(a common.Address) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, own := c.slot(a); own {
		return a.Hex()
	}
	return OtherCounterparties
}

func (c *counterparties) received(from common.Address, amount *uint256.Int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc, _ := c.slot(from)
	pc.received++
	pc.receivedValue.Add(&pc.receivedValue, amount)
}

func (c *counterparties) redeemed(from common.Address, amount *uint256.Int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc, _ := c.slot(from)
	pc.redeemed++
	pc.redeemedValue.Add(&pc.redeemedValue, amount)
}

// snapshot copies the counters by label.
func (c *counterparties) snapshot() map[string]partyCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]partyCounts, len(c.byAddr)+1)
	for a, pc := range c.byAddr {
		out[a.Hex()] = *pc
	}
	out[OtherCounterparties] = c.other
	return out
}

// channelCollector reports the relayd_channel_* metrics at scrape time.
type channelCollector struct{ o *Operations }

func (c channelCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{channelBalanceDesc, channelAvailableDesc, channelUnredeemedDesc,
		channelUnredeemedValueDesc, channelTicketsDesc, channelTicketValueDesc} {
		ch <- d
	}
}

// tokensByLabel sums amounts (in the smallest unit) by counterparty label, OtherCounterparties
// always present.
type tokensByLabel map[string]*uint256.Int

func (m tokensByLabel) add(label string, v *uint256.Int) {
	if m[label] == nil {
		m[label] = new(uint256.Int)
	}
	m[label].Add(m[label], v)
}

func (m tokensByLabel) emit(ch chan<- prometheus.Metric, d *prometheus.Desc, scale func(*uint256.Int) float64, labels ...string) {
	if m[OtherCounterparties] == nil {
		m[OtherCounterparties] = new(uint256.Int)
	}
	for label, v := range m {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, scale(v), append(labels, label)...)
	}
}

func inTokens(v *uint256.Int) float64 { return token.FromUint256(v).Float64() }
func countOf(v *uint256.Int) float64  { return float64(v.Uint64()) }

func (c channelCollector) Collect(ch chan<- prometheus.Metric) {
	o, l := c.o, c.o.Ledger
	in, out := o.ListChannels(false)
	balance := map[string]tokensByLabel{"outgoing": {}, "incoming": {}}
	available := tokensByLabel{}
	for _, list := range []struct {
		direction string
		chans     []channels.Channel
	}{{"outgoing", out}, {"incoming", in}} {
		for i := range list.chans {
			c := &list.chans[i]
			other := c.Destination
			if list.direction == "incoming" {
				other = c.Source
			}
			label := l.parties.label(other)
			b := balanceOf(c)
			balance[list.direction].add(label, &b)
			if list.direction == "outgoing" && c.Status == channels.Open {
				if avail, ok := l.Available(other); ok {
					available.add(label, &avail)
				}
			}
		}
	}
	for direction, m := range balance {
		m.emit(ch, channelBalanceDesc, inTokens, direction)
	}
	available.emit(ch, channelAvailableDesc, inTokens)

	if acked, err := l.Tickets(); err == nil {
		n, value := tokensByLabel{}, tokensByLabel{}
		one := uint256.NewInt(1)
		for i := range acked {
			label := l.parties.label(acked[i].Source)
			n.add(label, one)
			value.add(label, &acked[i].Ticket.Amount)
		}
		n.emit(ch, channelUnredeemedDesc, countOf)
		value.emit(ch, channelUnredeemedValueDesc, inTokens)
	}

	for label, pc := range l.parties.snapshot() {
		ch <- prometheus.MustNewConstMetric(channelTicketsDesc, prometheus.CounterValue, float64(pc.received), "received", label)
		ch <- prometheus.MustNewConstMetric(channelTicketsDesc, prometheus.CounterValue, float64(pc.redeemed), "redeemed", label)
		ch <- prometheus.MustNewConstMetric(channelTicketValueDesc, prometheus.CounterValue, inTokens(&pc.receivedValue), "received", label)
		ch <- prometheus.MustNewConstMetric(channelTicketValueDesc, prometheus.CounterValue, inTokens(&pc.redeemedValue), "redeemed", label)
	}
}
