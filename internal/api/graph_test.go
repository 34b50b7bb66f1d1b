package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// graphFunc is a Grapher answering with a fixed graph.
type graphFunc func() Graph

func (f graphFunc) Graph() Graph { return f() }

// TestGraphEmpty: a node that knows no node nor channel answers both lists
// present and empty, which the document requires.
func TestGraphEmpty(t *testing.T) {
	cfg := newFakeNode(t).config(false)
	cfg.Graph = graphFunc(func() Graph { return Graph{} })
	srv := serveConfig(t, cfg)
	resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/graph", http.Header{"X-Auth-Token": {testToken}}, "")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"nodes":[],"channels":[]}` {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	loadSpec(t).checkResponse(t, http.MethodGet, "/node/graph", resp.StatusCode, resp.Header, body)
}

// TestGraphChannelsNameTheirNodes: every channel's ends are nodes of the
// answer, joined on peerId, including the channels between two other
// nodes; the node itself comes first.
func TestGraphChannelsNameTheirNodes(t *testing.T) {
	f := newSpecFixture(t)
	srv := serveConfig(t, f.self.config(false))
	resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/graph", http.Header{"X-Auth-Token": {testToken}}, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	var g Graph
	if err := json.Unmarshal(body, &g); err != nil {
		t.Fatal(err)
	}
	self := f.self.PeerID().String()
	if len(g.Nodes) == 0 || g.Nodes[0].PeerID != self || !g.Nodes[0].Self {
		t.Fatalf("the node itself is not first: %+v", g.Nodes)
	}
	known := map[string]bool{}
	for _, n := range g.Nodes {
		known[n.PeerID] = true
	}
	others := 0
	for _, c := range g.Channels {
		if !known[c.Source] || !known[c.Destination] {
			t.Errorf("channel %+v names a node not in the answer", c)
		}
		if c.Source != self && c.Destination != self {
			others++
		}
	}
	if others == 0 {
		t.Fatalf("no channel between two other nodes: %+v", g.Channels)
	}
}
