package cluster_test

import (
	"testing"
	"time"
)

// TestClusterWithBlockTime runs the settlement steps of the suite on a dev chain that seals a
// block every second, as a real chain does (`relayd cluster --blockTime 1s`): every transaction
// waits for the next block. Paid messages are ticketed, tickets redeemed and holdings settle,
// channels are closed and routed around, and withdrawals arrive, on real node processes.
func TestClusterWithBlockTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes")
	}
	start := time.Now()
	c := startCluster(t, "--blockTime", "1s")
	t.Logf("cluster on 1 s blocks ready in %v", time.Since(start).Round(time.Millisecond))
	for _, s := range []struct {
		name string
		run  func(*testing.T, *testCluster)
	}{
		{"PaidMessagesOverTwoRelayers", testPaidMessages},
		{"ClosedChannelsAreRoutedAround", testRouteAround},
		{"Withdraw", testWithdraw},
	} {
		if !t.Run(s.name, func(t *testing.T) {
			c.t = t
			defer func() { c.t = nil }()
			s.run(t, c)
		}) {
			break // later steps rely on this one's effects
		}
	}
	c.t = t
	t.Logf("whole run on 1 s blocks: %v", time.Since(start).Round(time.Millisecond))
}
