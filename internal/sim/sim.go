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

	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
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
	incoming    int        // open channels to it
	runner      *strategy.Runner
	rng         *rand.Rand // the runner's
	quality     []float64  // its heartbeat quality of every node
	down        map[int]bool
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
	logger    *slog.Logger

	peersBuf []strategy.Peer
	nodesBuf []path.Node
	edgesBuf []path.Edge

	st        stats
	sent      int // messages offered so far
	trafficTo time.Duration
}

type stats struct {
	messages, noPath, found, three, refusedFirstHop, accepted, delivered, lost int
	relayers                                                                   int
	latencies                                                                  []time.Duration
	kills                                                                      int
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
			ChannelFunding: new(big.Int).Set(cfg.ChannelFunding), DepletedBelow: depleted.ToBig()},
		rng:     rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		pathRng: rand.New(rand.NewPCG(cfg.Seed, 0x9a7)),
		logger:  slog.New(slog.DiscardHandler),
	}
	for i := range cfg.Nodes {
		var a common.Address
		a[0] = 0x5e
		a[16], a[17], a[18], a[19] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		n := &node{addr: a, up: true, balance: new(big.Int).Set(cfg.Balance),
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), quality: make([]float64, cfg.Nodes), down: map[int]bool{}}
		s.nodes = append(s.nodes, n)
		s.byAddr[a] = i
		s.restart(i)
	}
	return s, nil
}

// restart gives node i a fresh process: a new strategy runner and heartbeat state.
func (s *Sim) restart(i int) {
	n := s.nodes[i]
	n.up = true
	for j := range n.quality {
		n.quality[j] = initialQuality
	}
	clear(n.down)
	// NewRunner fails only without a policy or a world.
	n.runner, _ = strategy.NewRunner(strategy.RunnerConfig{Policy: func() strategy.Policy { return s.policy },
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

// Run simulates cfg from the start to the end of its Drain and reports. Call it once.
func (s *Sim) Run() Report {
	s.start()
	s.runUntil(s.cfg.Warmup + s.cfg.Duration + s.cfg.Drain)
	return s.report()
}

// start schedules the nodes' joins and ticks, the churn and the traffic.
func (s *Sim) start() {
	cfg := s.cfg
	end := cfg.Warmup + cfg.Duration + cfg.Drain
	s.trafficTo = cfg.Warmup + cfg.Duration
	for i, n := range s.nodes {
		join := s.uniform(s.rng, cfg.JoinWindow)
		s.at(join+cfg.ChainDelay, func() {
			n.announced = true
			s.announced = append(s.announced, i)
		})
		s.every(join+s.uniform(s.rng, cfg.StrategyInterval), cfg.StrategyInterval, end, func() {
			if n.up {
				n.runner.Tick(context.Background())
			}
		})
		s.every(join+s.uniform(s.rng, cfg.HeartbeatInterval), cfg.HeartbeatInterval, end, func() { s.heartbeat(i) })
	}
	if cfg.Churn > 0 {
		s.every(cfg.Warmup+cfg.ChurnInterval, cfg.ChurnInterval, s.trafficTo, s.churn)
	}
	s.at(cfg.Warmup+s.interval(), s.message)
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

// heartbeat is node i's heartbeat round: it pings every announced node.
func (s *Sim) heartbeat(i int) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	for _, j := range s.announced {
		if j == i {
			continue
		}
		if s.nodes[j].up {
			n.quality[j] = n.quality[j]*(1-qualityWeight) + qualityWeight
			delete(n.down, j)
		} else {
			n.quality[j] *= 1 - qualityWeight
		}
	}
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
	s.send(p/s.cfg.Recipients, s.cfg.Senders+p%s.cfg.Recipients)
	s.after(s.interval(), s.message)
}

// amount is the ticket a channel carries with n relayers ahead of its receiver.
func amount(n int) uint256.Int { return tickets.AmountFor(n) }

func (s *Sim) send(from, to int) {
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
	if !s.pay(from, first, relayers) {
		s.st.lost++
		return
	}
	s.forward(hops, 0, from, s.now)
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

// forward sends the packet from prev to hops[k]; it arrives after their link's latency.
func (s *Sim) forward(hops []int, k, prev int, start time.Duration) {
	cur := hops[k]
	s.after(s.latency(prev, cur), func() {
		n := s.nodes[cur]
		if !n.up {
			s.st.lost++
			return
		}
		if k == len(hops)-1 {
			s.st.delivered++
			s.st.latencies = append(s.st.latencies, s.now-start)
			return
		}
		inc := n.incarnation
		s.after(s.uniform(s.rng, s.cfg.MixDelayMax+1), func() {
			next := hops[k+1]
			ahead := len(hops) - 2 - k // relayers after next
			if !n.up || n.incarnation != inc || !s.pay(cur, next, ahead) {
				s.st.lost++
				return
			}
			s.forward(hops, k+1, cur, start)
		})
	})
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

// pickPath is internal/node's pickPath over the sender's view: 2 relayers where a path of 2
// exists, else 3. It returns the relayers, then the recipient.
func (s *Sim) pickPath(from, to int) ([]int, error) {
	self := s.nodes[from]
	g := &path.Graph{Nodes: s.nodesBuf[:0], Edges: s.edgesBuf[:0]}
	for _, j := range s.announced {
		q := self.quality[j]
		if self.down[j] {
			q = 0
		}
		if j == from {
			q = 1
		}
		g.Nodes = append(g.Nodes, path.Node{Address: s.nodes[j].addr, Quality: q})
	}
	for _, c := range s.chans {
		if c.state == opening || c.state == gone {
			continue
		}
		g.Edges = append(g.Edges, path.Edge{Source: s.nodes[c.src].addr, Destination: s.nodes[c.dst].addr,
			Balance: c.balance, Open: c.state == open || c.state == closingTx})
	}
	s.nodesBuf, s.edgesBuf = g.Nodes, g.Edges
	price := amount(1)
	nodes, err := path.Select(s.pathRng, g, self.addr, s.nodes[to].addr, path.DefaultRelayers, price)
	if errors.Is(err, path.ErrNoPath) || errors.Is(err, path.ErrNotEnoughBalance) {
		if longer, lerr := path.Select(s.pathRng, g, self.addr, s.nodes[to].addr, path.MaxRelayers, price); lerr == nil {
			nodes, err = longer, nil
		}
	}
	if err != nil {
		return nil, err
	}
	hops := make([]int, len(nodes))
	for i, nd := range nodes {
		hops[i] = s.byAddr[nd.Address]
	}
	return hops, nil
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
	for _, j := range s.announced {
		if j != w.i {
			peers = append(peers, strategy.Peer{Address: s.nodes[j].addr, Quality: n.quality[j], Incoming: s.nodes[j].incoming})
		}
	}
	s.peersBuf, st.Peers = peers, peers
	for _, c := range n.out {
		peer := s.nodes[c.dst].addr
		switch {
		case c.state == opening || c.state == open:
			st.Open = append(st.Open, strategy.Channel{Peer: peer, Balance: c.balance.ToBig()})
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
	c := &channel{src: w.i, dst: j}
	c.balance.SetFromBig(amt)
	n.out = append(n.out, c)
	s.chans = append(s.chans, c)
	s.after(s.cfg.ChainDelay, func() {
		c.state = open
		s.nodes[j].incoming++
	})
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
		c.state = closingTx
		s.after(s.cfg.ChainDelay, func() {
			c.state = closing
			c.finalizableAt = s.now + s.cfg.ClosurePeriod
			s.nodes[j].incoming--
		})
	case c.state == closing && s.now >= c.finalizableAt:
		c.state = finalTx
		s.after(s.cfg.ChainDelay, func() {
			c.state = gone
			n.balance.Add(n.balance, c.balance.ToBig())
			n.out = slices.DeleteFunc(n.out, func(o *channel) bool { return o == c })
			s.chans = slices.DeleteFunc(s.chans, func(o *channel) bool { return o == c })
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
