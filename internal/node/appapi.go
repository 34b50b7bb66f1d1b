package node

import (
	"context"
	"fmt"
	"strconv"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/ws"
)

// PeerAddresses implements api.Node: what the peer announced on chain (none
// without a chain, or for a peer that never announced itself) and the
// addresses the transport knows for it.
func (a apiNode) PeerAddresses(id peer.ID) (announced, observed []string) {
	announced, observed = []string{}, []string{}
	if s := a.n.chain; s != nil {
		if addr, err := s.addressOf(id); err == nil {
			if ann, ok := s.graph.Snapshot().Announced(addr); ok {
				announced = append(announced, ann.Multiaddrs...)
			}
		}
	}
	for _, p := range a.n.host.Peers() {
		if p.ID == id {
			for _, m := range p.Addrs {
				observed = append(observed, m.String())
			}
		}
	}
	return announced, observed
}

// EntryNodes implements api.Node: the static peers (--peers) and the nodes
// announced on chain, other than this node.
func (a apiNode) EntryNodes() map[string]api.EntryNode {
	n := a.n
	out := map[string]api.EntryNode{}
	add := func(id peer.ID, addrs ...string) {
		if id == n.id.PeerID() {
			return
		}
		e := out[id.String()]
		e.IsEligible = true
		if e.Multiaddrs == nil {
			e.Multiaddrs = []string{}
		}
		e.Multiaddrs = append(e.Multiaddrs, addrs...)
		out[id.String()] = e
	}
	for _, s := range n.cfg.Peers {
		if info, err := peer.AddrInfoFromString(s); err == nil {
			for _, m := range info.Addrs {
				add(info.ID, m.String())
			}
		}
	}
	if s := n.chain; s != nil {
		for _, ann := range s.graph.Snapshot().Peers() {
			if id, err := s.peerIDOf(ann); err == nil {
				add(id, ann.Multiaddrs...)
			}
		}
	}
	return out
}

// readyLag is how many blocks the indexer may be behind the chain head and
// still count as caught up (blocks mined while it reads).
const readyLag = 4

// health answers GET /readyz.
type health struct{ n *Node }

// Ready implements api.Health: the chain provider answers, the indexer has
// caught up with its head, the transport listens. A node without a chain
// has only the transport to check.
func (h health) Ready(ctx context.Context) []api.ReadyCheck {
	n := h.n
	p2p := api.ReadyCheck{Name: "p2p", Ready: len(n.host.Addrs()) > 0}
	if p2p.Ready {
		p2p.Detail = "listening on " + strconv.Itoa(len(n.host.Addrs())) + " addresses"
	} else {
		p2p.Detail = "not listening"
	}
	s := n.chain
	if s == nil {
		return []api.ReadyCheck{{Name: "chain", Ready: true, Detail: "none: started without --provider"}, p2p}
	}
	head, err := s.client.BlockNumber(ctx)
	if err != nil {
		return []api.ReadyCheck{
			{Name: "chain", Ready: false, Detail: "the chain provider does not answer: " + err.Error()},
			{Name: "indexer", Ready: false, Detail: "the chain head is unknown"},
			p2p,
		}
	}
	next := s.indexer.Next()
	indexer := api.ReadyCheck{Name: "indexer", Ready: next+readyLag > head,
		Detail: fmt.Sprintf("indexed below block %d; chain head %d", next, head)}
	return []api.ReadyCheck{{Name: "chain", Ready: true, Detail: fmt.Sprintf("head %d", head)}, indexer, p2p}
}

// wireAppAPI gives the REST API the WebSocket streams, the readiness
// checks and, on a node with a chain, the channel graph.
func (n *Node) wireAppAPI(cfg *api.Config) error {
	s, err := ws.NewAppStreams(n.hub, n.log.With("component", "api"))
	if err != nil {
		return err
	}
	n.streams = s
	cfg.Streams, cfg.Health = s, health{n}
	if n.chain != nil {
		cfg.Graph = graphAPI{n.chain}
	}
	return nil
}
