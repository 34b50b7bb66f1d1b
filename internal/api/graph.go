package api

import (
	"bytes"
	"net/http"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
)

// Graph is the answer of GET /node/graph. Channels name their ends as
// Nodes do (GraphNode.PeerID), so a client joins them on that field.
type Graph struct {
	Nodes    []GraphNode    `json:"nodes"`
	Channels []GraphChannel `json:"channels"`
}

// GraphNode is one node of the channel graph.
type GraphNode struct {
	// PeerID is the node's PeerId, or its chain address when it never
	// announced itself on chain (the node does not know its PeerId then).
	PeerID string `json:"peerId"`
	// Address is the node's chain address (EIP-55).
	Address string `json:"address"`
	// Self marks this node.
	Self bool `json:"self"`
	// Announced reports whether the node announced itself on chain.
	Announced bool `json:"announced"`
	// Connected reports whether this node has a connection to it now;
	// false for this node itself.
	Connected bool `json:"connected"`
}

// GraphChannel is one channel of the graph, from the node that funds it to
// the node it pays.
type GraphChannel struct {
	ChannelID   string `json:"channelId"`
	Source      string `json:"source"`      // a GraphNode.PeerID
	Destination string `json:"destination"` // a GraphNode.PeerID
	Balance     string `json:"balance"`     // wei
	Status      string `json:"status"`      // Open or PendingToClose
}

func (s *Server) getGraph(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Graph == nil {
		s.fail(w, "graph", errNoChain)
		return
	}
	writeJSON(w, http.StatusOK, s.graph())
}

// graph is the channel graph the node's indexer knows: every channel that is not Closed, between
// any two nodes, and every node at either end of one or announced on chain, this node first, then
// the others by address. It reads one snapshot of the graph, so the channels and the
// announcements it names agree; connected comes from the transport at the time of the call.
func (s *Server) graph() Graph {
	snap := s.cfg.Graph.Snapshot()
	selfAddr, selfID := s.cfg.Self.Address(), s.cfg.Self.PeerID()
	connected := map[peer.ID]bool{}
	for _, p := range s.cfg.Transport.Peers() {
		connected[p.ID] = p.Connected
	}
	nodes := map[common.Address]GraphNode{}
	for _, ann := range snap.Peers() {
		node := GraphNode{PeerID: ann.Account.Hex(), Address: ann.Account.Hex(), Announced: true}
		// A key that does not convert is named by its address, as Peers.Name does.
		if id, err := s.cfg.Peers.PeerIDOf(ann); err == nil {
			node.PeerID, node.Connected = id.String(), connected[id]
		}
		nodes[ann.Account] = node
	}
	self := nodes[selfAddr]
	self.PeerID, self.Address, self.Self, self.Connected = selfID.String(), selfAddr.Hex(), true, false
	nodes[selfAddr] = self

	chans := []GraphChannel{}
	for _, c := range snap.Channels() {
		if c.Status == channels.Closed {
			continue
		}
		for _, end := range []common.Address{c.Source, c.Destination} {
			if _, ok := nodes[end]; !ok {
				nodes[end] = GraphNode{PeerID: end.Hex(), Address: end.Hex()}
			}
		}
		chans = append(chans, GraphChannel{
			ChannelID:   hexBytes(c.ID[:]),
			Source:      nodes[c.Source].PeerID,
			Destination: nodes[c.Destination].PeerID,
			Balance:     c.Balance.String(),
			Status:      c.Status.String(),
		})
	}
	addrs := make([]common.Address, 0, len(nodes))
	for a := range nodes {
		if a != selfAddr {
			addrs = append(addrs, a)
		}
	}
	slices.SortFunc(addrs, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	out := Graph{Nodes: []GraphNode{nodes[selfAddr]}, Channels: chans}
	for _, a := range addrs {
		out.Nodes = append(out.Nodes, nodes[a])
	}
	return out
}

// hexBytes writes b as 0x and lower-case hexadecimal digits.
func hexBytes(b []byte) string { return "0x" + common.Bytes2Hex(b) }
