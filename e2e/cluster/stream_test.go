package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/wait"
)

// TestStreamAtDefaults is issue 26's "cover a node can afford" on real processes: five nodes at
// the defaults (the 10/s stream, cover 1/s, 3 relayers, mixing 100 ms, autoRedeem and autoFund),
// with channels of 10 tokens (a tenth of the default channelFunding) so that they drain within a
// minute. Every node's stream spends more than its channels held at the start, its channels are
// topped up from what it redeems, its token balance holds (it pays for its stream with what it
// earns relaying), and messages sent meanwhile all arrive. A node killed with SIGKILL and
// restarted on its data streams again, tops its channels up again and delivers.
func TestStreamAtDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes for two minutes")
	}
	d := settings.Defaults()
	if d.SendRate == 0 || !d.AutoRedeem || !d.AutoFund {
		t.Fatalf("the defaults no longer stream and circulate: %+v", d)
	}
	funding := token.Tokens(10)
	c := startCluster(t, "--sendRate", fmt.Sprint(d.SendRate), "--coverRate", fmt.Sprint(d.CoverRate),
		"--relayers", fmt.Sprint(d.Relayers), "--mixDelayMean", d.MixDelayMean.String(), "--mixDelayMax", "0",
		"--autoRedeem=true", "--autoFund=true", "--channelFunding", funding.String(),
		"--restartNodes", "--restartDelay", "200ms")
	defer c.stop(30 * time.Second)

	start := map[int]*big.Int{}
	for _, n := range c.nodes {
		_, start[n.index] = c.balances(n)
	}
	channelsAtStart := new(big.Int).Mul(funding.Big(), big.NewInt(int64(len(c.nodes)-1)))
	spent := func(n node) *big.Int {
		a, err := token.Parse(strconv.FormatFloat(metricSum(t, c, n, "relayd_stream_tokens_spent_total", ""), 'f', 6, 64))
		if err != nil {
			t.Fatal(err)
		}
		return a.Big()
	}

	// Messages while the channels drain and are topped up.
	env, err := bench.LoadEnv(c.envPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), bench.Config{Env: env, Senders: []int{1, 2}, Recipients: []int{4, 5},
		Messages: 60, Rate: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rejected != 0 || rep.Sent != 60 || rep.Delivered != rep.Sent {
		t.Errorf("while streaming: %d sent, %d rejected, %d delivered of 60", rep.Sent, rep.Rejected, rep.Delivered)
	}

	wait.For(t, func() bool {
		for _, n := range c.nodes {
			if spent(n).Cmp(channelsAtStart) <= 0 {
				return false
			}
		}
		return true
	}, 3*time.Minute, "every node's stream spent more than its channels held at the start")

	for _, n := range c.nodes {
		_, wallet := c.balances(n)
		var stats struct{ RedeemedValue string }
		c.mustCall(n, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &stats)
		redeemed := parseWei(t, stats.RedeemedValue)
		t.Logf("node %d: stream spent %s, redeemed %s, wallet %s (from %s)", n.index, token.Of(spent(n)), token.Of(redeemed),
			token.Of(wallet), token.Of(start[n.index]))
		if redeemed.Sign() == 0 {
			t.Errorf("node %d redeemed nothing", n.index)
		}
		// Its channels pay for its stream and for what it relays (the next hop's tickets): far
		// more than they held at the start, topped up from the wallet (conservation: what the
		// wallet lost and what it redeemed). What it earned relaying paid for that: the wallet
		// holds at least 80 % of what it had.
		toppedUp := new(big.Int).Add(new(big.Int).Sub(start[n.index], wallet), redeemed)
		if toppedUp.Cmp(channelsAtStart) <= 0 {
			t.Errorf("node %d topped its channels up by %s only", n.index, token.Of(toppedUp))
		}
		if floor := new(big.Int).Div(new(big.Int).Mul(start[n.index], big.NewInt(8)), big.NewInt(10)); wallet.Cmp(floor) < 0 {
			t.Errorf("node %d's token balance fell from %s to %s with %s topped up: its earnings do not pay for its stream",
				n.index, token.Of(start[n.index]), token.Of(wallet), token.Of(toppedUp))
		}
		if skipped := metricSum(t, c, n, "relayd_stream_drops_skipped_total", "no_balance"); skipped > 10 {
			t.Errorf("node %d skipped %v stream packets for want of a funded channel", n.index, skipped)
		}
	}

	// kill -9 of node 2 while it streams: restarted on its data, its stream spends more than all
	// its channels can hold (autoFund keeps each at most at the funding; its counters start from
	// zero), so its channels were topped up after the restart, and what it sends arrives.
	n := c.nodes[1]
	c.signal(n, syscall.SIGKILL)
	c.awaitRestart(n)
	wait.For(t, func() bool { return spent(n).Cmp(channelsAtStart) > 0 }, 3*time.Minute,
		"node 2 streams again after kill -9 and spends more than its channels hold")
	rep, err = bench.Run(context.Background(), bench.Config{Env: env, Senders: []int{2}, Recipients: []int{5},
		Messages: 20, Rate: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 20 || rep.Delivered != rep.Sent {
		t.Errorf("after the restart: %d sent, %d delivered of 20", rep.Sent, rep.Delivered)
	}
	if skipped := metricSum(t, c, n, "relayd_stream_drops_skipped_total", "no_balance"); skipped > 10 {
		t.Errorf("node 2 skipped %v stream packets after its restart for want of a funded channel", skipped)
	}
}

// metricSum is the sum of node n's samples of the metric name whose labels contain label.
func metricSum(t *testing.T, c *testCluster, n node, name, label string) float64 {
	t.Helper()
	status, body := c.request(n, http.MethodGet, "/node/metrics", "", http.Header{"X-Auth-Token": {c.token}})
	if status != http.StatusOK {
		t.Fatalf("node %d metrics: %d", n.index, status)
	}
	total := 0.0
	err := bench.ScanSamples(bytes.NewReader(body), func(got, labels string) bool { return got == name && strings.Contains(labels, label) },
		func(_, _ string, v float64) { total += v })
	if err != nil {
		t.Fatal(err)
	}
	return total
}
