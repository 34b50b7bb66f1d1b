package sim

import (
	"math/big"
	"slices"
	"time"

	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/observe"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/topology"
)

// The layered topology (Config.Layers, issue 30): the draw, the strategy's peers and policy per
// node, the path through the layers, the relayers' own loops.

// epochDraw is one epoch's layers: the topology, the layers' nodes, each node's layer (-1:
// outside).
type epochDraw struct {
	top     *topology.Topology
	layers  [][]int
	layerOf []int
}

// redraw is what the simulation counts of the channels since the first draw, snapshot at each
// re-draw (Report.Redraw).
type redraw struct {
	at                                time.Duration
	opened, closed, finalized, raised int
	noPath, messages                  int
	// The messages and those without a path at the overlap's end.
	noPathEnd, messagesEnd int
}

// startLayers schedules the first epoch's draw, once every announcement is mined, the re-draws
// (Config.Epoch) and the relayers' loops.
func (s *Sim) startLayers() {
	if s.cfg.Layers == 0 {
		return
	}
	s.layerOf = make([]int, len(s.nodes))
	for i := range s.layerOf {
		s.layerOf[i] = -1
	}
	first := s.cfg.JoinWindow + s.cfg.ChainDelay
	s.at(first, func() { s.drawLayers(1) })
	if s.cfg.Epoch > 0 && first+s.cfg.Epoch < s.trafficTo {
		epoch := uint64(1)
		s.every(first+s.cfg.Epoch, s.cfg.Epoch, s.trafficTo, func() {
			epoch++
			s.drawLayers(epoch)
		})
	}
	if s.cfg.LayerCoverRate > 0 {
		s.at(s.cfg.Warmup+s.layerCoverInterval(), s.layerCover)
	}
}

// drawLayers draws epoch's topology over the announced nodes, as every node would
// (topology.Draw with the run's seed as the beacon), and gives each node its peers. At a
// re-draw the previous epoch's layers stay in use for Config.EpochOverlap: senders take them
// where the new ones have no path yet, and every node keeps its channels into them meanwhile
// (and opens those into the new ones beside them); after the overlap the channel strategy closes
// them (their peers are no longer its peers).
func (s *Sim) drawLayers(epoch uint64) {
	cands := make([]topology.Candidate, 0, len(s.announced))
	for _, i := range s.announced {
		n := s.nodes[i]
		cands = append(cands, topology.Candidate{ID: string(n.addr[:]), Stake: n.balance, Announced: true})
	}
	var beacon [8]byte
	for b := range beacon {
		beacon[b] = byte(s.cfg.Seed >> (8 * b))
	}
	top, err := topology.Draw(topology.Params{Layers: s.cfg.Layers, Width: s.cfg.LayerWidth}, epoch, topology.Seed(epoch, beacon[:]), cands)
	if err != nil {
		return // too few announced: no layers, no channels, no paths (the report shows it)
	}
	if s.top != nil {
		prev := &epochDraw{top: s.top, layers: s.layers, layerOf: s.layerOf}
		s.prev = prev
		s.redraws = append(s.redraws, s.snapshot())
		rd := &s.redraws[len(s.redraws)-1]
		rd.noPathEnd, rd.messagesEnd = -1, -1
		k := len(s.redraws) - 1
		s.after(s.cfg.EpochOverlap, func() {
			s.redraws[k].noPathEnd, s.redraws[k].messagesEnd = s.st.noPath, s.st.messages
			if s.prev == prev {
				s.prev = nil
				s.setPeers()
			}
		})
	}
	s.top = top
	s.layers = make([][]int, top.Len())
	s.layerOf = make([]int, len(s.nodes))
	for i := range s.layerOf {
		s.layerOf[i] = -1
	}
	for k := range top.Len() {
		for _, id := range top.Layer(k) {
			i := s.byAddr[common20(id)]
			s.layers[k] = append(s.layers[k], i)
			s.layerOf[i] = k
		}
	}
	s.setPeers()
}

// snapshot is the channel counters now.
func (s *Sim) snapshot() redraw {
	return redraw{at: s.now, opened: s.st.opened, closed: s.st.closed, finalized: s.st.finalized, raised: s.st.raised,
		noPath: s.st.noPath, messages: s.st.messages}
}

// setPeers gives each node its peers for the channel strategy in the current epoch: the first
// layer's relayers, and for a relayer also the next layer's. During an overlap a node also keeps
// the previous epoch's peers it has a channel to (kept[i] of them that are not peers anyway).
// A node's balance is raised to what the channels to its new peers take: a relayer's stake
// funds a channel to each of its peers, and every node needs its channels' funding a second time
// around a re-draw (Report.Redraw counts what was added).
func (s *Sim) setPeers() {
	if s.peersOf == nil {
		s.peersOf = make([][]int, len(s.nodes))
		s.kept = make([]int, len(s.nodes))
	}
	for i, n := range s.nodes {
		k := s.layerOf[i]
		peers := slices.DeleteFunc(slices.Clone(s.layers[0]), func(j int) bool { return j == i })
		if k >= 0 && k+1 < len(s.layers) {
			peers = append(peers, s.layers[k+1]...)
		}
		slices.Sort(peers) // in address order, as world.State lists peers
		s.kept[i] = 0
		fresh := len(peers)
		for _, c := range n.out {
			if c.state == opening || c.state == open {
				if _, ok := slices.BinarySearch(peers, c.dst); ok {
					fresh--
				} else if s.prev != nil {
					peers = append(peers, c.dst)
					s.kept[i]++
				}
			}
		}
		slices.Sort(peers)
		s.peersOf[i] = peers
		if k < 0 { // outside the layers: MaxChannels among the first layer's
			fresh = min(fresh, s.cfg.MaxChannels)
		}
		need := new(big.Int).Mul(s.cfg.ChannelFunding, big.NewInt(int64(fresh)))
		if s.redraws == nil && k < 0 {
			continue // the first epoch: Config.Balance funds a node's channels
		}
		if n.balance.Cmp(need) < 0 {
			s.st.raised += int(new(big.Int).Div(new(big.Int).Sub(need, n.balance), s.cfg.ChannelFunding).Int64()) + 1
			n.balance.Set(need)
		}
	}
}

// common20 turns a topology id back into the address it was made of.
func common20(id string) (a [20]byte) {
	copy(a[:], id)
	return a
}

// layerPeers is the peers node i's strategy may open channels to in a layered network: the
// first layer's relayers, and for a relayer also the next layer's; none before the draw.
func (s *Sim) layerPeers(i int) []int {
	if s.peersOf == nil {
		return nil
	}
	return s.peersOf[i]
}

// policyOf is node i's channel strategy: the promiscuous one of Config; a layer relayer's keeps
// a channel to every one of its peers and opens them all at once. During an overlap the
// channels a node keeps into the previous epoch's layers come on top of MaxChannels.
func (s *Sim) policyOf(i int) strategy.Policy {
	if s.layerOf == nil || s.peersOf == nil {
		return s.policy
	}
	p := s.policy
	if s.layerOf[i] < 0 {
		p.MaxChannels += s.kept[i]
		return p
	}
	p.MaxChannels = max(len(s.peersOf[i]), 1)
	p.MaxOpensPerTick = p.MaxChannels
	return p
}

// idle reports whether node i's strategy tick would do nothing, so that it is skipped: it keeps
// its MaxChannels channels (or cannot fund another), none depleted, to a peer below the closing
// quality or (with Config.AutoFund) open below half of its funding, and none pending to close
// past its closure period. strategy.Decide then closes nothing and opens
// nothing (it would still sort every peer: O(N log N) a node a tick, the simulation's cost at
// 10,000 nodes). The runner's rule of opening nothing while the announced peers changed since
// its last tick then compares with the last tick it ran, which differs only if announcements
// were mined meanwhile.
//
// It also skips a tick while announcements are being mined both in the interval before it and
// in the one after: the runner opens nothing then (the peers differ from its last tick's), and
// its next tick would not either, whichever tick it last ran; so only the closes matter, and
// the tick is skipped when there are none to make. Its random draws for the opens it would
// have dropped are not made.
func (s *Sim) idle(i int) bool {
	n := s.nodes[i]
	p := s.policyOf(i).WithDefaults()
	var half uint256.Int
	if p.TopUp {
		half.SetFromBig(new(big.Int).Rsh(p.ChannelFunding, 1))
	}
	kept := 0
	for _, c := range n.out {
		switch c.state {
		case opening, open:
			if c.balance.IsZero() || c.balance.Lt(&s.depleted) || s.quality(i, c.dst) < p.CloseQuality || !s.isPeer(i, c.dst) {
				return false
			}
			if p.TopUp && c.state == open && c.balance.Lt(&half) {
				return false // a top-up to make, if the balance pays for it
			}
			kept++
		case closing:
			if s.now >= c.finalizableAt {
				return false
			}
		}
	}
	return kept >= p.MaxChannels || n.balance.Cmp(p.ChannelFunding) < 0 ||
		(s.mined(s.now-s.cfg.StrategyInterval, s.now) && s.mined(s.now, s.now+s.cfg.StrategyInterval))
}

// isPeer reports whether j is among node i's peers: always in free routes, where every
// announced node is (Decide closes a channel to a node that is not).
func (s *Sim) isPeer(i, j int) bool {
	if s.peersOf == nil {
		return s.cfg.Layers == 0
	}
	_, ok := slices.BinarySearch(s.peersOf[i], j)
	return ok
}

// mined reports whether an announcement is mined in (lo, hi].
func (s *Sim) mined(lo, hi time.Duration) bool {
	k, _ := slices.BinarySearch(s.minedAt, lo+1)
	return k < len(s.minedAt) && s.minedAt[k] <= hi
}

// pickLayered picks a path from from to to through the layers: a relayer of each layer in
// order, each reached over an open channel of the one before (from's own into the first layer)
// whose balance covers the ticket it carries, never from or to, of quality at least
// path.MinQuality in from's view; among those, at random weighted by the channel's balance
// times the relayer's quality, as path.Select weighs, with backtracking. The recipient needs no
// channel from the last layer: its ticket is worth 0.
//
// During an overlap it takes the previous epoch's layers when the new ones have no path (unless
// Config.EpochAtOnce).
func (s *Sim) pickLayered(from, to int) ([]int, error) {
	if s.top == nil {
		return nil, path.ErrNoPath
	}
	if hops, err := s.pickIn(epochDraw{top: s.top, layers: s.layers, layerOf: s.layerOf}, from, to); err == nil || s.prev == nil || s.cfg.EpochAtOnce {
		return hops, err
	}
	return s.pickIn(*s.prev, from, to)
}

// pickIn is pickLayered through the layers of d.
func (s *Sim) pickIn(d epochDraw, from, to int) ([]int, error) {
	L := len(d.layers)
	hops := make([]int, 0, L+1)
	type cand struct {
		j int
		w float64
	}
	var try func(cur, k int) bool
	try = func(cur, k int) bool {
		if k == L {
			return true
		}
		need := amount(L - k)
		var cs []cand
		total := 0.0
		for _, c := range s.nodes[cur].out {
			j := c.dst
			if (c.state != open && c.state != closingTx) || d.layerOf[j] != k || j == from || j == to || c.balance.Lt(&need) {
				continue
			}
			q := s.quality(from, j)
			if s.nodes[from].down[j] {
				q = 0
			}
			if q < path.MinQuality {
				continue
			}
			w := max(c.balance.Float64(), 1) * q
			cs = append(cs, cand{j, w})
			total += w
		}
		for len(cs) > 0 {
			x := s.pathRng.Float64() * total
			pick := len(cs) - 1
			for a, c := range cs {
				if x -= c.w; x < 0 {
					pick = a
					break
				}
			}
			c := cs[pick]
			cs = slices.Delete(cs, pick, pick+1)
			total -= c.w
			hops = append(hops, c.j)
			if try(c.j, k+1) {
				return true
			}
			hops = hops[:len(hops)-1]
		}
		return false
	}
	if !try(from, 0) {
		return nil, path.ErrNoPath
	}
	return append(hops, to), nil
}

// payHop takes the ticket of the hop from src to dst with ahead relayers after dst; in a
// layered network the hop into the recipient (after the last layer, of this epoch or an earlier
// one) carries a ticket of 0 and needs no channel, whatever the state of one the last relayer
// has to the recipient for its own traffic (a re-draw closes and opens those).
func (s *Sim) payHop(src, dst, ahead int) bool {
	if s.top != nil && ahead == 0 {
		return true
	}
	return s.pay(src, dst, ahead)
}

// payFirst is pay for a packet's first ticket, counted as what its sender spent.
func (s *Sim) payFirst(src, dst, relayers int) bool {
	if !s.pay(src, dst, relayers) {
		return false
	}
	s.spent[src] += int64(relayers)
	return true
}

// layerCoverInterval draws the time to the next mix loop of any relayer.
func (s *Sim) layerCoverInterval() time.Duration {
	n := s.cfg.Layers * s.cfg.LayerWidth
	return time.Duration(s.coverRng.ExpFloat64() / (s.cfg.LayerCoverRate * float64(n)) * float64(time.Second))
}

// layerCover sends the next mix loop, from a relayer drawn uniformly, through the layers and
// back to it, and schedules the one after.
func (s *Sim) layerCover() {
	if s.now >= s.trafficTo {
		return
	}
	if s.top != nil {
		all := s.cfg.Layers * s.cfg.LayerWidth
		x := s.coverRng.IntN(all)
		k, r := x/s.cfg.LayerWidth, x%s.cfg.LayerWidth
		if k < len(s.layers) && r < len(s.layers[k]) {
			if i := s.layers[k][r]; s.nodes[i].up {
				s.st.layerLoops++
				s.sendCover(i)
			}
		}
	}
	s.after(s.layerCoverInterval(), s.layerCover)
}

// RedrawReport is what the re-draws of the layers cost (Config.Epoch). Opened, Closed,
// Finalized, Tokens and Added are per re-draw, from it to the next one (or the end of the run),
// on average over the re-draws; FirstOpened is the channels opened in the first epoch.
type RedrawReport struct {
	Redraws     int `json:"redraws"`
	FirstOpened int `json:"firstOpened"`
	// Opened, Closed and Finalized count channels opened, closes started and closures
	// finalized (three transactions per channel replaced).
	Opened    float64 `json:"opened"`
	Closed    float64 `json:"closed"`
	Finalized float64 `json:"finalized"`
	// Tokens is the funding of the channels opened; Added what the nodes' balances had to be
	// raised by (tokens, in channels' worth) to fund them beside the ones they kept.
	Tokens float64 `json:"tokens"`
	Added  float64 `json:"added"`
	// Messages counts the messages sent during the overlaps, NoPath those among them without a
	// path through either epoch's layers.
	Messages int `json:"messages"`
	NoPath   int `json:"noPath"`
	// EntropyOverlap and EntropyOther are the observer's mean entropy (timing attack) of the
	// scored messages sent during an overlap and of the others, ScoredOverlap and ScoredOther
	// how many those were.
	EntropyOverlap float64 `json:"entropyOverlap"`
	EntropyOther   float64 `json:"entropyOther"`
	ScoredOverlap  int     `json:"scoredOverlap"`
	ScoredOther    int     `json:"scoredOther"`
}

// redrawReport sums the re-draws; nil without any.
func (s *Sim) redrawReport() *RedrawReport {
	if len(s.redraws) == 0 {
		return nil
	}
	funding := token.Of(s.cfg.ChannelFunding).Float64()
	n := float64(len(s.redraws))
	r := &RedrawReport{Redraws: len(s.redraws), FirstOpened: s.redraws[0].opened}
	for k, d := range s.redraws {
		next := s.snapshot()
		if k+1 < len(s.redraws) {
			next = s.redraws[k+1]
		}
		r.Opened += float64(next.opened-d.opened) / n
		r.Closed += float64(next.closed-d.closed) / n
		r.Finalized += float64(next.finalized-d.finalized) / n
		r.Added += float64(next.raised-d.raised) * funding / n
		end, endNoPath := d.messagesEnd, d.noPathEnd
		if end < 0 { // the run ended in the overlap
			end, endNoPath = s.st.messages, s.st.noPath
		}
		r.Messages += end - d.messages
		r.NoPath += endNoPath - d.noPath
	}
	r.Tokens = r.Opened * funding
	return r
}

// inOverlap reports whether t falls in the overlap after a re-draw.
func (s *Sim) inOverlap(t time.Duration) bool {
	for _, d := range s.redraws {
		if t >= d.at && t < d.at+s.cfg.EpochOverlap {
			return true
		}
	}
	return false
}

// scoreRedraws splits the observer's per-message entropies between the messages sent in an
// overlap and the others.
func (s *Sim) scoreRedraws(r *RedrawReport, p *observe.Report) {
	if r == nil || p == nil {
		return
	}
	var in, out float64
	for _, m := range p.Timing.PerMessage {
		sent := time.Duration(s.truth[m.Index].Sent.UnixNano())
		if s.inOverlap(sent) {
			in += m.Entropy
			r.ScoredOverlap++
		} else {
			out += m.Entropy
			r.ScoredOther++
		}
	}
	r.EntropyOverlap = in / float64(max(r.ScoredOverlap, 1))
	r.EntropyOther = out / float64(max(r.ScoredOther, 1))
}
