package discovery

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/peers"
)

// peersHost is a Host whose peers a test sets.
type peersHost struct{ list []peers.Info }

func (h *peersHost) AddPeer(peer.AddrInfo) error { return nil }
func (h *peersHost) Addrs() []ma.Multiaddr       { return nil }
func (h *peersHost) Peers() []peers.Info         { return h.list }

// channelGraph is a fakeGraph with this node's channels.
type channelGraph struct {
	fakeGraph
	in, out []channels.Channel
}

func (g channelGraph) Incoming(common.Address) []channels.Channel { return g.in }
func (g channelGraph) Outgoing(common.Address) []channels.Channel { return g.out }

func TestChannelPeersGauge(t *testing.T) {
	self, selfAnn := node(t, "1")
	me := selfAnn.Account
	bob, bobAnn := node(t, "2")
	carol, carolAnn := node(t, "3")
	dave, daveAnn := node(t, "4")
	_, erinAnn := node(t, "5")
	_, frankAnn := node(t, "6")
	host := &peersHost{list: []peers.Info{
		{ID: bob, Quality: 0.9},
		{ID: carol, Quality: 0.9, Down: true}, // a send failed since its last heartbeat
		{ID: dave, Quality: 0.3},              // missed most recent heartbeats
	}}
	open := func(src, dst common.Address) channels.Channel {
		return channels.Channel{Source: src, Destination: dst, Balance: big.NewInt(1), Status: channels.Open}
	}
	closed := open(me, frankAnn.Account)
	closed.Status = channels.Closed
	graph := channelGraph{fakeGraph: fakeGraph{},
		out: []channels.Channel{open(me, bobAnn.Account), open(me, carolAnn.Account), open(me, erinAnn.Account), closed},
		in:  []channels.Channel{open(bobAnn.Account, me), open(daveAnn.Account, me)}, // bob counts once
	}
	dir, _ := peers.New(peers.Config{Self: self, Aliases: noAliases{}})
	reg := prometheus.NewRegistry()
	if _, err := New(Config{Host: host, Directory: dir, Chain: &fakeChain{balance: new(big.Int)}, Graph: graph,
		CaughtUp: func(context.Context) error { return nil }, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "relayd_channel_peers" {
			for _, m := range mf.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	// bob reachable; carol down, dave below UnreachableQuality, erin unknown to the transport;
	// frank's channel is closed.
	if got["reachable"] != 1 || got["unreachable"] != 3 || len(got) != 2 {
		t.Errorf("relayd_channel_peers = %v, want reachable 1, unreachable 3", got)
	}
}
