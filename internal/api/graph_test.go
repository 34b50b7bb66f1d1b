package api

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
)

// getGraph asks srv for the graph and checks the answer against the document.
func getGraph(t *testing.T, cfg Config) Graph {
	t.Helper()
	srv := serveConfig(t, cfg)
	resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/graph", http.Header{"X-Auth-Token": {testToken}}, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	loadSpec(t).checkResponse(t, http.MethodGet, "/node/graph", resp.StatusCode, resp.Header, body)
	var g Graph
	if err := json.Unmarshal(body, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGraphEmpty: a node whose graph knows no node nor channel answers itself alone and no
// channel, both lists present, which the document requires.
func TestGraphEmpty(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(false)
	cfg.Graph = channels.NewGraph()
	srv := serveConfig(t, cfg)
	resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/graph", http.Header{"X-Auth-Token": {testToken}}, "")
	want := `{"nodes":[{"peerId":"` + n.PeerID().String() + `","address":"` + n.Address().Hex() +
		`","self":true,"announced":false,"connected":false}],"channels":[]}` + "\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Fatalf("got %d %s, want %s", resp.StatusCode, body, want)
	}
	loadSpec(t).checkResponse(t, http.MethodGet, "/node/graph", resp.StatusCode, resp.Header, body)
}

// TestGraphChannelsNameTheirNodes: every channel's ends are nodes of the
// answer, joined on peerId, including the channels between two other
// nodes; the node itself comes first.
func TestGraphChannelsNameTheirNodes(t *testing.T) {
	f := newSpecFixture(t)
	g := getGraph(t, f.self.config(false))
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

// TestGraphFromChannelGraph: the answer is the channel graph's snapshot as the API shows it:
// this node first, then every other node by address; each channel that is not Closed, its
// ends named by PeerId once they announced themselves and by address otherwise; a node is
// connected when the transport says so, and this node never is.
func TestGraphFromChannelGraph(t *testing.T) {
	n := newFakeNode(t)
	a, b, c := newIdentity(t), newIdentity(t), newIdentity(t)
	wallet := common.HexToAddress("0x00000000000000000000000000000000000000ff") // never announced
	lonely := common.HexToAddress("0xfff0000000000000000000000000000000000000") // only at a closed channel's end
	badKey := common.HexToAddress("0x0000000000000000000000000000000000000abc") // announced a key that is no point
	g := channels.NewGraph()
	for _, id := range []*identity.Identity{n.Identity, a, b, c} {
		g.Announce(channels.Announcement{Account: id.Address(), PublicKey: id.PublicKey(), Multiaddrs: []string{"/ip4/203.0.113.9/tcp/1"}})
	}
	g.Announce(channels.Announcement{Account: badKey, PublicKey: []byte{0x02, 1, 2, 3}})
	g.Apply(graphChannel(n.Address(), a.Address(), 100, channels.Open))
	g.Apply(graphChannel(a.Address(), b.Address(), 25e17, channels.Open))
	g.Apply(graphChannel(wallet, n.Address(), 7, channels.PendingToClose))
	g.Apply(graphChannel(b.Address(), lonely, 1, channels.Closed))
	g.Apply(graphChannel(b.Address(), a.Address(), 0, channels.Closed))
	n.transport.setPeers(peers.Info{ID: a.PeerID(), Connected: true}, peers.Info{ID: b.PeerID()}, peers.Info{ID: n.PeerID(), Connected: true})
	dir, err := peers.New(peers.Config{Self: n.PeerID(), Announcements: g, Aliases: n.aliases})
	if err != nil {
		t.Fatal(err)
	}
	cfg := n.config(false)
	cfg.Graph, cfg.Peers = g, dir

	got := getGraph(t, cfg)

	node := func(id *identity.Identity, connected bool) GraphNode {
		return GraphNode{PeerID: id.PeerID().String(), Address: id.Address().Hex(), Announced: true, Connected: connected}
	}
	self := node(n.Identity, false)
	self.Self = true
	others := []GraphNode{node(a, true), node(b, false), node(c, false),
		{PeerID: wallet.Hex(), Address: wallet.Hex()},
		{PeerID: badKey.Hex(), Address: badKey.Hex(), Announced: true}}
	slices.SortFunc(others, func(x, y GraphNode) int {
		return bytes.Compare(common.HexToAddress(x.Address).Bytes(), common.HexToAddress(y.Address).Bytes())
	})
	want := Graph{Nodes: append([]GraphNode{self}, others...)}
	type end struct {
		addr common.Address
		name string
	}
	channel := func(src, dst end, balance int64, status channels.Status) GraphChannel {
		id := channels.IDOf(src.addr, dst.addr)
		return GraphChannel{ChannelID: hexBytes(id[:]), Source: src.name, Destination: dst.name, Balance: big.NewInt(balance).String(), Status: status.String()}
	}
	me, ea, eb, ew := end{n.Address(), self.PeerID}, end{a.Address(), a.PeerID().String()}, end{b.Address(), b.PeerID().String()}, end{wallet, wallet.Hex()}
	type listed struct {
		src, dst end
		ch       GraphChannel
	}
	open := []listed{
		{me, ea, channel(me, ea, 100, channels.Open)},
		{ea, eb, channel(ea, eb, 25e17, channels.Open)},
		{ew, me, channel(ew, me, 7, channels.PendingToClose)},
	}
	// The snapshot lists channels by source then destination.
	slices.SortFunc(open, func(x, y listed) int {
		if c := x.src.addr.Cmp(y.src.addr); c != 0 {
			return c
		}
		return x.dst.addr.Cmp(y.dst.addr)
	})
	for _, o := range open {
		want.Channels = append(want.Channels, o.ch)
	}
	gotJSON, _ := json.MarshalIndent(got, "", " ")
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("graph\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}

// newIdentity is a fresh identity.
func newIdentity(tb testing.TB) *identity.Identity {
	tb.Helper()
	id, err := identity.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// announcedBy is id's announcement on chain, without addresses.
func announcedBy(id *identity.Identity) channels.Announcement {
	return channels.Announcement{Account: id.Address(), PublicKey: id.PublicKey()}
}
