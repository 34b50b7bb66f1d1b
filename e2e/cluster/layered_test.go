package cluster_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestLayeredCluster: `relayd cluster --layers 2 --layerWidth 2` on five nodes. The nodes draw
// the same layers at epoch 1 (the cluster seals blocks up to it) and their strategies open the
// layered channels: a first-layer relayer to the other first-layer relayer and to the second
// layer (3), a second-layer relayer to the first layer (2), a node outside the layers to the
// first layer only (2); a free-routes network would give every node 4. Messages from the node
// outside the layers to every relayer, and back, reach their recipient.
func TestLayeredCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := startCluster(t, "--topology", "sparse", "--layers", "2", "--layerWidth", "2", "--epochBlocks", "400")
	// open counts n's open channels: outgoing, incoming.
	open := func(n node) (out, in int) {
		var chs struct {
			Outgoing, Incoming []struct{ Status string }
		}
		c.mustCall(n, http.MethodGet, "/channels", "", http.StatusOK, &chs)
		for _, ch := range chs.Outgoing {
			if ch.Status == "Open" {
				out++
			}
		}
		for _, ch := range chs.Incoming {
			if ch.Status == "Open" {
				in++
			}
		}
		return out, in
	}
	want := []int{2, 2, 2, 3, 3}
	var got []int
	outside := -1 // the node outside the layers: no channel comes into it
	c.waitFor("the layered channels", 60*time.Second, func() bool {
		got, outside = got[:0], -1
		for i, n := range c.nodes {
			out, in := open(n)
			got = append(got, out)
			if in == 0 {
				outside = i
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want) && outside >= 0
	})
	// With layers of two, the node outside them reaches every other node, and every relayer
	// reaches it (between two relayers of one layer there is no path: the layer's other
	// relayer is the sender or the recipient).
	var pairs [][2]node
	for i, n := range c.nodes {
		if i != outside {
			pairs = append(pairs, [2]node{c.nodes[outside], n}, [2]node{n, c.nodes[outside]})
		}
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		body := fmt.Sprintf("layered %d to %d", from.index, to.index)
		// A path exists once the sender indexed the layers' channels and heard from their relayers.
		var last string
		if !waitUntilCtx(t.Context(), 30*time.Second, func() bool {
			status, answer := c.request(from, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, body, to.peerID), http.Header{"X-Auth-Token": {c.token}})
			last = fmt.Sprintf("%d %s", status, answer)
			return status == http.StatusAccepted
		}) {
			t.Fatalf("no path from node %d to node %d within 30 s (outside the layers: node %d): %s", from.index, to.index, outside+1, last)
		}
		c.waitFor(body, 30*time.Second, func() bool {
			return slices.ContainsFunc(c.mustInbox(to), func(k kept) bool { return k.Body == body })
		})
	}
}
