package api

import "net/http"

// Grapher is what GET /node/graph needs from the node's settlement layer.
type Grapher interface {
	// Graph returns the channel graph the node's chain indexer knows: every
	// channel that is not Closed, between any two nodes, and every node at
	// either end of one or announced on chain, this node first. It reads an
	// in-memory snapshot and cannot fail.
	Graph() Graph
}

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
	g := s.cfg.Graph.Graph()
	if g.Nodes == nil {
		g.Nodes = []GraphNode{}
	}
	if g.Channels == nil {
		g.Channels = []GraphChannel{}
	}
	writeJSON(w, http.StatusOK, g)
}
