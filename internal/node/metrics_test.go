package node

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/relayd/relayd/internal/version"
)

// TestOperatorMetrics: once a node runs with a chain, /node/metrics carries its build, its
// peers, the indexer's progress, its balances and its ticket values.
func TestOperatorMetrics(t *testing.T) {
	net := newTestNet(t, 2)
	n := net.nodes[0]
	bi := version.ReadBuildInfo()
	build := fmt.Sprintf(`relayd_build_info{go=%q,revision=%q,version=%q}`, bi.Go, bi.Revision, bi.Version)
	num := func(prefix string) float64 {
		v := net.metric(n, prefix)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return -1
		}
		return f
	}
	net.eventually("the operator metrics are exported", func() bool {
		return num(build) == 1 &&
			num(`relayd_peers{state="announced"}`) == 2 &&
			num(`relayd_peers{state="connected"}`) >= 1 &&
			num(`relayd_peers{state="known"}`) >= 1 &&
			num("relayd_chain_head_block") > 0 &&
			num("relayd_chain_indexed_block") > 0 &&
			num("relayd_chain_indexed_block") <= num("relayd_chain_head_block") &&
			num(`relayd_balance_tokens{currency="token"}`) == 100 &&
			num(`relayd_balance_tokens{currency="native"}`) > 9 && // 10 funded, less the announcement's gas
			num(`relayd_ticket_value_tokens{state="unredeemed"}`) == 0 &&
			num(`relayd_ticket_value_tokens{state="redeemed"}`) == 0
	})
}
