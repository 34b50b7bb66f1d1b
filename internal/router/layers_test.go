package router

import (
	"context"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/peers"
)

// announced announces n new accounts in g, each with a good heartbeat, and returns them with
// their PeerIds and the transport that knows them.
func announced(t *testing.T, g *channels.Graph, n int) (accts []common.Address, ids map[common.Address]peer.ID, infos fakeTransport) {
	t.Helper()
	ids = map[common.Address]peer.ID{}
	for range n {
		key, _ := crypto.GenerateKey()
		pub := crypto.CompressPubkey(&key.PublicKey)
		id, err := identity.PeerIDFromPubKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		a := crypto.PubkeyToAddress(key.PublicKey)
		accts, ids[a] = append(accts, a), id
		g.Announce(channels.Announcement{Account: a, PublicKey: pub, Multiaddrs: []string{"/ip4/203.0.113.1/tcp/9091"}})
		infos = append(infos, peers.Info{ID: id, Quality: 1})
	}
	return accts, ids, infos
}

// asIs is a Capacity at the channels' balances.
type asIs struct {
	g    *channels.Graph
	self common.Address
}

func (c asIs) Capacity(dst common.Address) (uint256.Int, bool) {
	ch, ok := c.g.Channel(c.self, dst)
	if !ok {
		return uint256.Int{}, false
	}
	var v uint256.Int
	v.SetFromBig(ch.Balance)
	return v, true
}

func (c asIs) CapacityOf(b *uint256.Int) uint256.Int { return *b }

// TestLayeredPaths: with Config.Layers the router's paths, loops and reply blocks cross one
// relayer of each layer in order, though nearly every node has channels to every other (free
// routes mix them), and need no channel from the last layer into the recipient; before the
// layers are drawn there is no path.
func TestLayeredPaths(t *testing.T) {
	g := channels.NewGraph()
	// 0: self; 1, 2: layer 0; 3, 4: layer 1; 5: recipient; 6: another sender
	accts, ids, infos := announced(t, g, 7)
	for i, s := range accts {
		for j, d := range accts {
			// The last layer (3, 4) has no channel into the recipients (5, 0 for loops and
			// reply blocks): a layered network needs none.
			// Self (0) has none to 6, a first-layer relayer of the next epoch below.
			if s != d && !((i == 3 || i == 4) && (j == 5 || j == 0)) && !(i == 0 && j == 6) {
				g.Apply(channels.Channel{ID: channels.IDOf(s, d), Source: s, Destination: d, Balance: big.NewInt(1e18), Epoch: 1, Status: channels.Open})
			}
		}
	}
	dir, err := peers.New(peers.Config{Self: ids[accts[0]], Announcements: g, Aliases: noAliases{}})
	if err != nil {
		t.Fatal(err)
	}
	layersOf := func(layerOf map[common.Address]int) path.Layers {
		return path.Layers{Count: 2, Allowed: func(pos int, a common.Address) bool { k, ok := layerOf[a]; return ok && k == pos }}
	}
	layerOf := map[common.Address]int{accts[1]: 0, accts[2]: 0, accts[3]: 1, accts[4]: 1}
	var drawn []path.Layers
	layers := func() []path.Layers { return drawn }
	r := &Router{cfg: Config{Transport: infos, Directory: dir, Graph: g, Capacity: asIs{g, accts[0]}, Relayers: func() int { return 3 }, Layers: layers},
		self: accts[0], rng: mrand.New(mrand.NewPCG(1, 2))}
	if _, err := r.pathTo(accts[5]); !errors.Is(err, ErrNoPath) {
		t.Fatalf("before the draw: %v, want ErrNoPath", err)
	}
	drawn = []path.Layers{layersOf(layerOf)}
	inLayer := func(id peer.ID, k int) bool {
		for a, l := range layerOf {
			if ids[a] == id {
				return l == k
			}
		}
		return false
	}
	for range 50 {
		for _, to := range []common.Address{accts[5], accts[0]} { // a message, a loop
			hops, err := r.pathTo(to)
			if err != nil {
				t.Fatal(err)
			}
			if len(hops) != 3 || !inLayer(hops[0], 0) || !inLayer(hops[1], 1) || hops[2] != ids[to] {
				t.Fatalf("path %v to %s does not cross the layers", hops, ids[to])
			}
		}
		_, err := r.newReplyBlock(t.Context(), ids[accts[6]], func(_ context.Context, hops []peer.ID) ([]byte, error) {
			if len(hops) != 2 || !inLayer(hops[0], 0) || !inLayer(hops[1], 1) {
				t.Fatalf("reply block over %v does not cross the layers", hops)
			}
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A new epoch whose first layer self has no channel to yet: no path through it alone; with
	// the previous epoch's layers after it (the grace), paths cross those.
	next := layersOf(map[common.Address]int{accts[6]: 0, accts[3]: 1, accts[4]: 1})
	drawn = []path.Layers{next}
	if _, err := r.pathTo(accts[5]); !errors.Is(err, ErrNoPath) {
		t.Fatalf("no channel into the new first layer: %v, want ErrNoPath", err)
	}
	drawn = []path.Layers{next, layersOf(layerOf)}
	for range 20 {
		hops, err := r.pathTo(accts[5])
		if err != nil || len(hops) != 3 || !inLayer(hops[0], 0) || !inLayer(hops[1], 1) {
			t.Fatalf("path %v (%v), want one through the previous epoch's layers", hops, err)
		}
	}
	// Free routes on the same graph: three relayers, any of them.
	r.cfg.Layers = nil
	mixed := false
	for range 50 {
		hops, err := r.pathTo(accts[5])
		if err != nil {
			t.Fatal(err)
		}
		mixed = mixed || len(hops) != 3 || !inLayer(hops[0], 0) || !inLayer(hops[1], 1)
	}
	if !mixed {
		t.Fatal("free routes kept to the layers: the test proves nothing")
	}
}
