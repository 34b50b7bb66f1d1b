package sim

import (
	"math/big"
	"slices"
	"time"

	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/topology"
)

// The layered topology (Config.Layers, issue 30): the draw, the strategy's peers and policy per
// node, the path through the layers, the relayers' own loops.

// startLayers schedules the epoch's draw, once every announcement is mined, and the relayers'
// loops.
func (s *Sim) startLayers() {
	if s.cfg.Layers == 0 {
		return
	}
	s.layerOf = make([]int, len(s.nodes))
	for i := range s.layerOf {
		s.layerOf[i] = -1
	}
	s.at(s.cfg.JoinWindow+s.cfg.ChainDelay, s.drawLayers)
	if s.cfg.LayerCoverRate > 0 {
		s.at(s.cfg.Warmup+s.layerCoverInterval(), s.layerCover)
	}
}

// drawLayers draws the epoch's topology over the announced nodes, as every node would
// (topology.Draw with epoch 1 and the run's seed as the beacon), and gives each node its peers.
func (s *Sim) drawLayers() {
	cands := make([]topology.Candidate, 0, len(s.announced))
	for _, i := range s.announced {
		n := s.nodes[i]
		cands = append(cands, topology.Candidate{ID: string(n.addr[:]), Stake: n.balance, Announced: true})
	}
	var beacon [8]byte
	for b := range beacon {
		beacon[b] = byte(s.cfg.Seed >> (8 * b))
	}
	top, err := topology.Draw(topology.Params{Layers: s.cfg.Layers, Width: s.cfg.LayerWidth}, 1, topology.Seed(1, beacon[:]), cands)
	if err != nil {
		return // too few announced: no layers, no channels, no paths (the report shows it)
	}
	s.top = top
	s.layers = make([][]int, top.Len())
	for k := range top.Len() {
		for _, id := range top.Layer(k) {
			i := s.byAddr[common20(id)]
			s.layers[k] = append(s.layers[k], i)
			s.layerOf[i] = k
		}
	}
	s.peersOf = make([][]int, len(s.nodes))
	for i, n := range s.nodes {
		k := s.layerOf[i]
		peers := slices.DeleteFunc(slices.Clone(s.layers[0]), func(j int) bool { return j == i })
		if k >= 0 && k+1 < len(s.layers) {
			peers = append(peers, s.layers[k+1]...)
		}
		slices.Sort(peers) // in address order, as world.State lists peers
		s.peersOf[i] = peers
		if k >= 0 { // a relayer's stake funds a channel to each of its peers
			need := new(big.Int).Mul(s.cfg.ChannelFunding, big.NewInt(int64(len(peers))))
			if n.balance.Cmp(need) < 0 {
				n.balance.Set(need)
			}
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
// a channel to every one of its peers and opens them all at once.
func (s *Sim) policyOf(i int) strategy.Policy {
	if s.layerOf == nil || s.peersOf == nil || s.layerOf[i] < 0 {
		return s.policy
	}
	p := s.policy
	p.MaxChannels = max(len(s.peersOf[i]), 1)
	p.MaxOpensPerTick = p.MaxChannels
	return p
}

// idle reports whether node i's strategy tick would do nothing, so that it is skipped: it keeps
// its MaxChannels channels (or cannot fund another), none depleted or to a peer below the closing quality, and none
// pending to close past its closure period. strategy.Decide then closes nothing and opens
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
	if p.TopUp {
		return false
	}
	kept := 0
	for _, c := range n.out {
		switch c.state {
		case opening, open:
			if c.balance.IsZero() || c.balance.Lt(&s.depleted) || s.quality(i, c.dst) < p.CloseQuality {
				return false
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
func (s *Sim) pickLayered(from, to int) ([]int, error) {
	if s.top == nil {
		return nil, path.ErrNoPath
	}
	L := len(s.layers)
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
			if (c.state != open && c.state != closingTx) || s.layerOf[j] != k || j == from || j == to || c.balance.Lt(&need) {
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
// layered network the hop into the recipient (after the last layer) carries a ticket of 0 and
// needs no channel.
func (s *Sim) payHop(src, dst, ahead int) bool {
	if s.top != nil && ahead == 0 && s.layerOf[src] == len(s.layers)-1 && s.outChannel(src, dst) == nil {
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
