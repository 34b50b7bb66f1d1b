package node

import (
	"fmt"
	"math/big"
	"strconv"
	"testing"
)

// TestOperatorMetrics: once a node runs with a chain, /node/metrics carries its build, its
// peers, the indexer's progress, its balances and its ticket values.
func TestOperatorMetrics(t *testing.T) {
	net := newTestNet(t, 2)
	n := net.nodes[0]
	bi := ReadBuildInfo()
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

func TestInTokens(t *testing.T) {
	for _, tt := range []struct {
		wei  string
		want float64
	}{{"0", 0}, {"1000000000000000000", 1}, {"20000000000000000", 0.02}, {"123456000000000000000000", 123456}} {
		v, _ := new(big.Int).SetString(tt.wei, 10)
		if got := inTokens(v); got != tt.want {
			t.Errorf("inTokens(%s) = %v, want %v", tt.wei, got, tt.want)
		}
	}
	if inTokens(nil) != 0 {
		t.Error("inTokens(nil) != 0")
	}
}
