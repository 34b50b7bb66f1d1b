package cluster_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
)

// TestClusterLotteryTickets runs a cluster whose contract sets the network minimum win
// probability to 0.1 (`relayd cluster --minWinProb 0.1`): the nodes follow it, their tickets
// carry "0.1" and a face ten times their value, relayers keep only the winners (about one in
// ten), and a relayer redeems them.
func TestClusterLotteryTickets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes")
	}
	c := startCluster(t, "--minWinProb", "0.1")
	sender, recipient := c.nodes[0], c.nodes[len(c.nodes)-1]
	const messages = 150
	for i := range messages {
		c.sendMessage(sender, recipient, fmt.Sprintf("lottery %d", i))
	}
	type stats struct {
		Pending, Unredeemed, Redeemed, WinningTickets, LosingTickets uint64
		WinningValue, RedeemedValue                                  string
	}
	statsOf := func(n node) (s stats) {
		c.mustCall(n, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &s)
		return s
	}
	// Every message is relayed twice; each relayer's ticket is settled (won or lost) once the
	// next hop acknowledges the packet.
	var won, lost uint64
	c.eventually("every relayed packet's ticket is won or lost", func() bool {
		won, lost = 0, 0
		for _, n := range c.nodes {
			if n == sender || n == recipient {
				continue
			}
			s := statsOf(n)
			won += s.WinningTickets
			lost += s.LosingTickets
		}
		return won+lost == 2*messages
	})
	// 300 tickets at p = 0.1: 30 winners on average, σ ≈ 5.2; 5σ either side.
	if math.Abs(float64(won)-30) > 26 || lost == 0 {
		t.Fatalf("%d won and %d lost of %d relayer tickets at p = 0.1", won, lost, 2*messages)
	}
	t.Logf("%d of %d relayer tickets won at p = 0.1", won, 2*messages)
	var relayer node
	for _, n := range c.nodes {
		if n != sender && n != recipient && statsOf(n).Unredeemed > 0 {
			relayer = n
			break
		}
	}
	if relayer.peerID == "" {
		t.Fatal("no relayer holds a winning ticket")
	}
	list := c.tickets(relayer)
	for _, tk := range list {
		face := parseWei(t, tk.Amount)
		if tk.WinProb != "0.1" || face.Cmp(cent) <= 0 { // the face of a 0.01 ticket at 0.1 is 0.1
			t.Fatalf("stored ticket %+v: want winProb 0.1 and a face above 0.01", tk)
		}
	}
	before := statsOf(relayer)
	c.mustCall(relayer, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	after := statsOf(relayer)
	if after.Unredeemed != 0 || after.Redeemed != before.Redeemed+uint64(len(list)) {
		t.Fatalf("redeeming %d winners: statistics before %+v, after %+v", len(list), before, after)
	}
}
