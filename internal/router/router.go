// Package router carries this node's own messages. Router sends them: it picks a path of
// relayers over the channel graph the indexer keeps (prepared once per change as a path.Index,
// not per message), hands the message to the relay pipeline, and answers with this package's
// sentinels. Inbox receives them: it hands every message the relay delivers to this node to its
// subscribers (the admin console, the app stream), typed, after the loop cover traffic took back
// its own.
//
// Of relayd's packages it imports relay (the pipeline it sends through), path, channels, peers,
// packet, tickets, ledger and p2p (for their sentinels). It must not import internal/node,
// internal/api, internal/ws or internal/admin. It never logs message text or routes.
package router

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/tickets"
)

// Sender is the relay pipeline as the router uses it; *relay.Relay implements it.
type Sender interface {
	Send(ctx context.Context, hops []peer.ID, text string) (relay.Sent, error)
	SendDrop(ctx context.Context, hops []peer.ID) (relay.Sent, error)
}

// Transport is what the router reads of the peers; *p2p.Host implements it.
type Transport interface {
	// Peers lists the known peers with their heartbeat quality and whether sending to them
	// failed since (Down).
	Peers() []peers.Info
	// PeersVersion changes whenever a peer goes down or up.
	PeersVersion() uint64
}

// Capacity is what the channels can carry; *ledger.Ledger implements it.
type Capacity interface {
	// Capacity is the expected value a ticket on this node's channel to dst can still carry:
	// its balance less what the tickets signed and not redeemed owe.
	Capacity(dst common.Address) (uint256.Int, bool)
	// CapacityOf is the expected value a ticket on another node's channel of that balance can
	// carry, at the tickets' win probability.
	CapacityOf(balance *uint256.Int) uint256.Int
}

// Config configures a Router. Sender, Directory, Transport and Relayers are required; Graph and
// Capacity are nil on a node without a chain, which then has no path (ErrNoChain).
type Config struct {
	Sender    Sender
	Directory *peers.Directory
	Transport Transport
	// Graph is the node's view of the channels and announcements; *channels.Graph has it.
	Graph interface{ Snapshot() *channels.Snapshot }
	// Capacity is what the channels can carry (the ledger).
	Capacity Capacity
	// Relayers is how many relayers the node's own paths take now (the relayers setting).
	Relayers func() int
	// Rand draws paths; a cryptographically seeded source when nil.
	Rand *mrand.Rand
	// Pace, when set, runs each message's send in its slot of the node's constant-rate stream
	// (stream.Stream's Do); nil: at once.
	Pace func(ctx context.Context, send func(context.Context) error) error
	// Layers, in a layered network (issue 30), returns the layers this node's paths and reply
	// blocks may cross, one relayer of each in order, whatever the relayers setting says: the
	// first of them where a path exists (layers.View's Paths: the current epoch's, then for a
	// grace the previous epoch's); none while they are not drawn: no path then. Nil: free
	// routes. With Layers the Sender must be a relay of a layered network (relay.Config.Layered):
	// the last relayer of a path has no channel to the recipient.
	Layers func() []path.Layers
}

// Router sends this node's messages. Its methods are safe for concurrent use.
type Router struct {
	cfg  Config
	self common.Address

	mu     sync.Mutex // guards rng, routes, opened and down
	rng    *mrand.Rand
	routes routeCache
	// opened is when this node saw each open channel open (routes.go's young).
	opened map[[32]byte]openedAt
	clock  func() time.Time // time.Now when nil (tests set it)
	// down are the peers the transport says are down, as of PeersVersion downVersion.
	down        map[peer.ID]bool
	downVersion uint64
}

// New checks cfg and returns a Router.
func New(cfg Config) (*Router, error) {
	if cfg.Sender == nil || cfg.Directory == nil || cfg.Transport == nil || cfg.Relayers == nil {
		return nil, errors.New("router: Sender, Directory, Transport and Relayers are required")
	}
	if (cfg.Graph == nil) != (cfg.Capacity == nil) {
		return nil, errors.New("router: Graph and Capacity go together")
	}
	rng := cfg.Rand
	if rng == nil {
		var seed [16]byte
		if _, err := rand.Read(seed[:]); err != nil {
			return nil, fmt.Errorf("router: seed: %w", err)
		}
		rng = mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	}
	return &Router{cfg: cfg, self: cfg.Directory.SelfAddress(), rng: rng}, nil
}

// Sent is what a send did.
type Sent struct {
	// Ack is the ack challenge the first hop's acknowledgement opens.
	Ack por.AckChallenge
	// Relayers is how many relayers the message went over.
	Relayers int
	// Cost is the expected value of the first hop's ticket: what the message cost this node.
	Cost uint256.Int
}

// Send sends text to recipient over a path of relayers the router picks: as many as the
// relayers setting says where such a path exists, else the other count.
func (r *Router) Send(ctx context.Context, recipient peer.ID, text string) (Sent, error) {
	if len(text) > packet.MaxMessageSize {
		return Sent{}, ErrMessageTooLarge
	}
	if recipient == r.cfg.Directory.Self() {
		return Sent{}, fmt.Errorf("%w: the recipient is this node, which cannot send a message to itself", ErrSelf)
	}
	to, err := r.cfg.Directory.AddressOf(recipient)
	if err != nil {
		return Sent{}, fmt.Errorf("%w: %w", ErrBadRoute, err)
	}
	hops, err := r.pathTo(to)
	if err != nil {
		return Sent{}, err
	}
	return r.send(ctx, hops, text)
}

// SendPath sends text over hops: the relayers named, then the recipient; one hop is a direct
// message (free, no privacy). A path that names this node is ErrSelf.
func (r *Router) SendPath(ctx context.Context, hops []peer.ID, text string) (Sent, error) {
	if len(hops) == 0 {
		return Sent{}, fmt.Errorf("%w: no recipient", ErrBadRoute)
	}
	self := r.cfg.Directory.Self()
	if hops[len(hops)-1] == self {
		return Sent{}, fmt.Errorf("%w: the recipient is this node, which cannot send a message to itself", ErrSelf)
	}
	for _, h := range hops[:len(hops)-1] {
		if h == self {
			return Sent{}, fmt.Errorf("%w: a relayer is this node, which cannot relay its own message", ErrSelf)
		}
	}
	return r.send(ctx, hops, text)
}

// SendLoop sends text over a loop of relayers from this node back to itself (loop cover traffic),
// paid like a message.
func (r *Router) SendLoop(ctx context.Context, text string) (relay.Sent, error) {
	hops, err := r.pathTo(r.self)
	if err != nil {
		return relay.Sent{}, err
	}
	sent, err := r.cfg.Sender.Send(ctx, hops, text)
	return sent, classify(err)
}

// dropTries bounds the destinations SendDrop tries before it gives up (ErrNoPath).
const dropTries = 16

// SendDrop sends drop cover (docs/TRAFFIC.md) over a path of relayers, as many as a message's,
// to a node drawn uniformly among the announced nodes a path reaches, which discards it.
func (r *Router) SendDrop(ctx context.Context) (relay.Sent, error) {
	if r.cfg.Graph == nil {
		return relay.Sent{}, ErrNoChain
	}
	var candidates []common.Address
	for _, a := range r.cfg.Graph.Snapshot().Peers() {
		if a.Account != r.self {
			candidates = append(candidates, a.Account)
		}
	}
	r.mu.Lock()
	r.rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	r.mu.Unlock()
	err := ErrNoPath
	for _, to := range candidates[:min(len(candidates), dropTries)] {
		var hops []peer.ID
		if hops, err = r.pathTo(to); err != nil {
			continue
		}
		sent, err := r.cfg.Sender.SendDrop(ctx, hops)
		return sent, classify(err)
	}
	return relay.Sent{}, err
}

func (r *Router) send(ctx context.Context, hops []peer.ID, text string) (Sent, error) {
	var sent relay.Sent
	send := func(ctx context.Context) (err error) {
		sent, err = r.cfg.Sender.Send(ctx, hops, text)
		return err
	}
	var err error
	if r.cfg.Pace != nil {
		err = r.cfg.Pace(ctx, send)
	} else {
		err = send(ctx)
	}
	if err != nil {
		return Sent{}, classify(err)
	}
	return Sent{Ack: sent.Ack, Relayers: len(hops) - 1, Cost: sent.Cost}, nil
}

// classify wraps what the relay, the ledger, the path and the transport return in this package's
// sentinels.
func classify(err error) error {
	var s error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, packet.ErrMessageTooLarge):
		s = ErrMessageTooLarge
	case errors.Is(err, ledger.ErrNotEnoughBalance), errors.Is(err, path.ErrNotEnoughBalance):
		s = ErrNotEnoughBalance
	case errors.Is(err, ledger.ErrChannelNotOpen), errors.Is(err, ledger.ErrChannelNotFound),
		errors.Is(err, path.ErrNoPath), errors.Is(err, path.ErrUnknownNode):
		s = ErrNoPath
	case errors.Is(err, relay.ErrBadRoute):
		s = ErrBadRoute
	case errors.Is(err, relay.ErrBadReplyBlock), errors.Is(err, relay.ErrReplyBlockExpired), errors.Is(err, relay.ErrReplyBlockUsed):
		s = ErrReplyBlock
	case errors.Is(err, p2p.ErrUnreachable), errors.Is(err, p2p.ErrNoAddress):
		s = ErrUnreachable
	case errors.Is(err, p2p.ErrQueueFull), errors.Is(err, relay.ErrOverloaded), errors.Is(err, ledger.ErrStopped):
		s = ErrBusy
	default:
		return err
	}
	if errors.Is(err, s) {
		return err
	}
	return fmt.Errorf("%w: %w", s, err)
}

// pathTo selects relayers from this node to the account to over the channel graph, preferring
// peers with good heartbeats, and returns them followed by to's PeerId. to may be this node
// itself: a loop, for cover traffic.
func (r *Router) pathTo(to common.Address) ([]peer.ID, error) {
	if r.cfg.Graph == nil {
		return nil, ErrNoChain
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	nodes, err := r.choose(r.self, to)
	return hopsOf(nodes, err)
}

// hopsOf returns the PeerIds of nodes, or err in this package's sentinels.
func hopsOf(nodes []path.Node, err error) ([]peer.ID, error) {
	if err != nil {
		return nil, classify(err)
	}
	hops := make([]peer.ID, len(nodes))
	for i, nd := range nodes {
		hops[i] = nd.Peer
	}
	return hops, nil
}

// layeredPad is the padding a layered path's channels must carry: none, as the relay of a
// layered network sends without padding (relay.Config.Layered: the layers tell a relayer its
// position anyway) and forwards a ticket worth 0 without a channel, so the last relayer needs
// no channel to the recipient (path.SelectLayered).
const layeredPad = 0

// layered selects a path from src to dst (dst == src: a loop) through the first of the layers
// (Config.Layers) where one exists, in a layered network (ok); the error is the first layers'.
// ok is false on free routes. The caller holds mu.
func (r *Router) layered(ix *path.Index, src, dst common.Address) (nodes []path.Node, ok bool, err error) {
	if r.cfg.Layers == nil {
		return nil, false, nil
	}
	ls := r.cfg.Layers()
	if len(ls) == 0 {
		return nil, true, fmt.Errorf("%w: this epoch's layers are not drawn yet", path.ErrNoPath)
	}
	for i, l := range ls {
		var lerr error
		if src == dst {
			nodes, lerr = ix.SelectLoopLayered(r.rng, src, l, tickets.AmountFor(1), layeredPad)
		} else {
			nodes, lerr = ix.SelectLayered(r.rng, src, dst, l, tickets.AmountFor(1), layeredPad)
		}
		if lerr == nil {
			return nodes, true, nil
		}
		if i == 0 {
			err = lerr
		}
	}
	return nil, true, err
}

// relayers returns how many relayers the node's own paths take and the count to try where no
// such path exists.
func (r *Router) relayers() (want, other int) {
	want = min(max(r.cfg.Relayers(), path.MinRelayers), path.MaxRelayers)
	if want == path.MaxRelayers {
		return want, path.MinRelayers
	}
	return want, path.MaxRelayers
}
