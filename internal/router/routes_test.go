package router

import (
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/peers"
)

// TestYoungChannelsWait: a channel this node saw open less than ChannelSettle ago carries a path
// only where no other path exists (its receiver may not have indexed it yet and would drop the
// packet); channels open when the router first looked are not young; once settled, or reopened
// in a new epoch (young again), paths take them as any other.
func TestYoungChannelsWait(t *testing.T) {
	g := channels.NewGraph()
	accts, ids, infos := announced(t, g, 5) // 0: self; 1, 3: first relayers; 2: second relayer; 4: recipient
	open := func(s, d int, epoch uint32, status channels.Status) {
		g.Apply(channels.Channel{ID: channels.IDOf(accts[s], accts[d]), Source: accts[s], Destination: accts[d],
			Balance: big.NewInt(1e18), Epoch: epoch, Status: status})
	}
	open(0, 1, 1, channels.Open)
	open(1, 2, 1, channels.Open)
	open(2, 4, 1, channels.Open)
	dir, err := peers.New(peers.Config{Self: ids[accts[0]], Announcements: g, Aliases: noAliases{}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	r := &Router{cfg: Config{Transport: infos, Directory: dir, Graph: g, Capacity: asIs{g, accts[0]}, Relayers: func() int { return 2 }},
		self: accts[0], rng: mrand.New(mrand.NewPCG(1, 2)), clock: func() time.Time { return now }}
	firsts := func(n int) map[peer.ID]int {
		t.Helper()
		seen := map[peer.ID]int{}
		for range n {
			hops, err := r.pathTo(accts[4])
			if err != nil {
				t.Fatal(err)
			}
			if len(hops) != 3 || hops[1] != ids[accts[2]] || hops[2] != ids[accts[4]] {
				t.Fatalf("path %v", hops)
			}
			seen[hops[0]]++
		}
		return seen
	}
	if seen := firsts(5); seen[ids[accts[1]]] != 5 {
		t.Fatalf("first relayers %v, want 1 only: channels open at the first look are not young", seen)
	}
	// 0 → 3 → 2 opens: as good as 0 → 1 → 2, but young.
	open(0, 3, 1, channels.Open)
	open(3, 2, 1, channels.Open)
	if seen := firsts(50); seen[ids[accts[3]]] != 0 {
		t.Fatalf("first relayers %v: a young channel carried a path while a settled one was there", seen)
	}
	// The only path is young: taken at once.
	open(0, 1, 1, channels.PendingToClose)
	if seen := firsts(10); seen[ids[accts[3]]] != 10 {
		t.Fatalf("first relayers %v, want 3 only: the young channels are the only path", seen)
	}
	// Settled: 0 → 3 carries paths as any other; 0 → 1 reopened in a new epoch is young now.
	now = now.Add(ChannelSettle)
	open(0, 1, 2, channels.Open)
	if seen := firsts(50); seen[ids[accts[3]]] != 50 {
		t.Fatalf("first relayers %v, want 3 only: 0 → 1 reopened is young", seen)
	}
	now = now.Add(ChannelSettle)
	if seen := firsts(50); seen[ids[accts[1]]] == 0 || seen[ids[accts[3]]] == 0 {
		t.Fatalf("first relayers %v, want both once both channels settled", seen)
	}
}
