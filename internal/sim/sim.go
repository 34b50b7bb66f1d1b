package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/topology"
)

// What an observer sees on a link, in bytes: every packet travels in one frame of FrameSize
// (messages and cover alike), every acknowledgement in one of AckSize.
const (
	FrameSize = 1520
	AckSize   = 49
)

// Heartbeat quality as internal/p2p computes it.
const (
	initialQuality = 0.5
	qualityWeight  = 0.25
)

// chanState is a channel's life as its funder sees it.
type chanState int

const (
	opening   chanState = iota // open transaction sent, not mined
	open                       // open on chain: carries tickets
	closingTx                  // close transaction sent, not mined: still open on chain
	closing                    // pending to close: no tickets, finalizable after the closure period
	finalTx                    // finalizing transaction sent
	gone                       // finalized: its balance went back to the funder
)

type channel struct {
	src, dst      int
	balance       uint256.Int
	state         chanState
	finalizableAt time.Duration
}

type node struct {
	addr        common.Address
	announced   bool
	up          bool
	incarnation int // counts restarts: a packet held by a killed node is lost
	balance     *big.Int
	out         []*channel // outgoing channels not finalized, in opening order
	in          []*channel // channels to it not finalized, in opening order
	incoming    int        // open channels to it
	runner      *strategy.Runner
	rng         *rand.Rand // the runner's
	down        map[int]bool
	// Heartbeat quality is computed when asked (Sim.quality), not kept per peer: from when the
	// node last (re)started, when each peer's announcement was mined, the node's heartbeat
	// schedule (hbFirst, then every HeartbeatInterval) and each peer's downs and restarts.
	restartedAt, announcedAt, hbFirst time.Duration
	history                           []transition
	// unredeemed is the value of the tickets the node took in and has not redeemed yet
	// (Config.AutoRedeem), unredeemedN their count.
	unredeemed  uint256.Int
	unredeemedN int
}

// transition is a node going down (up false) or coming back at a time.
type transition struct {
	at time.Duration
	up bool
}

type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type queue []*event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// Sim is one simulated network. It is not safe for concurrent use.
type Sim struct {
	cfg       Config
	now       time.Duration
	seq       uint64
	q         queue
	nodes     []*node
	byAddr    map[common.Address]int
	announced []int // nodes whose announcement is mined, in that order
	chans     []*channel
	policy    strategy.Policy
	rng       *rand.Rand // traffic, mixing delays, churn
	pathRng   *rand.Rand
	procRng   *rand.Rand // processing times
	coverRng  *rand.Rand // cover traffic's times and nodes
	shapeRng  *rand.Rand // the stream's, drop cover's and re-emissions' times and destinations
	workRng   *rand.Rand // the patient senders' correspondents and bursts
	logger    *slog.Logger
	mixLo     time.Duration
	mixMean   time.Duration
	mixHi     time.Duration

	peersBuf []strategy.Peer
	nodesBuf []path.Node
	edgesBuf []path.Edge
	// graph's marks: a node is in the graph, or its channels are, when its mark is stamp.
	stamp           uint64
	added, expanded []uint64

	st        stats
	sent      int // messages offered so far
	trafficTo time.Duration
	// queues holds each node's messages waiting for a tick of its stream (Config.SendRate).
	queues [][]pending
	// depleted is the strategy's DepletedBelow.
	depleted uint256.Int
	// earned counts each node's relayed packets (each earned it one relayer's price: the ticket it
	// took in less the one it paid on); spent the relayer prices of the first tickets of the
	// packets it sent; sentBytes what it put on its links.
	earned, spent, sentBytes []int64
	// With Config.Layers: the epoch's topology, each node's layer (-1: outside), the layers'
	// nodes and each node's peers for the channel strategy.
	top     *topology.Topology
	layerOf []int
	layers  [][]int
	peersOf [][]int
	// prev is the previous epoch's layers during an overlap (Config.EpochOverlap), kept the
	// channels each node keeps into them beyond its peers, redraws the counters at each re-draw.
	prev    *epochDraw
	kept    []int
	redraws []redraw
	// byIndex is the announced nodes in index order.
	byIndex []int
	// minedAt is when each announcement is mined, in order.
	minedAt []time.Duration

	// With Config.Observe: what the observer saw, and the ground truth of the accepted
	// messages in the order they were sent.
	tx    []observe.Transmission
	truth []observe.Message
	// With framed messages (Config.Fragments, Ack, Answer): each truth entry's message (-1:
	// a packet alone), the messages, and the ground truth of the packets sent back on return
	// paths with their kind and message.
	groups      []int
	framed      []*framedMsg
	backTruth   []observe.Message
	backKind    []backKind
	backGroup   []int
	framedStats framedStats
}

type stats struct {
	messages, noPath, found, three, refusedFirstHop, accepted, delivered, lost int
	relayers                                                                   int
	latencies                                                                  []time.Duration
	kills                                                                      int
	// Cover: loops sent (a path found, the first hop up), returned and lost, and the ones
	// without a path; coverPaid is what their senders paid, in tickets of one relayer.
	coverSent, coverReturned, coverLost, coverNoPath, coverPaid int
	// Bytes on the links: message packets and their acks; cover packets and theirs.
	messageBytes, coverBytes int64
	// frames counts the packets put on links (every hop of every packet).
	frames int64
	// Drop cover sent (stream ticks without a message, DropRate, re-emissions), re-emissions
	// among them, drop packets that reached their node, and draws without a path.
	dropSent, reemitted, dropReceived, dropNoPath int
	// queueDelays is the wait of every message in its sender's stream queue; unsent counts
	// those still queued when the traffic ended; maxQueue is the longest queue seen.
	queueDelays      []time.Duration
	unsent, maxQueue int
	// layerLoops counts the relayers' own loops drawn (Config.LayerCoverRate).
	layerLoops int
	// Channels opened, closes started and closures finalized; raised is the channels' worth of
	// funding added to nodes' balances at the draws (Sim.setPeers).
	opened, closed, finalized, raised int
	// redeemed counts the redemptions (Config.AutoRedeem), toppedUp the top-ups
	// (Config.AutoFund).
	redeemed, toppedUp int
}

// New builds the network of cfg; nothing happens before Run.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	depleted := amount(2) // a message's first ticket
	s := &Sim{
		cfg:    cfg,
		byAddr: make(map[common.Address]int, cfg.Nodes),
		policy: strategy.Policy{Strategy: strategy.Promiscuous, MaxChannels: cfg.MaxChannels,
			ChannelFunding: new(big.Int).Set(cfg.ChannelFunding), DepletedBelow: depleted.ToBig(), TopUp: cfg.AutoFund},
		rng:       rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		pathRng:   rand.New(rand.NewPCG(cfg.Seed, 0x9a7)),
		procRng:   rand.New(rand.NewPCG(cfg.Seed, 0x9c0)),
		coverRng:  rand.New(rand.NewPCG(cfg.Seed, 0xc0fe)),
		shapeRng:  rand.New(rand.NewPCG(cfg.Seed, 0x5a9e)),
		workRng:   rand.New(rand.NewPCG(cfg.Seed, 0x26)),
		queues:    make([][]pending, cfg.Nodes),
		earned:    make([]int64, cfg.Nodes),
		spent:     make([]int64, cfg.Nodes),
		sentBytes: make([]int64, cfg.Nodes),
		logger:    slog.New(slog.DiscardHandler),
	}
	s.mixLo, s.mixMean, s.mixHi = cfg.mixing()
	s.depleted = depleted
	for i := range cfg.Nodes {
		var a common.Address
		a[0] = 0x5e
		a[16], a[17], a[18], a[19] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		n := &node{addr: a, up: true, balance: new(big.Int).Set(cfg.Balance),
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), down: map[int]bool{}, announcedAt: never}
		s.nodes = append(s.nodes, n)
		s.byAddr[a] = i
		s.restart(i)
	}
	return s, nil
}

// restart gives node i a fresh process: a new strategy runner and heartbeat state.
func (s *Sim) restart(i int) {
	n := s.nodes[i]
	if !n.up {
		n.history = append(n.history, transition{at: s.now, up: true})
	}
	n.up = true
	n.restartedAt = s.now
	clear(n.down)
	// NewRunner fails only without a policy or a world.
	n.runner, _ = strategy.NewRunner(strategy.RunnerConfig{Policy: func() strategy.Policy { return s.policyOf(i) },
		World: world{s, i}, Interval: s.cfg.StrategyInterval, Rand: n.rng, Logger: s.logger})
}

func (s *Sim) at(t time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, &event{at: t, seq: s.seq, fn: fn})
}

func (s *Sim) after(d time.Duration, fn func()) { s.at(s.now+d, fn) }

// every runs fn at first, then every d until the end of the run.
func (s *Sim) every(first, d time.Duration, end time.Duration, fn func()) {
	var tick func()
	tick = func() {
		fn()
		if s.now+d < end {
			s.after(d, tick)
		}
	}
	s.at(first, tick)
}

// uniform draws a duration in [0, d).
func (s *Sim) uniform(r *rand.Rand, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(d)))
}

// Run simulates cfg from the start to the end of its Drain and reports. With Config.Observe it
// then runs the observer's attacks (Report.Privacy); their error is the only one, and the rest
// of the Report is filled even then. Call it once.
func (s *Sim) Run() (Report, error) {
	s.start()
	s.runUntil(s.cfg.Warmup + s.cfg.Duration + s.cfg.Drain)
	r := s.report()
	r.Framed = s.framedReport()
	if !s.cfg.Observe {
		return r, nil
	}
	opts := s.ObserverOptions()
	if s.cfg.framed() {
		opts.Groups = s.groups
	}
	pr, err := observe.Analyze(s.tx, s.truth, opts)
	if err != nil {
		return r, fmt.Errorf("observer: %w", err)
	}
	r.Privacy = &pr
	s.scoreRedraws(r.Redraw, &pr)
	if r.Framed != nil {
		if err := s.observeBack(r.Framed); err != nil {
			return r, fmt.Errorf("observer, packets sent back: %w", err)
		}
	}
	return r, nil
}

// Observed returns what the observer of every link saw (in the order the simulation produced
// it, not by time) and the ground truth of the messages sent, in sending order; both are empty
// without Config.Observe. The slices are the Sim's own: do not modify them.
func (s *Sim) Observed() ([]observe.Transmission, []observe.Message) { return s.tx, s.truth }

// ObserverOptions is what the observer knows of the network (its configuration is public): the
// delay between a packet leaving for a relayer and the relayer sending it on, which is a link's
// latency, the processing and the mixing delay (the least latency and processing are added to
// the mixing delay's Min and Max, their ranges are the Jitter), the senders, the frame size and
// how often paths take three relayers.
func (s *Sim) ObserverOptions() observe.Options {
	c := s.cfg
	senders := make([]int, c.Senders)
	for i := range senders {
		senders[i] = i
	}
	least := c.LatencyMin + c.ProcessingMin
	nodes := make([]int, c.Nodes)
	for i := range nodes {
		nodes[i] = i
	}
	return observe.Options{
		Delay: observe.Delay{Min: least + s.mixLo, Mean: s.mixMean, Max: least + s.mixHi,
			Jitter: c.ProcessingMax - c.ProcessingMin + c.LatencyMax - c.LatencyMin},
		Senders:           senders,
		MessageSize:       FrameSize,
		ThreeRelayerShare: share(s.st.three, s.st.found),
		MaxScored:         c.MaxScored,
		LongTerm:          observe.LongTermOptions{Nodes: nodes},
	}
}

// start schedules the nodes' joins and ticks, the churn and the traffic.
func (s *Sim) start() {
	cfg := s.cfg
	end := cfg.Warmup + cfg.Duration + cfg.Drain
	s.trafficTo = cfg.Warmup + cfg.Duration
	for i, n := range s.nodes {
		join := s.uniform(s.rng, cfg.JoinWindow)
		s.minedAt = append(s.minedAt, join+cfg.ChainDelay)
		s.at(join+cfg.ChainDelay, func() {
			n.announced = true
			n.announcedAt = s.now
			s.announced = append(s.announced, i)
			k, _ := slices.BinarySearch(s.byIndex, i)
			s.byIndex = slices.Insert(s.byIndex, k, i)
		})
		s.every(join+s.uniform(s.rng, cfg.StrategyInterval), cfg.StrategyInterval, end, func() {
			if n.up && !s.idle(i) {
				n.runner.Tick(context.Background())
			}
		})
		n.hbFirst = join + s.uniform(s.rng, cfg.HeartbeatInterval)
		s.every(n.hbFirst, cfg.HeartbeatInterval, end, func() { s.heartbeat(i) })
	}
	slices.Sort(s.minedAt)
	if cfg.Churn > 0 {
		s.every(cfg.Warmup+cfg.ChurnInterval, cfg.ChurnInterval, s.trafficTo, s.churn)
	}
	if cfg.Fixed {
		s.patient()
	} else {
		s.at(cfg.Warmup+s.interval(), s.message)
	}
	if cfg.CoverRate > 0 {
		s.at(cfg.Warmup+s.coverInterval(), s.cover)
	}
	s.startShape()
	s.startLayers()
}

// runUntil runs the events up to time end.
func (s *Sim) runUntil(end time.Duration) {
	for s.q.Len() > 0 && s.q[0].at <= end {
		e := heap.Pop(&s.q).(*event)
		s.now = e.at
		e.fn()
	}
}

// interval draws the time to the next message.
func (s *Sim) interval() time.Duration {
	return time.Duration(s.rng.ExpFloat64() / s.cfg.Rate * float64(time.Second))
}

// heartbeat is node i's heartbeat round: it pings every announced node. What that does to its
// qualities Sim.quality computes when asked; here a successful ping clears the peer's down mark.
func (s *Sim) heartbeat(i int) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	for j := range n.down {
		if s.nodes[j].up && s.nodes[j].announced {
			delete(n.down, j)
		}
	}
}

// never is a time after every run: a node not yet announced was announced then.
const never = time.Duration(math.MaxInt64)

// quality is node i's heartbeat quality of node j now, as internal/p2p computes it over i's
// heartbeats: 0.5 when i (re)started, then at each of i's heartbeats after j's announcement was
// mined, moved a quarter of the way to 1 if j was up and to 0 if it was down. It folds j's
// downs and restarts since then over the count of i's heartbeats in each stretch, which is what
// pinging every announced peer every heartbeat did, without a float per pair of nodes.
func (s *Sim) quality(i, j int) float64 {
	n, m := s.nodes[i], s.nodes[j]
	from := max(n.restartedAt, m.announcedAt)
	q := initialQuality
	if from >= s.now {
		return q
	}
	up := true
	for _, tr := range m.history {
		if tr.at <= from {
			up = tr.up
			continue
		}
		if tr.at > s.now {
			break
		}
		q = moved(q, up, s.heartbeats(n, from, tr.at))
		from, up = tr.at, tr.up
	}
	return moved(q, up, s.heartbeats(n, from, s.now))
}

// moved is a quality after k pings that all succeeded (up) or all failed.
func moved(q float64, up bool, k int) float64 {
	if k == 0 {
		return q
	}
	f := math.Pow(1-qualityWeight, float64(k))
	if up {
		return 1 - (1-q)*f
	}
	return q * f
}

// heartbeats counts node n's heartbeats in (lo, hi].
func (s *Sim) heartbeats(n *node, lo, hi time.Duration) int {
	upTo := func(t time.Duration) int64 {
		if t < n.hbFirst {
			return 0
		}
		return int64((t-n.hbFirst)/s.cfg.HeartbeatInterval) + 1
	}
	return int(upTo(hi) - upTo(lo))
}

// churn kills a share of the nodes that are up and neither senders nor recipients, as
// internal/cluster's churner picks them, and restarts each after the downtime.
func (s *Sim) churn() {
	var eligible []int
	for i := s.cfg.Senders + s.cfg.Recipients; i < len(s.nodes); i++ {
		if s.nodes[i].up {
			eligible = append(eligible, i)
		}
	}
	k := max(1, int(s.cfg.Churn*float64(len(eligible))+0.5))
	s.rng.Shuffle(len(eligible), func(a, b int) { eligible[a], eligible[b] = eligible[b], eligible[a] })
	for _, i := range eligible[:min(k, len(eligible))] {
		n := s.nodes[i]
		n.up = false
		n.history = append(n.history, transition{at: s.now, up: false})
		n.incarnation++
		s.st.kills++
		s.after(s.cfg.ChurnDowntime, func() { s.restart(i) })
	}
}

// message sends the next message and schedules the one after.
func (s *Sim) message() {
	if s.now >= s.trafficTo {
		return
	}
	pairs := s.cfg.Senders * s.cfg.Recipients
	p := s.sent % pairs
	s.sent++
	s.offer(p/s.cfg.Recipients, s.cfg.Senders+p%s.cfg.Recipients)
	s.after(s.interval(), s.message)
}

// coverInterval draws the time to the next cover packet of any node: the nodes' Poisson
// processes merged into one of N times the rate, each packet's node drawn uniformly.
func (s *Sim) coverInterval() time.Duration {
	return time.Duration(s.coverRng.ExpFloat64() / (s.cfg.CoverRate * float64(s.cfg.Nodes)) * float64(time.Second))
}

// cover sends the next cover packet, from a node drawn uniformly (nothing if it is down or not
// announced yet), over a path back to itself, and schedules the one after.
func (s *Sim) cover() {
	if s.now >= s.trafficTo {
		return
	}
	i := s.coverRng.IntN(len(s.nodes))
	if n := s.nodes[i]; n.up && n.announced {
		s.sendCover(i)
	}
	s.after(s.coverInterval(), s.cover)
}

// sendCover sends a loop from i over relayers back to i, chosen and paid as a message's.
func (s *Sim) sendCover(i int) {
	hops, err := s.pickPath(i, i)
	if err != nil {
		s.st.coverNoPath++
		return
	}
	first := hops[0]
	if !s.nodes[first].up {
		s.nodes[i].down[first] = true
		return
	}
	s.st.coverSent++
	relayers := len(hops) - 1
	if !s.payFirst(i, first, relayers) {
		s.st.coverLost++
		return
	}
	s.st.coverPaid += relayers
	s.forward(hops, 0, i, s.now, flight{kind: loopPacket, truth: -1})
}

// amount is the ticket a channel carries with n relayers ahead of its receiver.
func amount(n int) uint256.Int { return tickets.AmountFor(n) }

// send sends a message from from to to now, as it was asked to.
func (s *Sim) send(from, to int) { s.sendAsked(from, to, s.now) }

// sendAsked sends a message from from to to now that was asked for at asked: its latency
// counts from then, and the ground truth has it sent then (as the API was called).
func (s *Sim) sendAsked(from, to int, asked time.Duration) {
	if s.cfg.framed() {
		s.sendFramed(from, to, asked)
		return
	}
	s.sendPacket(from, to, asked, nil)
}

// sendPacket sends one packet of a message from from to to now (m: of a framed message, nil:
// a message of one packet).
func (s *Sim) sendPacket(from, to int, asked time.Duration, m *framedMsg) {
	s.st.messages++
	hops, err := s.pickPath(from, to)
	if err != nil {
		s.st.noPath++
		return
	}
	s.st.found++
	relayers := len(hops) - 1
	if relayers == path.MaxRelayers {
		s.st.three++
	}
	first := hops[0]
	if !s.nodes[first].up {
		// The stream to the first hop cannot be opened: nothing is sent, and the first hop is
		// down for the sender until its next successful heartbeat.
		s.nodes[from].down[first] = true
		s.st.refusedFirstHop++
		return
	}
	s.st.accepted++
	s.st.relayers += relayers
	f := flight{truth: -1, msg: m}
	if s.cfg.Observe {
		f.truth = len(s.truth)
		sent, group := asked, -1
		if m != nil {
			sent, group = s.now, m.id
		}
		s.truth = append(s.truth, observe.Message{Sender: from, Recipient: to, Sent: simTime(sent)})
		s.groups = append(s.groups, group)
	}
	if !s.payFirst(from, first, relayers) {
		s.st.lost++
		return
	}
	s.forward(hops, 0, from, asked, f)
}

// packetKind is what a packet is to its sender and its last hop; on the wire all look alike.
type packetKind uint8

const (
	messagePacket packetKind = iota
	loopPacket               // loop cover, back to its sender
	dropPacket               // drop cover (or a re-emission), dropped by its last hop
	backPacket               // an acknowledgement or an answer on a return path
)

// flight says what a packet is, and for a message its index in the ground truth (-1: not
// recorded).
type flight struct {
	kind  packetKind
	truth int
	// msg is the framed message a packet belongs to (a message packet's, or the one a packet
	// sent back answers), nil for a message of one packet; back is what a packet sent back is.
	msg  *framedMsg
	back backKind
}

// simTime is a simulated time as the observer's clock reads it.
func simTime(d time.Duration) time.Time { return time.Unix(0, int64(d)) }

// transmit puts size bytes on the link from → to at time at.
func (s *Sim) transmit(at time.Duration, from, to, size int, f flight) {
	if size == FrameSize {
		s.st.frames++
	}
	if f.kind == loopPacket || f.kind == dropPacket {
		s.st.coverBytes += int64(size)
	} else {
		s.st.messageBytes += int64(size)
	}
	s.sentBytes[from] += int64(size)
	if s.cfg.Observe {
		s.tx = append(s.tx, observe.Transmission{Time: simTime(at), From: from, To: to, Size: size})
	}
}

func (s *Sim) lose(f flight) {
	switch f.kind {
	case loopPacket:
		s.st.coverLost++
	case messagePacket:
		s.st.lost++
	case backPacket:
		s.framedStats.backLost++
	}
}

// mixDelay draws a relayer's mixing delay as internal/relay does (Config.MixDelayMean).
func (s *Sim) mixDelay() time.Duration {
	lo, hi := s.mixLo, s.mixHi
	if hi <= lo {
		return lo
	}
	if s.mixMean > 0 {
		return min(lo+time.Duration(s.rng.ExpFloat64()*float64(s.mixMean)), hi)
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

// processing draws the time a hop takes to process a packet.
func (s *Sim) processing() time.Duration {
	lo, hi := s.cfg.ProcessingMin, s.cfg.ProcessingMax
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.procRng.Int64N(int64(hi-lo)+1))
}

// pay takes the ticket of a channel with ahead relayers ahead from the channel src→dst; it
// reports false when that channel no longer carries tickets.
func (s *Sim) pay(src, dst, ahead int) bool {
	c := s.outChannel(src, dst)
	if c == nil || (c.state != open && c.state != closingTx) {
		return false
	}
	a := amount(ahead)
	if c.balance.Lt(&a) {
		return false
	}
	c.balance.Sub(&c.balance, &a)
	return true
}

func (s *Sim) outChannel(src, dst int) *channel {
	for _, c := range s.nodes[src].out {
		if c.dst == dst && c.state != gone {
			return c
		}
	}
	return nil
}

// forward sends the packet from prev to hops[k]; it arrives after their link's latency. The
// hop processes it, acknowledges it to prev, and, unless it is the last, forwards it after its
// mixing delay.
func (s *Sim) forward(hops []int, k, prev int, start time.Duration, f flight) {
	cur := hops[k]
	s.transmit(s.now, prev, cur, FrameSize, f)
	s.after(s.latency(prev, cur), func() {
		n := s.nodes[cur]
		if !n.up {
			s.lose(f)
			return
		}
		p := s.processing()
		s.transmit(s.now+p, cur, prev, AckSize, f)
		if k == len(hops)-1 {
			switch f.kind {
			case loopPacket:
				s.st.coverReturned++
			case dropPacket:
				s.st.dropReceived++
			case backPacket:
				s.backArrived(f, p)
			default:
				s.st.delivered++
				s.st.latencies = append(s.st.latencies, s.now+p-start)
				if f.truth >= 0 {
					s.truth[f.truth].Delivered = simTime(s.now + p)
				}
				if s.cfg.Reemit {
					s.reemit(cur, p)
				}
				if f.msg != nil {
					s.arrived(f.msg, p)
				}
			}
			return
		}
		inc := n.incarnation
		s.after(p+s.mixDelay(), func() {
			next := hops[k+1]
			ahead := len(hops) - 2 - k // relayers after next
			if !n.up || n.incarnation != inc || !s.payHop(cur, next, ahead) {
				s.lose(f)
				return
			}
			s.earned[cur]++
			s.redeem(cur, ahead+1)
			s.forward(hops, k+1, cur, start, f)
		})
	})
}

// redeem is node i's autoRedeem (Config.AutoRedeem) of the ticket it took in for a packet it
// forwarded, with ahead relayers from it on: once it holds RedeemCount tickets or RedeemValue
// worth of them, their value reaches its balance a ChainDelay later. The ticket's value left its
// payer's channel when the packet was sent (Sim.pay).
func (s *Sim) redeem(i, ahead int) {
	if !s.cfg.AutoRedeem {
		return
	}
	n := s.nodes[i]
	a := amount(ahead)
	n.unredeemed.Add(&n.unredeemed, &a)
	n.unredeemedN++
	byValue := s.cfg.RedeemValue != nil && s.cfg.RedeemValue.Sign() > 0 && n.unredeemed.ToBig().Cmp(s.cfg.RedeemValue) >= 0
	byCount := s.cfg.RedeemCount > 0 && n.unredeemedN >= s.cfg.RedeemCount
	noLimit := s.cfg.RedeemCount == 0 && (s.cfg.RedeemValue == nil || s.cfg.RedeemValue.Sign() == 0)
	if !byValue && !byCount && !noLimit {
		return
	}
	v := n.unredeemed.ToBig()
	n.unredeemed.Clear()
	n.unredeemedN = 0
	s.st.redeemed++
	s.after(s.cfg.ChainDelay, func() { n.balance.Add(n.balance, v) })
}

// latency is the one-way latency between i and j, the same both ways and at every call.
func (s *Sim) latency(i, j int) time.Duration {
	a, b := uint64(min(i, j)), uint64(max(i, j))
	h := splitmix(s.cfg.Seed ^ splitmix(a<<32|b))
	u := float64(h>>11) / (1 << 53)
	return s.cfg.LatencyMin + time.Duration(u*float64(s.cfg.LatencyMax-s.cfg.LatencyMin))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// loopAddr stands for the sender as the recipient of its own cover loop: path.Select refuses a
// path from a node to itself, so the graph gets a copy of the sender under this address, with
// a copy of every channel into the sender.
var loopAddr = common.Address{0x10, 0x0b}

// pickPath is internal/node's pathTo over the sender's view: Config.Relayers relayers (the
// node's relayers setting, default 2) where such a path exists, else the other count. It returns the relayers, then the recipient. A path from a node to itself
// (to == from) is a cover loop.
func (s *Sim) pickPath(from, to int) ([]int, error) {
	if s.top != nil {
		return s.pickLayered(from, to)
	}
	g, dst := s.graph(from, to)
	self := s.nodes[from]
	price := amount(1)
	want, other := path.DefaultRelayers, path.MaxRelayers
	if s.cfg.Relayers == path.MaxRelayers {
		want, other = other, want
	}
	nodes, err := path.Select(s.pathRng, g, self.addr, dst, want, price)
	if errors.Is(err, path.ErrNoPath) || errors.Is(err, path.ErrNotEnoughBalance) {
		if alt, lerr := path.Select(s.pathRng, g, self.addr, dst, other, price); lerr == nil {
			nodes, err = alt, nil
		}
	}
	if err != nil {
		return nil, err
	}
	hops := make([]int, len(nodes))
	for i, nd := range nodes {
		hops[i] = s.byAddr[nd.Address]
	}
	hops[len(hops)-1] = to // loopAddr for a loop
	return hops, nil
}

// graph is the part of from's view of the channel graph that path.Select can look at on a path
// to to: the open channels out of every node within two channels of from (the relayers whose
// next hops it enumerates), and the open channels into to (the last relayer's check), with the
// announced nodes at their ends. On it Select makes exactly the draws and the choice it makes
// on the whole graph (each node's channels are in the same order), at a fraction of the cost on
// a large network. It returns the address to ask a path to: loopAddr for a loop.
func (s *Sim) graph(from, to int) (*path.Graph, common.Address) {
	self := s.nodes[from]
	g := &path.Graph{Nodes: s.nodesBuf[:0], Edges: s.edgesBuf[:0]}
	if len(s.added) != len(s.nodes) {
		s.added, s.expanded = make([]uint64, len(s.nodes)), make([]uint64, len(s.nodes))
	}
	s.stamp++
	stamp := s.stamp
	addNode := func(j int) {
		if s.added[j] == stamp {
			return
		}
		s.added[j] = stamp
		q := s.quality(from, j)
		if self.down[j] {
			q = 0
		}
		if j == from {
			q = 1
		}
		g.Nodes = append(g.Nodes, path.Node{Address: s.nodes[j].addr, Quality: q})
	}
	carries := func(c *channel) bool {
		return (c.state == open || c.state == closingTx) && s.nodes[c.src].announced && s.nodes[c.dst].announced
	}
	edge := func(c *channel, dst common.Address) path.Edge {
		return path.Edge{Source: s.nodes[c.src].addr, Destination: dst, Balance: c.balance, Open: true}
	}
	level := []int{from}
	for depth := 0; depth <= 2; depth++ {
		var next []int
		for _, x := range level {
			if s.expanded[x] == stamp || !s.nodes[x].announced {
				continue
			}
			s.expanded[x] = stamp
			addNode(x)
			for _, c := range s.nodes[x].out {
				if carries(c) {
					g.Edges = append(g.Edges, edge(c, s.nodes[c.dst].addr))
					addNode(c.dst)
					next = append(next, c.dst)
				}
			}
		}
		level = next
	}
	dst := s.nodes[to].addr
	if to == from {
		dst = loopAddr
		g.Nodes = append(g.Nodes, path.Node{Address: loopAddr, Quality: 1})
	}
	if s.nodes[to].announced {
		addNode(to)
		for _, c := range s.nodes[to].in {
			if carries(c) && (to == from || s.expanded[c.src] != stamp) {
				g.Edges = append(g.Edges, edge(c, dst))
				addNode(c.src)
			}
		}
	}
	s.nodesBuf, s.edgesBuf = g.Nodes, g.Edges
	return g, dst
}

// world is node i's view of the simulated chain and peers, for its strategy runner.
type world struct {
	s *Sim
	i int
}

var errNoChannel = errors.New("no such channel")

func (w world) State(context.Context) (strategy.State, error) {
	s, n := w.s, w.s.nodes[w.i]
	st := strategy.State{Balance: new(big.Int).Set(n.balance)}
	peers := s.peersBuf[:0]
	// In address order (a node's address is its index): Decide sorts the peers by address, which
	// is then linear instead of O(N log N) a tick.
	candidates := s.byIndex
	if s.cfg.Layers > 0 {
		candidates = s.layerPeers(w.i)
	}
	for _, j := range candidates {
		if j != w.i {
			peers = append(peers, strategy.Peer{Address: s.nodes[j].addr, Quality: s.quality(w.i, j), Incoming: s.nodes[j].incoming})
		}
	}
	s.peersBuf, st.Peers = peers, peers
	for _, c := range n.out {
		peer := s.nodes[c.dst].addr
		switch {
		case c.state == opening || c.state == open:
			st.Open = append(st.Open, strategy.Channel{Peer: peer, Balance: c.balance.ToBig(), Available: c.balance.ToBig()})
		case c.state == closing && s.now >= c.finalizableAt:
			st.Finalizable = append(st.Finalizable, peer)
		case c.state != gone:
			st.Busy = append(st.Busy, peer)
		}
	}
	return st, nil
}

func (w world) Open(_ context.Context, peer common.Address, amt *big.Int) error {
	s, n := w.s, w.s.nodes[w.i]
	j, ok := s.byAddr[peer]
	if !ok || j == w.i || s.outChannel(w.i, j) != nil {
		return fmt.Errorf("open to %s: %w", peer.Hex(), errNoChannel)
	}
	if n.balance.Cmp(amt) < 0 {
		return fmt.Errorf("open to %s: balance too low", peer.Hex())
	}
	n.balance.Sub(n.balance, amt)
	s.st.opened++
	c := &channel{src: w.i, dst: j}
	c.balance.SetFromBig(amt)
	n.out = append(n.out, c)
	s.nodes[j].in = append(s.nodes[j].in, c)
	s.chans = append(s.chans, c)
	s.after(s.cfg.ChainDelay, func() {
		c.state = open
		s.nodes[j].incoming++
	})
	return nil
}

func (w world) TopUp(_ context.Context, peer common.Address, amt *big.Int) error {
	s, n := w.s, w.s.nodes[w.i]
	j, ok := s.byAddr[peer]
	var c *channel
	if ok {
		c = s.outChannel(w.i, j)
	}
	switch {
	case c == nil || c.state != open:
		return fmt.Errorf("top up %s: %w", peer.Hex(), errNoChannel)
	case n.balance.Cmp(amt) < 0:
		return fmt.Errorf("top up %s: balance too low", peer.Hex())
	}
	n.balance.Sub(n.balance, amt)
	s.st.toppedUp++
	var add uint256.Int
	add.SetFromBig(amt)
	c.balance.Add(&c.balance, &add)
	return nil
}

func (w world) Close(_ context.Context, peer common.Address) error {
	s, n := w.s, w.s.nodes[w.i]
	j, ok := s.byAddr[peer]
	var c *channel
	if ok {
		c = s.outChannel(w.i, j)
	}
	switch {
	case c == nil:
		return fmt.Errorf("close to %s: %w", peer.Hex(), errNoChannel)
	case c.state == open:
		s.st.closed++
		c.state = closingTx
		s.after(s.cfg.ChainDelay, func() {
			c.state = closing
			c.finalizableAt = s.now + s.cfg.ClosurePeriod
			s.nodes[j].incoming--
		})
	case c.state == closing && s.now >= c.finalizableAt:
		s.st.finalized++
		c.state = finalTx
		s.after(s.cfg.ChainDelay, func() {
			c.state = gone
			n.balance.Add(n.balance, c.balance.ToBig())
			n.out = slices.DeleteFunc(n.out, func(o *channel) bool { return o == c })
			s.chans = slices.DeleteFunc(s.chans, func(o *channel) bool { return o == c })
			s.nodes[j].in = slices.DeleteFunc(s.nodes[j].in, func(o *channel) bool { return o == c })
		})
	default:
		return fmt.Errorf("close to %s: channel not open on chain yet", peer.Hex())
	}
	return nil
}

// percentile is the q-quantile (nearest rank) of sorted ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[max(0, min(len(ds)-1, int(math.Ceil(q*float64(len(ds))))-1))]
}
