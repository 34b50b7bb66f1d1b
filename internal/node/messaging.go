package node

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/ws"
)

// messaging is the node's data plane: the relay pipeline and, with a
// chain, the ledger of tickets that pays it.
type messaging struct {
	n      *Node
	relay  *relay.Relay
	ledger *ledger.Ledger // nil without a chain

	rngMu  sync.Mutex
	rng    *rand.Rand
	routes routeCache // guarded by rngMu
}

func (n *Node) buildMessaging() error {
	replay, err := n.db.ReplayTags(time.Now)
	if err != nil {
		return &StartupError{"data", err}
	}
	n.replay = replay
	m := &messaging{n: n, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	mix, err := n.settings.mixing(n.settings.get()) // the stored mixDelayMean, the flags' bounds
	if err != nil {
		return &StartupError{"mixDelayMax", err}
	}
	cfg := relay.Config{
		Key:          n.id.PrivateKey(),
		Transport:    n.relayTransport(),
		Replay:       replay,
		Deliver:      n.deliver,
		MixDelayMin:  mix.Min,
		MixDelayMax:  mix.Max,
		MixDelayMean: mix.Mean,
		NoMixDelay:   mix.Max == 0,
		Logger:       n.log.With("component", "relay"),
		Registerer:   n.metrics,
	}
	if s := n.chain; s != nil {
		m.ledger, err = ledger.New(ledger.Config{
			Key:        n.id.PrivateKey(),
			ChainID:    s.client.ChainID(),
			Contract:   s.client.ChannelsAddress(),
			Channels:   s.graph,
			Store:      n.db,
			MinWinProb: s.minWinProb,
			WinProb:    n.settings.outWinProb,
			Logger:     n.log.With("component", "tickets"),
		})
		if err != nil {
			return err
		}
		cfg.Payments = m.ledger
	}
	if m.relay, err = relay.New(cfg); err != nil {
		return err
	}
	n.msg = m
	return nil
}

// deliver shows a message this node received on every admin connection:
// the three log lines, then the message frame, back to back.
func (n *Node) deliver(r relay.Received) {
	if n.cover != nil && n.cover.returned(r) {
		return // this node's own loop cover packet: dropped silently
	}
	latency := r.ReceivedAt.Sub(r.SentAt).Milliseconds()
	n.nm.latency.Observe(r.ReceivedAt.Sub(r.SentAt).Seconds())
	now := n.hub.Now()
	n.hub.PublishSeq(
		ws.NewFrame(ws.TypeLog, "#### NODE RECEIVED MESSAGE ["+r.ReceivedAt.UTC().Format(ws.TimeFormat)+"] ####", now),
		ws.NewFrame(ws.TypeLog, "Message: "+r.Text, now),
		ws.NewFrame(ws.TypeLog, "Latency: "+strconv.FormatInt(latency, 10)+" ms", now),
		ws.NewFrame(ws.TypeMessage, r.Text, now),
	)
}

var (
	errNoChainPath = &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodePathNotFound,
		Msg: "no path: this node runs without a chain, so it has no payment channels"}
	errTooLarge = &api.Error{Status: http.StatusBadRequest, Code: api.CodeMessageTooLarge,
		Msg: fmt.Sprintf("message is longer than %d bytes", packet.MaxMessageSize)}
)

// SendMessage implements api.Messenger: a paid message over a path of
// relayers that the node picks (path.DefaultRelayers where such a path exists).
func (m *messaging) SendMessage(ctx context.Context, recipient peer.ID, text string) (string, error) {
	ack, _, err := m.sendAuto(ctx, recipient, text)
	return ack, err
}

// sendAuto is SendMessage that also says over how many relayers the message went.
func (m *messaging) sendAuto(ctx context.Context, recipient peer.ID, text string) (ack string, relayers int, err error) {
	if len(text) > packet.MaxMessageSize {
		return "", 0, errTooLarge
	}
	hops, err := m.pickPath(recipient)
	if err != nil {
		return "", 0, err
	}
	ack, err = m.send(ctx, hops, text)
	return ack, len(hops) - 1, err
}

// send relays text over hops (relayers, then the recipient) and returns the
// first hop's ack challenge.
func (m *messaging) send(ctx context.Context, hops []peer.ID, text string) (string, error) {
	sent, err := m.relay.Send(ctx, hops, text)
	if err != nil {
		return "", sendError(err)
	}
	return "0x" + common.Bytes2Hex(sent.Ack[:]), nil
}

func sendError(err error) error {
	switch {
	case errors.Is(err, packet.ErrMessageTooLarge):
		return errTooLarge
	case errors.Is(err, ledger.ErrNotEnoughBalance), errors.Is(err, path.ErrNotEnoughBalance):
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeNotEnoughBalance,
			Msg: "a channel on the path has too little balance for its ticket; nothing was sent"}
	case errors.Is(err, ledger.ErrChannelNotOpen), errors.Is(err, ledger.ErrChannelNotFound),
		errors.Is(err, path.ErrNoPath), errors.Is(err, path.ErrUnknownNode):
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodePathNotFound,
			Msg: "no path of open channels to the recipient; nothing was sent"}
	case errors.Is(err, relay.ErrBadRoute):
		return &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidInput, Msg: err.Error()}
	case errors.Is(err, p2p.ErrUnreachable), errors.Is(err, p2p.ErrNoAddress):
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodePathNotFound,
			Msg: "the first relayer is unreachable right now; nothing was sent"}
	case errors.Is(err, p2p.ErrQueueFull), errors.Is(err, relay.ErrOverloaded), errors.Is(err, ledger.ErrStopped):
		return &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnknownFailure,
			Msg: "the node is busy; nothing was sent, try again"}
	}
	return err
}

// pickPath selects relayers to recipient over the indexed channel graph,
// preferring peers with good heartbeats.
func (m *messaging) pickPath(recipient peer.ID) ([]peer.ID, error) {
	s := m.n.chain
	if s == nil {
		return nil, errNoChainPath
	}
	to, err := s.addressOf(recipient)
	if err != nil {
		return nil, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: err.Error()}
	}
	hops, err := m.pathTo(s, to)
	if err != nil {
		return nil, sendError(err)
	}
	return hops, nil
}

// pathTo selects relayers from this node to the account to over the indexed channel graph,
// preferring peers with good heartbeats, and returns them followed by to's PeerId. to may be
// this node itself: a loop, for cover traffic.
func (m *messaging) pathTo(s *settlement, to common.Address) ([]peer.ID, error) {
	self := m.n.id.Address()
	m.rngMu.Lock()
	defer m.rngMu.Unlock()
	ix := m.routeIndex(s, self)
	// Two relayers where such a path exists; in a sparse graph three, the most a packet carries
	// (the sender then pays 0.03 plus its padding). Every channel must carry the largest padding
	// relay.Send may draw (PROTOCOL.md §4.5), so that the path does not depend on the draw.
	sel := func(relayers int) ([]path.Node, error) {
		if to == self {
			return ix.SelectLoopPadded(m.rng, self, relayers, tickets.AmountFor(1), tickets.PadMax)
		}
		return ix.SelectPadded(m.rng, self, to, relayers, tickets.AmountFor(1), tickets.PadMax)
	}
	want, other := m.relayers()
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
	if err != nil {
		return nil, err
	}
	hops := make([]peer.ID, len(nodes))
	for i, nd := range nodes {
		hops[i] = nd.Peer
	}
	return hops, nil
}

// routesMaxAge is how long pathTo keeps a prepared graph whose channels and peers' up/down states
// have not changed: the age of the heartbeat qualities and of the win probability its other
// channels' capacities were computed at.
const routesMaxAge = time.Second

// routeCache is the channel graph prepared for path selection (a path.Index), so that a message
// costs a search, not a copy of the whole graph: at a few hundred messages a second the copy was
// 7 % of a sender's CPU on a 4-node network, and it grows with the network.
type routeCache struct {
	ix    *path.Index
	snap  *channels.Snapshot // the indexed graph it was built from
	peers uint64             // p2p.Host.PeersVersion when it was built
	built time.Time
	own   []common.Address // destinations of this node's open channels
}

// routeIndex returns the prepared graph, rebuilt when the indexed channels or the peers' up/down
// states changed or it is older than routesMaxAge, with this node's own channels at what the
// tickets it signed leave of them now. The caller holds rngMu.
func (m *messaging) routeIndex(s *settlement, self common.Address) *path.Index {
	c := &m.routes
	snap := s.graph.Snapshot()
	peersVersion := m.n.host.PeersVersion() // before Peers: a change in between rebuilds next time
	now := time.Now()
	if c.ix == nil || c.snap != snap || c.peers != peersVersion || now.Sub(c.built) >= routesMaxAge {
		g, own := m.routeGraph(snap, self)
		*c = routeCache{ix: path.NewIndex(g), snap: snap, peers: peersVersion, built: now, own: own}
	}
	if m.ledger != nil {
		for _, dst := range c.own {
			// What the tickets we signed and nobody redeemed yet leave, in the expected value a
			// ticket can carry (its face is the value over its win probability).
			capacity, _ := m.ledger.Capacity(dst)
			c.ix.SetBalance(self, dst, capacity)
		}
	}
	return c.ix
}

// routeGraph is the path graph of snap: its announced nodes with their heartbeat qualities, and its
// channels with the expected value a ticket on them can carry; own lists the destinations of this
// node's open channels, whose capacities routeIndex refreshes per message.
func (m *messaging) routeGraph(snap *channels.Snapshot, self common.Address) (g *path.Graph, own []common.Address) {
	quality := map[peer.ID]float64{}
	for _, p := range m.n.host.Peers() {
		quality[p.ID] = p.Quality
		if p.Down { // sending to it failed since its last heartbeat
			quality[p.ID] = 0
		}
	}
	s := m.n.chain
	g = &path.Graph{}
	for _, a := range snap.Peers() {
		id, err := s.peerIDOf(a)
		if err != nil {
			continue
		}
		q, known := quality[id]
		if !known && a.Account == self {
			q = 1
		}
		g.Nodes = append(g.Nodes, path.Node{Address: a.Account, Peer: id, Quality: q})
	}
	for _, c := range snap.Channels() {
		e := path.Edge{Source: c.Source, Destination: c.Destination, Open: c.Status == channels.Open}
		e.Balance.SetFromBig(c.Balance)
		switch {
		case m.ledger == nil:
		case c.Source == self && e.Open:
			own = append(own, c.Destination) // set per message by routeIndex
		default:
			e.Balance = m.ledger.CapacityOf(&e.Balance)
		}
		g.Edges = append(g.Edges, e)
	}
	return g, own
}

// relayers returns how many relayers the node's own paths take (the relayers setting) and the
// count to try where no such path exists.
func (m *messaging) relayers() (want, other int) {
	want = path.DefaultRelayers
	if m.n.settings != nil {
		if r := m.n.settings.get().Relayers; r >= path.MinRelayers && r <= path.MaxRelayers {
			want = r
		}
	}
	if want == path.MaxRelayers {
		return want, path.DefaultRelayers
	}
	return want, path.MaxRelayers
}

// ticketsAPI is the ledger as the REST API and the admin commands see it.
type ticketsAPI struct{ m *messaging }

func (t ticketsAPI) Tickets(from *peer.ID) ([]api.Ticket, error) {
	var list []ledger.AckedTicket
	var err error
	if from == nil {
		list, err = t.m.ledger.Tickets()
	} else {
		addr, aerr := t.m.n.chain.addressOf(*from)
		if aerr != nil {
			return nil, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: aerr.Error()}
		}
		list, err = t.m.ledger.TicketsFrom(addr)
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.Ticket, 0, len(list))
	for _, a := range list {
		tk := a.Ticket
		out = append(out, api.Ticket{
			ChannelID:    "0x" + common.Bytes2Hex(tk.ChannelID[:]),
			Counterparty: t.m.n.chain.peerName(a.Source),
			Amount:       tk.Amount.Dec(),
			Index:        strconv.FormatUint(tk.Index, 10),
			ChannelEpoch: strconv.FormatUint(uint64(tk.Epoch), 10),
			WinProb:      tickets.FormatWinProb(tk.WinProb),
			Challenge:    "0x" + common.Bytes2Hex(tk.Challenge[:]),
			Signature:    "0x" + common.Bytes2Hex(tk.Signature[:]),
		})
	}
	return out, nil
}

func (t ticketsAPI) TicketStatistics() (api.TicketStatistics, error) {
	st, err := t.m.ledger.Statistics()
	if err != nil {
		return api.TicketStatistics{}, err
	}
	return api.TicketStatistics{
		Pending: st.Pending, Unredeemed: st.Unredeemed, UnredeemedValue: st.UnredeemedValue.Dec(),
		Redeemed: st.Redeemed, RedeemedValue: st.RedeemedValue.Dec(),
		WinningTickets: st.Winning, WinningValue: st.WinningValue.Dec(),
		LosingTickets: st.LosingTickets, LosingValue: st.LosingValue.Dec(),
		WinProportion: st.WinProportion, Neglected: st.Neglected, Rejected: st.Rejected, RejectedValue: st.RejectedValue.Dec(),
	}, nil
}

func (t ticketsAPI) RedeemTickets(ctx context.Context, from *peer.ID) error {
	_, err := t.redeem(ctx, from)
	return err
}

func (t ticketsAPI) redeem(ctx context.Context, from *peer.ID) (ledger.RedeemReport, error) {
	var rep ledger.RedeemReport
	var err error
	if from == nil {
		rep, err = t.m.n.chain.redeemTickets(ctx, nil, "requested")
	} else {
		addr, aerr := t.m.n.chain.addressOf(*from)
		if aerr != nil {
			return rep, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: aerr.Error()}
		}
		rep, err = t.m.n.chain.redeemTickets(ctx, &addr, "requested")
	}
	if err == nil {
		err = t.m.n.chain.waitHead(ctx)
	}
	if err != nil {
		return rep, t.redeemFailure(rep, from, err)
	}
	return rep, nil
}

// peerName names an account by its PeerId when it announced itself, by its
// address otherwise.
func (s *settlement) peerName(addr common.Address) string {
	if a, ok := s.graph.Announced(addr); ok {
		if id, err := s.peerIDOf(a); err == nil {
			return id.String()
		}
	}
	return addr.Hex()
}
