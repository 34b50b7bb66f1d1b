package node

import (
	"net/http"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/api"
)

// TestGraphOverREST: A's GET /node/graph holds every node and every channel
// the network has, B → C too (a channel A is no end of), with the balances
// on chain; a closed channel leaves it.
func TestGraphOverREST(t *testing.T) {
	net := newTestNet(t, 3)
	a, b, c := net.nodes[0], net.nodes[1], net.nodes[2]
	net.open(a, b, tokens(2))
	net.open(b, c, tokens(3))

	var g api.Graph
	net.mustCall(a, http.MethodGet, "/node/graph", "", http.StatusOK, &g)
	if len(g.Nodes) != 3 {
		t.Fatalf("nodes: %+v", g.Nodes)
	}
	self := g.Nodes[0]
	if !self.Self || self.PeerID != a.id.PeerID().String() || self.Address != a.id.Address().Hex() || !self.Announced || self.Connected {
		t.Fatalf("this node: %+v", self)
	}
	for _, n := range g.Nodes[1:] {
		if n.Self || !n.Announced {
			t.Fatalf("another node: %+v", n)
		}
		if n.PeerID != b.id.PeerID().String() && n.PeerID != c.id.PeerID().String() {
			t.Fatalf("unknown node %+v", n)
		}
	}
	want := map[[2]string]string{
		{a.id.PeerID().String(), b.id.PeerID().String()}: tokens(2).String(),
		{b.id.PeerID().String(), c.id.PeerID().String()}: tokens(3).String(),
	}
	if len(g.Channels) != len(want) {
		t.Fatalf("channels: %+v", g.Channels)
	}
	for _, ch := range g.Channels {
		if bal, ok := want[[2]string{ch.Source, ch.Destination}]; !ok || ch.Balance != bal || ch.Status != "Open" || len(ch.ChannelID) != 66 {
			t.Fatalf("channel %+v", ch)
		}
	}

	// B starts closing its channel to C: A's graph shows it PendingToClose.
	net.mustCall(b, http.MethodDelete, "/channels/"+c.id.PeerID().String()+"/outgoing", "", http.StatusOK, nil)
	net.eventually("A sees B's channel to C closing", func() bool {
		var g api.Graph
		net.mustCall(a, http.MethodGet, "/node/graph", "", http.StatusOK, &g)
		for _, ch := range g.Channels {
			if ch.Source == b.id.PeerID().String() && ch.Status == "PendingToClose" {
				return true
			}
		}
		return false
	})
	// After the closure period B finalizes it: Closed, it leaves the graph.
	if err := net.chain.AdjustTime(61 * time.Second); err != nil {
		t.Fatal(err)
	}
	net.mustCall(b, http.MethodDelete, "/channels/"+c.id.PeerID().String()+"/outgoing", "", http.StatusOK, nil)
	net.eventually("B's channel to C leaves A's graph", func() bool {
		var g api.Graph
		net.mustCall(a, http.MethodGet, "/node/graph", "", http.StatusOK, &g)
		return len(g.Channels) == 1 && g.Channels[0].Source == a.id.PeerID().String()
	})
}

// TestGraphWithoutChain: a node started without a chain answers
// GET /node/graph as its other chain operations, 503.
func TestGraphWithoutChain(t *testing.T) {
	n := startNode(t, testConfig(t))
	if status, body := restGet(t, n, http.MethodGet, api.Prefix+"/node/graph", "", true); status != http.StatusServiceUnavailable {
		t.Fatalf("got %d %s", status, body)
	}
}
