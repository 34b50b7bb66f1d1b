package node

import (
	"bytes"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/channels"
)

// graphAPI serves GET /node/graph from the settlement's channel graph.
type graphAPI struct{ s *settlement }

// Graph implements api.Grapher. It reads one snapshot of the graph, so the
// channels and the announcements it names agree; connected comes from the
// transport at the time of the call.
func (g graphAPI) Graph() api.Graph {
	s := g.s
	snap := s.graph.Snapshot()
	selfAddr, selfID := s.n.id.Address(), s.n.id.PeerID()

	connected := map[peer.ID]bool{}
	for _, p := range s.n.host.Peers() {
		if p.Connected {
			connected[p.ID] = true
		}
	}

	nodes := map[common.Address]api.GraphNode{}
	for _, ann := range snap.Peers() {
		node := api.GraphNode{PeerID: ann.Account.Hex(), Address: ann.Account.Hex(), Announced: true}
		// A key that does not convert is named by its address, as
		// peerName does.
		if id, err := s.peerIDOf(ann); err == nil {
			node.PeerID, node.Connected = id.String(), connected[id]
		}
		nodes[ann.Account] = node
	}
	self := nodes[selfAddr]
	self.PeerID, self.Address, self.Self, self.Connected = selfID.String(), selfAddr.Hex(), true, false
	nodes[selfAddr] = self

	var chans []api.GraphChannel
	for _, c := range snap.Channels() {
		if c.Status == channels.Closed {
			continue
		}
		for _, end := range []common.Address{c.Source, c.Destination} {
			if _, ok := nodes[end]; !ok {
				nodes[end] = api.GraphNode{PeerID: end.Hex(), Address: end.Hex()}
			}
		}
		chans = append(chans, api.GraphChannel{
			ChannelID:   "0x" + common.Bytes2Hex(c.ID[:]),
			Source:      nodes[c.Source].PeerID,
			Destination: nodes[c.Destination].PeerID,
			Balance:     c.Balance.String(),
			Status:      c.Status.String(),
		})
	}

	// This node first, then the others by address, like the snapshot's
	// channels.
	addrs := make([]common.Address, 0, len(nodes))
	for a := range nodes {
		if a != selfAddr {
			addrs = append(addrs, a)
		}
	}
	slices.SortFunc(addrs, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	out := api.Graph{Nodes: []api.GraphNode{nodes[selfAddr]}, Channels: chans}
	for _, a := range addrs {
		out.Nodes = append(out.Nodes, nodes[a])
	}
	return out
}
