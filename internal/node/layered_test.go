package node

import (
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"time"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/topology"
)

// TestLayeredNetwork: six nodes of a network with two layers of two (epochs of 200 blocks). In
// epoch 0 nobody is a candidate (all announced during it) and nothing is drawn; at epoch 1 every
// node draws the same layers, the strategy opens the layered channels (a first-layer relayer to
// the other and to the second layer, everyone else to the first layer), and messages go through
// the layers to a first-layer relayer and to nodes no relayer has a channel to, also from a
// relayer; at epoch 2 the nodes draw again, alike, a message goes at once (through the new
// layers or, while their channels open, the previous epoch's), and then across the new layers.
func TestLayeredNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain and six nodes")
	}
	ch := startDevChain(t)
	nw, err := networks.Lookup("local", "")
	if err != nil {
		t.Fatal(err)
	}
	nw.Name, nw.Topology = "layered", &networks.Topology{Layers: 2, Width: 2, EpochBlocks: 200, RelayerCoverRate: networks.DefaultRelayerCoverRate}
	file := filepath.Join(t.TempDir(), "networks.json")
	if err := networks.Append(file, nw); err != nil {
		t.Fatal(err)
	}
	net := &testNet{t: t, chain: ch}
	defer net.logRelayMetricsIfFailed()
	defer logLayeredViews(t, net) // runs first: while the nodes are up
	for range 6 {
		cfg := fundedNodeConfig(t, ch, tokens(100))
		cfg.ChannelsContract, cfg.Network, cfg.NetworksFile = "", "layered", file
		cfg.Strategy, cfg.ChannelFunding = "promiscuous", "5"
		cfg.StrategyInterval, cfg.HeartbeatInterval = 200*time.Millisecond, 200*time.Millisecond
		net.nodes = append(net.nodes, startNode(t, cfg))
	}
	net.eventually("every node sees every announcement", func() bool {
		for _, n := range net.nodes {
			if nodeInfo(n).PeersAnnounced != 6 {
				return false
			}
		}
		return true
	})
	for _, n := range net.nodes {
		if n.layers == nil || n.layers.Topology() != nil {
			t.Fatal("a node has no layers view, or drew layers in epoch 0")
		}
	}
	byAddr := map[common.Address]*Node{}
	for _, n := range net.nodes {
		byAddr[n.id.Address()] = n
	}
	frames := map[*Node]*frames{}
	for _, n := range net.nodes {
		frames[n] = watch(t, n)
	}
	for epoch := uint64(1); epoch <= 2; epoch++ {
		for h, _ := net.nodes[0].chain.client.BlockNumber(t.Context()); h < epoch*200; h, _ = net.nodes[0].chain.client.BlockNumber(t.Context()) {
			ch.Seal()
		}
		net.eventually(fmt.Sprintf("every node drew epoch %d", epoch), func() bool {
			for _, n := range net.nodes {
				if top := n.layers.Topology(); top == nil || top.Epoch() != epoch {
					return false
				}
			}
			return true
		})
		top := net.nodes[0].layers.Topology()
		for _, n := range net.nodes[1:] {
			if !reflect.DeepEqual(n.layers.Topology().Layers(), top.Layers()) {
				t.Fatalf("epoch %d: nodes drew other layers", epoch)
			}
		}
		for _, n := range net.nodes { // GET /node/info says where the node is
			var info api.Info
			net.mustCall(n, http.MethodGet, "/node/info", "", http.StatusOK, &info)
			ti := info.Topology
			k, in := top.LayerOf(string(n.id.Address().Bytes()))
			if ti == nil || ti.Layers != 2 || ti.Epoch == nil || *ti.Epoch != epoch || in != (ti.Layer != nil) || (in && *ti.Layer != k+1) {
				t.Fatalf("epoch %d: /node/info's topology %+v, the node in layer %d (%v)", epoch, ti, k, in)
			}
		}
		layer := func(k int) []*Node {
			var out []*Node
			for _, id := range top.Layer(k) {
				out = append(out, byAddr[common.BytesToAddress([]byte(id))])
			}
			return out
		}
		var outside []*Node
		for _, n := range net.nodes {
			if _, ok := top.LayerOf(string(n.id.Address().Bytes())); !ok {
				outside = append(outside, n)
			}
		}
		if epoch > 1 { // at once, before the new channels: through the new layers or the previous
			text := fmt.Sprintf("epoch %d at once", epoch)
			net.mustCall(outside[0], http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, outside[1].id.PeerID()), http.StatusAccepted, nil)
			expectMessage(t, frames[outside[1]], text)
		}
		net.eventually(fmt.Sprintf("epoch %d's channels are open", epoch), func() bool {
			for _, n := range net.nodes {
				open := map[common.Address]bool{}
				for _, c := range net.nodes[0].chain.graph.Outgoing(n.id.Address()) {
					open[c.Destination] = c.Status == channels.Open
				}
				for _, p := range peersOf(top, n) {
					if !open[p] {
						return false
					}
				}
			}
			return true
		})
		if epoch == 1 { // the relayers send their own loops through the layers; the others none (coverRate 0)
			net.eventually("relayers' loops back", func() bool {
				return net.metricFloat(layer(0)[0], "relayd_cover_packets_returned_total") >= 3 && net.metricFloat(layer(1)[0], "relayd_cover_packets_returned_total") >= 3
			})
			for _, n := range outside {
				if sent := net.metricFloat(n, "relayd_cover_packets_sent_total"); sent != 0 {
					t.Fatalf("a node outside the layers sent %g loops", sent)
				}
			}
		}
		x, y, first, last := outside[0], outside[1], layer(0)[0], layer(1)[0]
		for _, m := range []struct {
			from, to *Node
			text     string
		}{{x, first, "to a first-layer relayer"}, {x, y, "to a node outside"}, {last, y, "from a relayer"}} {
			text := fmt.Sprintf("epoch %d: %s", epoch, m.text)
			net.mustCall(m.from, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, m.to.id.PeerID()), http.StatusAccepted, nil)
			expectMessage(t, frames[m.to], text)
		}
	}
}

// logLayeredViews logs, when t failed, what each node's paths were drawn from: its layers, its
// outgoing channels and its peers' heartbeat qualities.
func logLayeredViews(t *testing.T, net *testNet) {
	if !t.Failed() {
		return
	}
	for i, n := range net.nodes {
		if top := n.layers.Topology(); top != nil {
			k, in := top.LayerOf(string(n.id.Address().Bytes()))
			t.Logf("node %d (%s): epoch %d, layer %d (%v), layers %x", i, n.id.Address(), top.Epoch(), k, in, top.Layers())
		}
		for _, c := range n.chain.graph.Outgoing(n.id.Address()) {
			t.Logf("node %d: channel to %s %s, epoch %d, balance %s", i, c.Destination, c.Status, c.Epoch, c.Balance)
		}
		for _, p := range n.host.Peers() {
			t.Logf("node %d: peer %s quality %.2f down %v", i, p.ID, p.Quality, p.Down)
		}
	}
}

// peersOf is the peers n keeps channels to under top: the first layer's, and for a first-layer
// relayer the second layer's.
func peersOf(top *topology.Topology, n *Node) []common.Address {
	var out []common.Address
	for _, id := range top.Layer(0) {
		if a := common.BytesToAddress([]byte(id)); a != n.id.Address() {
			out = append(out, a)
		}
	}
	if k, ok := top.LayerOf(string(n.id.Address().Bytes())); ok && k == 0 {
		for _, id := range top.Layer(1) {
			out = append(out, common.BytesToAddress([]byte(id)))
		}
	}
	return out
}
