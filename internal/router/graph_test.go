package router

import (
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
)

type fakeTransport []peers.Info

func (f fakeTransport) Peers() []peers.Info  { return f }
func (f fakeTransport) PeersVersion() uint64 { return 1 }

type noAliases struct{}

func (noAliases) Aliases() ([][2]string, error)      { return nil, nil }
func (noAliases) Alias(string) (string, bool, error) { return "", false, nil }
func (noAliases) SetAlias(string, string) error      { return nil }
func (noAliases) DeleteAlias(string) (bool, error)   { return false, nil }

// TestRelayedPeersAreMarked: the path graph marks a relayer the transport reaches only over a
// circuit relay, or one that announced only relay addresses, as Relayed (paths weigh it less);
// a directly reached one is not.
func TestRelayedPeersAreMarked(t *testing.T) {
	g := channels.NewGraph()
	var ids []peer.ID
	var infos fakeTransport
	addrs := [][]string{{"/ip4/203.0.113.1/tcp/9091"}, {"/ip4/203.0.113.2/tcp/9091"}, {"/ip4/203.0.113.3/tcp/9091/p2p/x/p2p-circuit"}}
	reach := []peers.Reach{peers.ReachDirect, peers.ReachRelayed, peers.ReachNone}
	for i := range 3 {
		key, _ := crypto.GenerateKey()
		pub := crypto.CompressPubkey(&key.PublicKey)
		id, err := identity.PeerIDFromPubKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		g.Announce(channels.Announcement{Account: crypto.PubkeyToAddress(key.PublicKey), PublicKey: pub, Multiaddrs: addrs[i]})
		infos = append(infos, peers.Info{ID: id, Quality: 1, Reach: reach[i]})
	}
	selfKey, _ := crypto.GenerateKey()
	self, _ := identity.PeerIDFromPubKey(crypto.CompressPubkey(&selfKey.PublicKey))
	dir, err := peers.New(peers.Config{Self: self, Announcements: g, Aliases: noAliases{}})
	if err != nil {
		t.Fatal(err)
	}
	r := &Router{cfg: Config{Transport: infos, Directory: dir}, self: crypto.PubkeyToAddress(selfKey.PublicKey)}
	snap := g.Snapshot()
	graph, _ := r.routeGraph(snap, snap.Channels())
	want := map[peer.ID]bool{ids[0]: false, ids[1]: true, ids[2]: true}
	if len(graph.Nodes) != 3 {
		t.Fatalf("graph has %d nodes, want 3", len(graph.Nodes))
	}
	for _, n := range graph.Nodes {
		if n.Relayed != want[n.Peer] {
			t.Errorf("node %s: Relayed %v, want %v", n.Peer, n.Relayed, want[n.Peer])
		}
	}
}
