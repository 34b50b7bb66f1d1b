package router

import (
	"errors"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/tickets"
)

// routesMaxAge is how long the router keeps a prepared graph whose channels and peers' up/down
// states have not changed: the age of the heartbeat qualities and of the win probability its
// other channels' capacities were computed at.
const routesMaxAge = time.Second

// ChannelSettle is how long after this node indexed a channel's opening its paths prefer others:
// the channel's destination, and every node whose ticket check it takes part in, index the chain
// on their own polls and may not know the channel yet; a ticket on a channel its receiver does
// not know is refused and the packet dropped. A path through a younger channel is taken only
// where no other exists (docs/NETWORK.md "Young channels"). Channels this node knew when it
// started are not young.
const ChannelSettle = 5 * time.Second

// routeCache is the channel graph prepared for path selection (a path.Index), so that a message
// costs a search, not a copy of the whole graph: at a few hundred messages a second the copy was
// 7 % of a sender's CPU on a 4-node network, and it grows with the network.
type routeCache struct {
	// all has every channel; settled leaves out the young ones (ChannelSettle), and is all
	// itself when none is young.
	all, settled *path.Index
	snap         *channels.Snapshot // the indexed graph they were built from
	peers        uint64             // Transport.PeersVersion when they were built
	built        time.Time
	// settles is when the youngest channel left out of settled stops being young (zero: none).
	settles time.Time
	own     []common.Address // destinations of this node's open channels
}

// openedAt is when this node first saw a channel open in its current epoch.
type openedAt struct {
	epoch uint32
	at    time.Time // zero: open when the router first looked
}

// choose selects a path from src to dst (dst == src: a loop) through settled channels where one
// exists, else through any. The caller holds mu.
func (r *Router) choose(src, dst common.Address) ([]path.Node, error) {
	all, settled := r.routeIndexes()
	nodes, err := r.selectOn(settled, src, dst)
	if err != nil && settled != all {
		if alt, aerr := r.selectOn(all, src, dst); aerr == nil {
			return alt, nil
		}
	}
	return nodes, err
}

// selectOn selects a path from src to dst on ix: through the layers in a layered network; else
// over as many relayers as the relayers setting says where such a path exists, the other count
// if not. The caller holds mu.
func (r *Router) selectOn(ix *path.Index, src, dst common.Address) ([]path.Node, error) {
	if nodes, ok, err := r.layered(ix, src, dst); ok {
		return nodes, err
	}
	// Every channel must carry the largest padding relay.Send may draw (PROTOCOL.md §4.5), so
	// that the path does not depend on the draw.
	sel := func(relayers int) ([]path.Node, error) {
		if dst == src {
			return ix.SelectLoopPadded(r.rng, src, relayers, tickets.AmountFor(1), tickets.PadMax)
		}
		return ix.SelectPadded(r.rng, src, dst, relayers, tickets.AmountFor(1), tickets.PadMax)
	}
	want, other := r.relayers()
	nodes, err := sel(want)
	if errors.Is(err, path.ErrNoPath) || errors.Is(err, path.ErrNotEnoughBalance) {
		alt, lerr := sel(other)
		switch {
		case lerr == nil:
			nodes, err = alt, nil
		case errors.Is(err, path.ErrNoPath) && errors.Is(lerr, path.ErrNotEnoughBalance):
			err = lerr // a path of the other count exists, its channels cannot pay: say so
		}
	}
	return nodes, err
}

// routeIndexes returns the prepared graphs, rebuilt when the indexed channels or the peers'
// up/down states changed, a young channel settled, or they are older than routesMaxAge, with this
// node's own channels at what the tickets it signed leave of them now. The caller holds mu.
func (r *Router) routeIndexes() (all, settled *path.Index) {
	c := &r.routes
	snap := r.cfg.Graph.Snapshot()
	peersVersion := r.cfg.Transport.PeersVersion() // before Peers: a change in between rebuilds next time
	now := r.now()
	if c.all == nil || c.snap != snap || c.peers != peersVersion || now.Sub(c.built) >= routesMaxAge ||
		(!c.settles.IsZero() && !now.Before(c.settles)) {
		chans := snap.Channels() // a sorted copy: read once for both
		g, own := r.routeGraph(snap, chans)
		young, settles := r.young(chans, now)
		*c = routeCache{snap: snap, peers: peersVersion, built: now, own: own, settles: settles}
		c.all = path.NewIndex(g)
		c.settled = c.all
		if len(young) > 0 {
			c.settled = path.NewIndex(withoutYoung(g, young))
		}
	}
	for _, dst := range c.own {
		// What the tickets we signed and nobody redeemed yet leave, in the expected value a
		// ticket can carry (its face is the value over its win probability).
		capacity, _ := r.cfg.Capacity.Capacity(dst)
		c.all.SetBalance(r.self, dst, capacity)
		if c.settled != c.all {
			c.settled.SetBalance(r.self, dst, capacity)
		}
	}
	return c.all, c.settled
}

func (r *Router) now() time.Time {
	if r.clock != nil {
		return r.clock()
	}
	return time.Now()
}

// young records when this node first saw each open channel of chans open (in its epoch; the
// channels open at the router's first look count as old) and returns the ids of those opened
// less than ChannelSettle ago, and when the last of them settles.
func (r *Router) young(chans []channels.Channel, now time.Time) (young map[[2]common.Address]bool, settles time.Time) {
	first := r.opened == nil
	opened := make(map[[32]byte]openedAt, len(r.opened))
	for _, ch := range chans {
		if ch.Status != channels.Open {
			continue
		}
		o, ok := r.opened[ch.ID]
		if !ok || o.epoch != ch.Epoch {
			o = openedAt{epoch: ch.Epoch}
			if !first {
				o.at = now
			}
		}
		opened[ch.ID] = o
		if end := o.at.Add(ChannelSettle); !o.at.IsZero() && now.Before(end) {
			if young == nil {
				young = map[[2]common.Address]bool{}
			}
			young[[2]common.Address{ch.Source, ch.Destination}] = true
			if end.After(settles) {
				settles = end
			}
		}
	}
	r.opened = opened
	return young, settles
}

// withoutYoung is g with the young channels closed.
func withoutYoung(g *path.Graph, young map[[2]common.Address]bool) *path.Graph {
	out := &path.Graph{Nodes: g.Nodes, Edges: make([]path.Edge, len(g.Edges))}
	copy(out.Edges, g.Edges)
	for i, e := range out.Edges {
		if young[[2]common.Address{e.Source, e.Destination}] {
			out.Edges[i].Open = false
		}
	}
	return out
}

// routeGraph is the path graph of snap: its announced nodes with their heartbeat qualities, and its
// channels (chans, snap.Channels()) with the expected value a ticket on them can carry; own lists the destinations of this
// node's open channels, whose capacities routeIndexes refreshes per message.
func (r *Router) routeGraph(snap *channels.Snapshot, chans []channels.Channel) (g *path.Graph, own []common.Address) {
	quality, relayed := map[peer.ID]float64{}, map[peer.ID]bool{}
	for _, p := range r.cfg.Transport.Peers() {
		quality[p.ID], relayed[p.ID] = p.Quality, p.Reach == peers.ReachRelayed
		if p.Down { // sending to it failed since its last heartbeat
			quality[p.ID] = 0
		}
	}
	g = &path.Graph{}
	for _, a := range snap.Peers() {
		id, err := r.cfg.Directory.PeerIDOf(a)
		if err != nil {
			continue
		}
		q, known := quality[id]
		if !known && a.Account == r.self {
			q = 1
		}
		// A relayer reached only through a circuit relay costs that relay its traffic: paths
		// prefer direct links (docs/NAT.md).
		g.Nodes = append(g.Nodes, path.Node{Address: a.Account, Peer: id, Quality: q, Relayed: relayed[id] || peers.RelayOnly(a)})
	}
	for _, c := range chans {
		e := path.Edge{Source: c.Source, Destination: c.Destination, Open: c.Status == channels.Open}
		e.Balance.SetFromBig(c.Balance)
		if c.Source == r.self && e.Open {
			own = append(own, c.Destination) // set per message by routeIndexes
		} else {
			e.Balance = r.cfg.Capacity.CapacityOf(&e.Balance)
		}
		g.Edges = append(g.Edges, e)
	}
	return g, own
}
