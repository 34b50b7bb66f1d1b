package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// Spread is the least, median and greatest of a count over the nodes.
type Spread struct {
	Min    int `json:"min"`
	Median int `json:"median"`
	Max    int `json:"max"`
}

func spread(xs []int) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Spread{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

// Report is what one run measured. Shares are in [0, 1]; latencies are end to end, from the
// sender's send to the recipient's receipt, over the delivered messages.
type Report struct {
	Nodes      int     `json:"nodes"`
	Senders    int     `json:"senders"`
	Recipients int     `json:"recipients"`
	Rate       float64 `json:"rate"`
	Churn      float64 `json:"churn"`
	Seed       uint64  `json:"seed"`

	// Fixed, BurstRate, BurstOn and BurstOff are the patient senders' workload (Config).
	Fixed     bool          `json:"fixed,omitempty"`
	BurstRate float64       `json:"burstRate,omitempty"`
	BurstOn   time.Duration `json:"burstOnNs,omitempty"`
	BurstOff  time.Duration `json:"burstOffNs,omitempty"`
	// MixDelayMean and CoverRate are the mixing and cover traffic the run had (Config).
	MixDelayMean time.Duration `json:"mixDelayMeanNs"`
	CoverRate    float64       `json:"coverRate"`
	// Messages is the messages the senders tried to send.
	Messages int `json:"messages"`
	// PathFound is the share of Messages for which a path of 2 or 3 relayers was found;
	// ThreeRelayers the share of those needing 3.
	PathFound     float64 `json:"pathFound"`
	ThreeRelayers float64 `json:"threeRelayers"`
	// RefusedFirstHop counts messages with a path whose first relayer was down at the send:
	// nothing was sent, and the sender marked it down.
	RefusedFirstHop int `json:"refusedFirstHop"`
	// Accepted messages were sent; Delivered of them arrived, Lost did not (a relayer down when
	// the packet reached it or while it held it).
	Accepted  int     `json:"accepted"`
	Delivered int     `json:"delivered"`
	Lost      int     `json:"lost"`
	Delivery  float64 `json:"delivery"`
	// LatencyP50/P90/P99 are end-to-end latency percentiles (nanoseconds in JSON).
	LatencyP50 time.Duration `json:"latencyP50Ns"`
	LatencyP90 time.Duration `json:"latencyP90Ns"`
	LatencyP99 time.Duration `json:"latencyP99Ns"`
	// MeanHops is the mean number of links of the accepted messages' paths (relayers + 1).
	MeanHops float64 `json:"meanHops"`
	// ChannelsOut and ChannelsIn spread the open channels per node at the end of the run;
	// ZeroIncoming is the share of the nodes nobody has an open channel to.
	ChannelsOut  Spread  `json:"channelsOut"`
	ChannelsIn   Spread  `json:"channelsIn"`
	ZeroIncoming float64 `json:"zeroIncoming"`
	// Kills counts the nodes churn took down.
	Kills int `json:"kills"`
	// CoverSent counts the cover loops sent (a path found and its first hop up), CoverReturned
	// those back at their node, CoverNoPath the draws that found no loop; CoverTokens is what
	// their nodes paid for every cover packet, loops and drop cover (first tickets), in tokens.
	CoverSent     int     `json:"coverSent"`
	CoverReturned int     `json:"coverReturned"`
	CoverNoPath   int     `json:"coverNoPath"`
	CoverTokens   float64 `json:"coverTokens"`
	// BytesPerNode is what a node sends on its links per second of traffic, on average:
	// packet frames (FrameSize) and acknowledgements (AckSize), messages and cover;
	// CoverShare is the share of those bytes that is cover.
	BytesPerNode float64 `json:"bytesPerNode"`
	CoverShare   float64 `json:"coverShare"`
	// PacketsPerNode is the packets a node puts on its links per second of traffic, on
	// average (every hop of every packet: its own, relayed, cover).
	PacketsPerNode float64 `json:"packetsPerNode"`
	// SendRate, StreamLoops, DropRate and Reemit are the traffic shape the run had (Config);
	// DropSent counts the drop packets sent (stream ticks without a message, DropRate and
	// re-emissions), Reemitted the re-emissions among them, DropReceived those that reached
	// the node that dropped them.
	SendRate     float64 `json:"sendRate,omitempty"`
	StreamLoops  bool    `json:"streamLoops,omitempty"`
	DropRate     float64 `json:"dropRate,omitempty"`
	Reemit       bool    `json:"reemit,omitempty"`
	DropSent     int     `json:"dropSent"`
	Reemitted    int     `json:"reemitted"`
	DropReceived int     `json:"dropReceived"`
	// QueueMean and QueueP99 are the wait of the messages in their sender's stream queue
	// (nanoseconds in JSON); MaxQueue the longest queue; Unsent the messages still queued when
	// the traffic ended (with SendRate).
	QueueMean time.Duration `json:"queueMeanNs"`
	QueueP99  time.Duration `json:"queueP99Ns"`
	MaxQueue  int           `json:"maxQueue"`
	Unsent    int           `json:"unsent"`
	// Layers, LayerWidth and LayerCoverRate are the layered topology the run had (Config; 0:
	// free routes); LayerRelayers is how many relayers the draw gave (0: free routes, or no
	// draw) and LayerLoops the relayers' own loops sent.
	Layers         int     `json:"layers,omitempty"`
	LayerWidth     int     `json:"layerWidth,omitempty"`
	LayerCoverRate float64 `json:"layerCoverRate,omitempty"`
	LayerRelayers  int     `json:"layerRelayers,omitempty"`
	LayerLoops     int     `json:"layerLoops,omitempty"`
	// Cost per node and day of traffic, at the run's rates (a second of traffic times 86,400).
	// RelayerBytesPerDay, RelayerEarnsPerDay and RelayerSpendsPerDay are the layer relayers' (with
	// re-draws, Config.Epoch: the last epoch's, over the whole run, which is not per relayer)
	// mean (every node's in free routes, where every node relays): bytes put on their links,
	// tokens earned relaying (one relayer's price, 0.01, per packet forwarded) and tokens spent on
	// their own packets' first tickets; OtherBytesPerDay and OtherSpendsPerDay are the same for
	// the nodes outside the layers (free routes: 0).
	RelayerBytesPerDay  float64 `json:"relayerBytesPerDay"`
	RelayerEarnsPerDay  float64 `json:"relayerEarnsPerDay"`
	RelayerSpendsPerDay float64 `json:"relayerSpendsPerDay"`
	OtherBytesPerDay    float64 `json:"otherBytesPerDay,omitempty"`
	OtherSpendsPerDay   float64 `json:"otherSpendsPerDay,omitempty"`
	// Redemptions and TopUps count the relayers' redemptions (Config.AutoRedeem) and the
	// channels topped up (Config.AutoFund).
	Redemptions int `json:"redemptions,omitempty"`
	TopUps      int `json:"topUps,omitempty"`
	// Privacy is what the global passive observer achieved (with Config.Observe): with framed
	// messages, over their packets one by one (Timing) and combined per message (Grouped).
	Privacy *observe.Report `json:"privacy,omitempty"`
	// Redraw is what the layers' re-draws cost (Config.Epoch); nil without any.
	Redraw *RedrawReport `json:"redraw,omitempty"`
	// Framed is what became of framed messages and the packets sent back (Config.Fragments,
	// Ack, Answer); nil without.
	Framed *FramedReport `json:"framed,omitempty"`
}

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (s *Sim) report() Report {
	st := s.st
	lat := slices.Clone(st.latencies)
	slices.Sort(lat)
	r := Report{
		Nodes: s.cfg.Nodes, Senders: s.cfg.Senders, Recipients: s.cfg.Recipients, Rate: s.cfg.Rate,
		Churn: s.cfg.Churn, Seed: s.cfg.Seed,
		Messages: st.messages, PathFound: share(st.found, st.messages), ThreeRelayers: share(st.three, st.found),
		RefusedFirstHop: st.refusedFirstHop,
		Accepted:        st.accepted, Delivered: st.delivered, Lost: st.lost, Delivery: share(st.delivered, st.accepted),
		LatencyP50: percentile(lat, 0.50), LatencyP90: percentile(lat, 0.90), LatencyP99: percentile(lat, 0.99),
		Kills:        st.kills,
		MixDelayMean: s.cfg.MixDelayMean, CoverRate: s.cfg.CoverRate,
		CoverSent: st.coverSent, CoverReturned: st.coverReturned, CoverNoPath: st.coverNoPath,
	}
	price := tickets.AmountFor(1)
	r.CoverTokens = float64(st.coverPaid) * token.FromUint256(&price).Float64()
	bytes := st.messageBytes + st.coverBytes
	r.BytesPerNode = float64(bytes) / float64(s.cfg.Nodes) / s.cfg.Duration.Seconds()
	r.CoverShare = float64(st.coverBytes) / float64(max(bytes, 1))
	r.PacketsPerNode = float64(st.frames) / float64(s.cfg.Nodes) / s.cfg.Duration.Seconds()
	r.SendRate, r.StreamLoops, r.DropRate, r.Reemit = s.cfg.SendRate, s.cfg.StreamLoops, s.cfg.DropRate, s.cfg.Reemit
	if s.cfg.Fixed {
		r.Fixed, r.BurstRate, r.BurstOn, r.BurstOff = true, s.cfg.BurstRate, s.cfg.BurstOn, s.cfg.BurstOff
	}
	r.DropSent, r.Reemitted, r.DropReceived = st.dropSent, st.reemitted, st.dropReceived
	if len(st.queueDelays) > 0 {
		q := slices.Clone(st.queueDelays)
		slices.Sort(q)
		var sum time.Duration
		for _, d := range q {
			sum += d
		}
		r.QueueMean, r.QueueP99 = sum/time.Duration(len(q)), percentile(q, 0.99)
	}
	r.MaxQueue, r.Unsent = st.maxQueue, st.unsent
	if st.accepted > 0 {
		r.MeanHops = float64(st.relayers+st.accepted) / float64(st.accepted)
	}
	in := make([]int, len(s.nodes))
	out := make([]int, len(s.nodes))
	zero := 0
	for i, n := range s.nodes {
		in[i] = n.incoming
		for _, c := range n.out {
			if c.state == open || c.state == closingTx {
				out[i]++
			}
		}
		if n.incoming == 0 {
			zero++
		}
	}
	r.ChannelsIn, r.ChannelsOut, r.ZeroIncoming = spread(in), spread(out), share(zero, len(s.nodes))
	r.Redemptions, r.TopUps = st.redeemed, st.toppedUp
	s.costs(&r)
	r.Redraw = s.redrawReport()
	return r
}

// costs fills the Report's layered topology and its cost per node and day.
func (s *Sim) costs(r *Report) {
	r.Layers, r.LayerWidth, r.LayerCoverRate, r.LayerLoops = s.cfg.Layers, s.cfg.LayerWidth, s.cfg.LayerCoverRate, s.st.layerLoops
	price := tickets.AmountFor(1)
	tokens := token.FromUint256(&price).Float64()
	day := 86400 / s.cfg.Duration.Seconds()
	var rel, oth struct {
		n                    int
		bytes, earned, spent int64
	}
	for i := range s.nodes {
		g := &rel
		if s.top != nil && s.layerOf[i] < 0 {
			g = &oth
		}
		g.n++
		g.bytes += s.sentBytes[i]
		g.earned += s.earned[i]
		g.spent += s.spent[i]
	}
	if s.top != nil {
		r.LayerRelayers = rel.n
	}
	per := func(x int64, n int) float64 { return float64(x) / float64(max(n, 1)) * day }
	r.RelayerBytesPerDay, r.RelayerEarnsPerDay, r.RelayerSpendsPerDay = per(rel.bytes, rel.n), per(rel.earned, rel.n)*tokens, per(rel.spent, rel.n)*tokens
	if oth.n > 0 {
		r.OtherBytesPerDay, r.OtherSpendsPerDay = per(oth.bytes, oth.n), per(oth.spent, oth.n)*tokens
	}
}

// Write prints r as a few lines of text.
func (r Report) Write(w io.Writer) error {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	traffic := fmt.Sprintf("at %.0f msg/s", r.Rate)
	if r.Fixed {
		traffic = fmt.Sprintf("each to one of them, in bursts of %g msg/s (mean on %v, off %v)", r.BurstRate, r.BurstOn, r.BurstOff)
	}
	_, err := fmt.Fprintf(w, `nodes %d, %d senders -> %d recipients %s, churn %.0f%%, seed %d
messages %d: path found %.2f%% (3 relayers %.2f%%), refused at a down first hop %d
accepted %d: delivered %d (%.2f%%), lost %d; %d kills
latency p50 %s, p90 %s, p99 %s; mean hops %.2f
channels out min/median/max %d/%d/%d, in %d/%d/%d; nodes with no incoming channel %.1f%%; %d top-ups, %d redemptions
mixing mean %s, loops %.2g/s per node: %d sent, %d returned; cover paid %.4g tokens; %.0f B/s per node, %.1f%% cover
stream %.2g/s per node, drop cover %.2g/s, re-emission %v: %d drop packets (%d re-emitted); queue mean %s, p99 %s, longest %d, %d unsent; %.1f packets/s per node
`, r.Nodes, r.Senders, r.Recipients, traffic, 100*r.Churn, r.Seed,
		r.Messages, 100*r.PathFound, 100*r.ThreeRelayers, r.RefusedFirstHop,
		r.Accepted, r.Delivered, 100*r.Delivery, r.Lost, r.Kills,
		ms(r.LatencyP50), ms(r.LatencyP90), ms(r.LatencyP99), r.MeanHops,
		r.ChannelsOut.Min, r.ChannelsOut.Median, r.ChannelsOut.Max, r.ChannelsIn.Min, r.ChannelsIn.Median, r.ChannelsIn.Max,
		100*r.ZeroIncoming, r.TopUps, r.Redemptions,
		r.MixDelayMean, r.CoverRate, r.CoverSent, r.CoverReturned, r.CoverTokens, r.BytesPerNode, 100*r.CoverShare,
		r.SendRate, r.DropRate, r.Reemit, r.DropSent, r.Reemitted, ms(r.QueueMean), ms(r.QueueP99), r.MaxQueue, r.Unsent, r.PacketsPerNode)
	if err != nil {
		return err
	}
	if r.Layers > 0 {
		_, err = fmt.Fprintf(w, "layers %d of width %d: %d relayers, %d mix loops; a relayer %.3g GB/day, earns %.4g tokens/day, spends %.4g; another node %.3g GB/day, spends %.4g tokens/day\n",
			r.Layers, r.LayerWidth, r.LayerRelayers, r.LayerLoops, r.RelayerBytesPerDay/1e9, r.RelayerEarnsPerDay, r.RelayerSpendsPerDay, r.OtherBytesPerDay/1e9, r.OtherSpendsPerDay)
	} else {
		_, err = fmt.Fprintf(w, "free routes: a node %.3g GB/day, earns %.4g tokens/day relaying, spends %.4g\n", r.RelayerBytesPerDay/1e9, r.RelayerEarnsPerDay, r.RelayerSpendsPerDay)
	}
	if err != nil {
		return err
	}
	if d := r.Redraw; d != nil {
		_, err = fmt.Fprintf(w, "re-draws %d (the first epoch opened %d channels); per re-draw: %.1f channels opened (%.4g tokens), %.1f closed, %.1f finalized, %.4g tokens added to balances; in the overlaps %d messages, %d without a path; observer entropy %.2f bits in the overlaps (%d scored), %.2f outside (%d)\n",
			d.Redraws, d.FirstOpened, d.Opened, d.Tokens, d.Closed, d.Finalized, d.Added, d.Messages, d.NoPath, d.EntropyOverlap, d.ScoredOverlap, d.EntropyOther, d.ScoredOther)
		if err != nil {
			return err
		}
	}
	if f := r.Framed; f != nil {
		_, err = fmt.Fprintf(w, "framed: %d packets a message; %d messages, %d whole (p50 %s, p99 %s); sent back: %d/%d acks and %d/%d answers arrived, %d without a path, %d lost\n",
			f.Fragments, f.Messages, f.Complete, ms(f.CompleteP50), ms(f.CompleteP99), f.AcksArrived, f.Acks, f.AnswersArrived, f.Answers, f.BackNoPath, f.BackLost)
		if err != nil {
			return err
		}
	}
	if r.Privacy == nil {
		return nil
	}
	p := r.Privacy
	_, err = fmt.Fprintf(w, `observer: %d messages scored over %d senders (max entropy %.2f bits, random guess %.3f)
  timing: entropy %.2f bits (%.1f%% of max), top-1 %.3f (%.1f× random)
  size:   entropy %.2f bits (%.1f%% of max), top-1 %.3f (%.1f× random)
`, p.Messages, p.Senders, p.MaxEntropy, p.RandomGuess,
		p.Timing.MeanEntropy, 100*p.Timing.EntropyShare, p.Timing.Top1, p.Timing.Top1OverRandom,
		p.Size.MeanEntropy, 100*p.Size.EntropyShare, p.Size.Top1, p.Size.Top1OverRandom)
	if err != nil {
		return err
	}
	if p.Groups > 0 {
		if _, err := fmt.Fprintf(w, "  grouped per message: %d scored, entropy %.2f bits (%.1f%% of max), top-1 %.3f (%.1f× random)\n",
			p.Groups, p.Grouped.MeanEntropy, 100*p.Grouped.EntropyShare, p.Grouped.Top1, p.Grouped.Top1OverRandom); err != nil {
			return err
		}
	}
	if f := r.Framed; f != nil {
		for _, b := range []struct {
			name string
			rep  *observe.Report
		}{{"answers", f.Answer}, {"sent back", f.Back}} {
			if b.rep == nil {
				continue
			}
			q := b.rep
			if _, err := fmt.Fprintf(w, "  %s, traced to the recipients: %d scored, entropy %.2f bits (%.1f%% of max), top-1 %.3f (%.1f× random)\n",
				b.name, q.Messages, q.Timing.MeanEntropy, 100*q.Timing.EntropyShare, q.Timing.Top1, q.Timing.Top1OverRandom); err != nil {
				return err
			}
		}
	}
	lt := p.LongTerm
	for _, side := range []struct {
		name string
		rs   []observe.SDAResult
	}{{"senders", lt.SenderSDA}, {"recipients", lt.RecipientSDA}} {
		var cells []string
		for _, x := range side.rs {
			cells = append(cells, fmt.Sprintf("k=%d %.2f/%.2f (%d)", x.K, x.Classic, x.Residual, x.Scored))
		}
		if _, err := fmt.Fprintf(w, "  SDA on %s, top-1 classic/out−in (targets; random %.3f): %s\n", side.name, lt.Random, strings.Join(cells, ", ")); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "  activity per %v, balanced accuracy count/residual: senders %.2f/%.2f, recipients %.2f/%.2f\n",
		lt.ActivityWindow, lt.SenderActivity.Count.Balanced, lt.SenderActivity.Residual.Balanced,
		lt.RecipientActivity.Count.Balanced, lt.RecipientActivity.Residual.Balanced)
	return err
}
