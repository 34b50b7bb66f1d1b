package sim

import (
	"fmt"
	"math/big"
	"time"

	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/token"
)

// Config is one simulated network and its traffic. DefaultConfig fills every field; Validate
// says which one is out of range.
type Config struct {
	// Nodes is the network's size; Senders and Recipients are its first nodes (senders first).
	// Senders and recipients never fail, like `relayd cluster --churnExclude`; they relay too.
	Nodes, Senders, Recipients int
	// Rate is the total of messages per second the senders send, round robin over every
	// (sender, recipient) pair, at exponentially distributed intervals (a Poisson process).
	Rate float64
	// Fixed, instead of Rate's round robin, makes the senders patient (issue 26; `relayctl
	// bench --correspondents fixed`): each writes to one correspondent, drawn once among the
	// recipients (a shuffle by Seed: distinct ones while there are as many recipients as
	// senders), in on/off bursts. On and off periods last an exponential time of means BurstOn
	// and BurstOff (a sender starts in either, in proportion to their means; BurstOff 0 is
	// always on), and while on a sender sends BurstRate messages per second (Poisson).
	Fixed             bool
	BurstRate         float64
	BurstOn, BurstOff time.Duration
	// Warmup is the simulated time before the traffic and the churn start: nodes announce
	// themselves and open their channels meanwhile.
	Warmup time.Duration
	// Duration is the simulated time of traffic (and churn) after Warmup.
	Duration time.Duration
	// Drain is the time after the traffic for the packets in flight to arrive.
	Drain time.Duration
	// JoinWindow: each node announces itself at a uniformly drawn time in [0, JoinWindow).
	JoinWindow time.Duration
	// ChainDelay is the time from a transaction (announce, open, close) to its being mined.
	ChainDelay time.Duration
	// StrategyInterval and HeartbeatInterval are each node's ticks (2 s in `relayd cluster
	// --topology sparse`); each node's first tick is at a random offset within the interval.
	StrategyInterval, HeartbeatInterval time.Duration
	// MaxChannels and ChannelFunding are the promiscuous strategy's settings; Balance is what
	// every node holds at the start.
	MaxChannels int
	// Relayers is every node's relayers setting: the relayers its messages and cover loops take
	// where such a path exists (else the other count); 0 is 2.
	Relayers       int
	ChannelFunding *big.Int
	Balance        *big.Int
	// AutoFund is the node's autoFund setting: the strategy tops an open outgoing channel to a
	// reachable peer back up to ChannelFunding once its balance fell below half of it, from the
	// node's balance (strategy.Policy.TopUp). AutoRedeem is its autoRedeem: what a relayer takes
	// in on the tickets of the packets it forwarded is redeemed into its balance, a ChainDelay
	// after it held RedeemCount tickets or RedeemValue worth of them (0: no such limit; both 0:
	// every ticket alone). Without them a channel is used up, closed as depleted and reopened
	// only once its closure period is over and its node can fund it; in a layered network the
	// channels between layers carry a W-th of all the traffic each and run dry first.
	AutoFund, AutoRedeem bool
	RedeemCount          int
	RedeemValue          *big.Int
	// ClosurePeriod is the channels contract's closure period.
	ClosurePeriod time.Duration
	// LatencyMin and LatencyMax bound the one-way latency of every node pair, drawn once,
	// uniformly.
	LatencyMin, LatencyMax time.Duration
	// MixDelayMin, MixDelayMean and MixDelayMax are each relayer's mixing delay, drawn per
	// packet as internal/relay draws it: with a Mean, Min plus an exponential draw of mean Mean
	// (Poisson mixing) capped at Max (at Min + 10 × Mean when Max is 0); without, uniform in
	// [Min, Max] (Min when Max is 0).
	MixDelayMin, MixDelayMean, MixDelayMax time.Duration
	// ProcessingMin and ProcessingMax bound the time a hop takes to process a packet (peel,
	// check the ticket) before it acknowledges it and the mixing delay starts, uniform per
	// packet at every relayer and at the recipient.
	ProcessingMin, ProcessingMax time.Duration
	// CoverRate is the loop cover traffic: each node that is up sends dummy packets over a
	// path back to itself at this rate (packets per second, a Poisson process) while the
	// traffic runs, paid with tickets like messages; 0 is none.
	CoverRate float64
	// SendRate, when positive, makes every node's sending a constant-rate stream
	// (docs/TRAFFIC.md): a Poisson process of SendRate packets per second per node while the
	// traffic runs. A message waits in its sender's queue for the next tick; a tick with no
	// message sends cover instead: drop cover (a packet over a path to a node drawn uniformly,
	// which drops it), or with StreamLoops a loop back to the node. 0 is today's sending: a
	// message leaves when it is sent.
	SendRate    float64
	StreamLoops bool
	// DropRate is drop cover outside any stream: each node sends drop packets at this rate
	// (Poisson) beside its messages while the traffic runs; 0 is none.
	DropRate float64
	// Reemit makes the recipient of a message send one drop packet for it after an exponential
	// delay of mean ReemitDelay (0: the mixing mean), beside its stream (docs/TRAFFIC.md's
	// recipient side).
	Reemit      bool
	ReemitDelay time.Duration
	// Fragments, when above 1, makes every message a framed one as internal/courier sends it
	// (docs/PROTOCOL.md §8): that many packets (its fragments and its acknowledgement block's
	// parts), each over a path of its own, FragmentGap apart at its sender. Ack makes the
	// recipient acknowledge a message once all its packets arrived: one packet back to the
	// sender over a return path (a reply block's: relayers as a message's, from the recipient's
	// channels to the sender). Answer makes the recipient also answer every message with one
	// packet over another return path, an exponential time of mean AnswerDelay (0: at once)
	// after the message arrived whole. Nothing is resent: a packet lost leaves its message
	// incomplete. With SendRate every packet, also those sent back, waits for a tick of its
	// node's stream (FragmentGap does not apply), as the router paces the courier's.
	Fragments   int
	FragmentGap time.Duration
	Ack, Answer bool
	AnswerDelay time.Duration
	// Observe records what an observer of every link sees (each packet and acknowledgement:
	// time, ends, size) and the messages' ground truth, and runs internal/observe's attacks
	// on them at the end of the run (Report.Privacy). It costs memory: a few transmissions per
	// packet.
	Observe bool
	// MaxScored, when positive, bounds the messages the observer scores (observe.Options).
	MaxScored int
	// Churn is the share of the nodes that are up and neither senders nor recipients that go down
	// every ChurnInterval (at least one when Churn > 0), each for ChurnDowntime; 0 is no churn.
	Churn                        float64
	ChurnInterval, ChurnDowntime time.Duration
	// Layers, when positive, makes the network a layered one (issue 30, internal/topology): once
	// every node's announcement is mined (JoinWindow + ChainDelay) the epoch's topology is drawn
	// among the announced nodes, Layers layers of at most LayerWidth relayers (every node holds
	// Balance, so every one is eligible), and it holds for the rest of the run (one epoch; Epoch re-draws it). Paths
	// then cross one relayer of each layer in order (Layers relayers; Relayers is ignored) and end
	// at the recipient without a channel into it (the last ticket is worth 0). The channel
	// strategy opens, for a node outside the layers, MaxChannels channels to the first layer's
	// relayers; for a relayer, one to each relayer of the next layer and of the first (its own
	// traffic starts there), all at once, funded with ChannelFunding out of a stake it holds for
	// it (its balance is raised to what they take). Nodes outside the layers relay nothing.
	// LayerCoverRate is each relayer's own loops (mix loops, packets per second per relayer,
	// Poisson) beside CoverRate. 0 is today's free routes.
	Layers, LayerWidth int
	LayerCoverRate     float64
	// Epoch, when positive with Layers, re-draws the layers every Epoch after the first draw
	// (epochs 2, 3, …, while the traffic runs); 0 is one epoch a run. At a re-draw the previous
	// epoch's layers stay in use for EpochOverlap: senders take them where the new ones have no
	// path yet, and every node keeps its channels into them beside the ones it opens into the
	// new layers; then its strategy closes them. A node's balance is raised to what the new
	// channels take (Report.Redraw counts it).
	Epoch, EpochOverlap time.Duration
	// EpochAtOnce makes senders take the new layers at once after a re-draw, without falling
	// back on the previous epoch's (the node's router falls back during its grace,
	// layers.View.Paths): until their channels into the new first layer are open they find no
	// path. The channels are kept for EpochOverlap either way.
	EpochAtOnce bool
	// Seed decides every draw: the same Config gives the same Report.
	Seed uint64
}

// DefaultConfig is 30 nodes as `relayd cluster --nodes 30 --topology sparse` started them, 5
// senders to 5 recipients at 100 messages per second for 60 s, without churn, uniform mixing
// in [0, 20 ms], 4 channels, no cover traffic, no stream and no observer: the package's test
// network, not a node's defaults (those are internal/settings.Defaults; `relaysim` without
// flags puts them on every node).
func DefaultConfig() Config {
	return Config{
		Nodes: 30, Senders: 5, Recipients: 5, Rate: 100,
		Warmup: 20 * time.Second, Duration: 60 * time.Second, Drain: 5 * time.Second,
		JoinWindow: 5 * time.Second, ChainDelay: time.Second,
		StrategyInterval: 2 * time.Second, HeartbeatInterval: 2 * time.Second,
		MaxChannels:    4,
		ChannelFunding: token.Tokens(100).Big(),
		Balance:        token.Tokens(500).Big(),
		ClosurePeriod:  60 * time.Second,
		LatencyMin:     20 * time.Millisecond, LatencyMax: 150 * time.Millisecond,
		MixDelayMax:   20 * time.Millisecond,
		ProcessingMin: 200 * time.Microsecond, ProcessingMax: 2 * time.Millisecond,
		ChurnInterval: 20 * time.Second, ChurnDowntime: 5 * time.Second,
		Seed: 1,
	}
}

// maxFragments is the most packets of one framed message: fragment.MaxFragments and three
// acknowledgement block parts.
const maxFragments = 3072 + 3

// framed tells whether messages are framed ones: several packets, acknowledged or answered.
func (c Config) framed() bool { return c.Fragments > 1 || c.Ack || c.Answer }

// minNodes is the fewest nodes with a path: a sender, two relayers and a recipient.
const minNodes = 4

// maxNodes bounds Nodes (memory: a few kB per node, and the observer's records).
const maxNodes = 20000

// mixing is the mixing delay's range and mean as internal/relay resolves them: a mean without
// a maximum is capped at Min + 10 × Mean, no mean and no maximum is a constant Min.
func (c Config) mixing() (lo, mean, hi time.Duration) {
	lo, mean, hi = c.MixDelayMin, c.MixDelayMean, c.MixDelayMax
	switch {
	case hi == 0 && mean > 0:
		hi = lo + 10*mean
	case hi == 0:
		hi = lo
	}
	return lo, mean, hi
}

// Validate reports the first field out of range, wrapping ErrBadConfig.
func (c Config) Validate() error {
	bad := func(field, why string) error { return fmt.Errorf("%w: %s %s", ErrBadConfig, field, why) }
	switch {
	case c.Senders < 1 || c.Recipients < 1:
		return bad("senders/recipients", "must be at least 1")
	case c.Nodes < max(c.Senders+c.Recipients, minNodes) || c.Nodes > maxNodes:
		return bad("nodes", fmt.Sprintf("must be between senders+recipients and %d, and at least %d", maxNodes, minNodes))
	case !c.Fixed && (!(c.Rate > 0) || c.Rate > 1e6):
		return bad("rate", "must be above 0 and at most 1e6 messages per second")
	case c.Fixed && (!(c.BurstRate > 0) || c.BurstRate > 1e4 || c.BurstOn <= 0 || c.BurstOff < 0):
		return bad("burstRate/burstOn/burstOff", "must be a rate above 0 and at most 1e4, a positive mean on period and a mean off period not negative")
	case !(c.SendRate >= 0) || c.SendRate > 1000 || !(c.DropRate >= 0) || c.DropRate > 1000:
		return bad("sendRate/dropRate", "must be between 0 and 1000 packets per second per node")
	case c.ReemitDelay < 0:
		return bad("reemitDelay", "must not be negative")
	case c.Fragments < 0 || c.Fragments > maxFragments || c.FragmentGap < 0 || c.AnswerDelay < 0:
		return bad("fragments/fragmentGap/answerDelay", fmt.Sprintf("must be 0 to %d packets, and durations not negative", maxFragments))
	case c.Warmup < 0 || c.Duration <= 0 || c.Drain < 0 || c.JoinWindow < 0 || c.ChainDelay < 0:
		return bad("warmup/duration/drain/joinWindow/chainDelay", "must not be negative (duration positive)")
	case c.StrategyInterval <= 0 || c.HeartbeatInterval <= 0:
		return bad("strategyInterval/heartbeatInterval", "must be positive")
	case c.Relayers != 0 && (c.Relayers < path.MinRelayers || c.Relayers > path.MaxRelayers):
		return bad("relayers", "must be 2 or 3")
	case c.Layers != 0 && (c.Layers < path.MinRelayers || c.Layers > path.MaxRelayers || c.LayerWidth < 1 || c.Layers*c.LayerWidth > c.Nodes):
		return bad("layers/layerWidth", "must be 0, or 2 or 3 layers of at least 1 relayer, at most nodes in all")
	case c.Epoch < 0 || c.EpochOverlap < 0 || (c.Epoch > 0 && c.EpochOverlap >= c.Epoch):
		return bad("epoch/epochOverlap", "must not be negative, the overlap shorter than the epoch")
	case !(c.LayerCoverRate >= 0) || c.LayerCoverRate > 1000:
		return bad("layerCoverRate", "must be between 0 and 1000 packets per second per relayer")
	case c.MaxChannels < 1:
		return bad("maxChannels", "must be at least 1")
	case c.ChannelFunding == nil || c.ChannelFunding.Sign() <= 0 || c.Balance == nil || c.Balance.Sign() < 0:
		return bad("channelFunding/balance", "must be positive")
	case c.RedeemCount < 0 || (c.RedeemValue != nil && c.RedeemValue.Sign() < 0):
		return bad("redeemCount/redeemValue", "must not be negative")
	case c.ClosurePeriod < 0:
		return bad("closurePeriod", "must not be negative")
	case c.LatencyMin < 0 || c.LatencyMax < c.LatencyMin:
		return bad("latency", "must be a range min-max with 0 <= min <= max")
	case c.MixDelayMin < 0 || c.MixDelayMean < 0 || c.MixDelayMax < 0 || (c.MixDelayMax != 0 && c.MixDelayMin > c.MixDelayMax):
		return bad("mixDelayMin/mixDelayMean/mixDelayMax", "must satisfy 0 <= min <= max (or max 0) and 0 <= mean")
	case c.ProcessingMin < 0 || c.ProcessingMax < c.ProcessingMin:
		return bad("processing", "must be a range min-max with 0 <= min <= max")
	case !(c.CoverRate >= 0) || c.CoverRate > 1000:
		return bad("coverRate", "must be between 0 and 1000 packets per second per node")
	case c.MaxScored < 0:
		return bad("maxScored", "must not be negative")
	case !(c.Churn >= 0 && c.Churn <= 1):
		return bad("churn", "must be between 0 and 1")
	case c.Churn > 0 && (c.ChurnInterval <= 0 || c.ChurnDowntime < 0):
		return bad("churnInterval/churnDowntime", "must be positive")
	}
	return nil
}
