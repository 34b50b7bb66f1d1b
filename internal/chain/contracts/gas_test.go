package contracts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"

	"github.com/relayd/relayd/internal/tickets"
)

// gasSteps are the settlement steps TestSettlementGas measures, with a ceiling under Osaka rules
// (about 25 % above the measured figure) so that a much more expensive change is noticed.
var gasSteps = []struct {
	what         string
	osakaCeiling uint64
}{
	{"deploy RelayToken", 1_000_000},
	{"deploy RelayChannels", 2_450_000},
	{"announce", 40_000},
	{"fundChannel (open)", 120_000},
	{"fundChannel (top up)", 60_000},
	{"redeemTicket", 90_000},
	{"redeemTicket (destination held no tokens)", 110_000},
	{"initiateChannelClosure", 40_000},
	{"finalizeChannelClosure", 60_000},
	{"closeIncomingChannel", 60_000},
}

// TestSettlementGas runs the settlement life cycle and logs the gas of each step, under Osaka
// rules and under the dev chain's default rules, as the markdown table in BENCHMARKS.md
// ("Settlement gas"):
//
//	go test -run TestSettlementGas -v ./internal/chain/contracts/
//
// Gas is deterministic for these fixed keys and inputs.
func TestSettlementGas(t *testing.T) {
	osaka := settlementGas(t, osakaRules)
	dev := settlementGas(t)
	var b strings.Builder
	b.WriteString("\n| step | gas, Osaka rules | gas, dev-chain default rules |\n|---|---:|---:|\n")
	for _, s := range gasSteps {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", s.what, thousands(osaka[s.what]), thousands(dev[s.what]))
		if osaka[s.what] > s.osakaCeiling {
			t.Errorf("%s used %d gas under Osaka rules, ceiling %d", s.what, osaka[s.what], s.osakaCeiling)
		}
	}
	t.Log(b.String())
}

func settlementGas(t *testing.T, options ...func(*node.Config, *ethconfig.Config)) map[string]uint64 {
	t.Helper()
	e := newEnv(t, options...)
	pub := crypto.FromECDSAPub(&e.alice.key.PublicKey)[1:]
	e.must(e.alice, "announce", e.channels, channelsABI.PackAnnounce(pub, []byte("/ip4/127.0.0.1/tcp/9091")))
	e.must(e.alice, "fundChannel (open)", e.channels, channelsABI.PackFundChannel(e.bob.addr, tokens(1)))
	e.must(e.alice, "fundChannel (top up)", e.channels, channelsABI.PackFundChannel(e.bob.addr, tokens(1)))
	e.must(e.alice, "fundChannel (open)", e.channels, channelsABI.PackFundChannel(e.dave.addr, tokens(1)))
	amount := tickets.AmountFor(2)
	redeem := func(what string, dst *actor, index uint64, seed byte) {
		p := newPoR(t, seed)
		tk := e.ticket(e.alice, dst, e.alice, amount.ToBig(), index, 1, p)
		e.must(dst, what, e.channels, channelsABI.PackRedeemTicket(e.alice.addr, toContract(tk), p.response))
	}
	redeem("redeemTicket", e.bob, 1, 20)
	redeem("redeemTicket", e.bob, 2, 21)
	redeem("redeemTicket (destination held no tokens)", e.dave, 1, 22)
	e.must(e.alice, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
	e.advance(closurePeriod)
	e.must(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
	e.must(e.dave, "closeIncomingChannel", e.channels, channelsABI.PackCloseIncomingChannel(e.alice.addr))
	for _, s := range gasSteps {
		if _, ok := e.gas[s.what]; !ok {
			t.Fatalf("no gas recorded for %q", s.what)
		}
	}
	return e.gas
}

func thousands(v uint64) string {
	s := fmt.Sprint(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
