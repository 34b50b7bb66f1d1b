package contracts_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"

	"github.com/relayd/relayd/internal/por"
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
	{"redeemTickets: 100 tickets of one channel, per ticket", 19_000},
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
	// Issue 15's target: redeeming in batches costs at most a quarter of redeeming one by one.
	for name, g := range map[string]map[string]uint64{"Osaka": osaka, "dev-chain default": dev} {
		batch, single := g["redeemTickets: 100 tickets of one channel, per ticket"], g["redeemTicket"]
		if 4*batch > single {
			t.Errorf("%s rules: a batched ticket costs %d gas, more than a quarter of redeemTicket's %d", name, batch, single)
		}
	}
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
	batchGasPerTicket(e)
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

// batchGasPerTicket redeems 100 winning tickets of alice→carol at win probability 0.01 (face
// value 1 token, each with its own challenge, indexes with the gaps of the losing tickets a
// relayer drops) in one redeemTickets call and records its gas divided by 100.
func batchGasPerTicket(e *env) {
	e.t.Helper()
	const n = 100
	const winProb = 720575940379278 // round(0.01 · 2^56) − 1
	e.fund(e.alice, e.carol, tokens(n+1))
	var items []batchItem
	index := uint64(0)
	for w := range n {
		r, err := por.DeriveOwn([32]byte(crypto.Keccak256([]byte(fmt.Sprintf("batch gas %d", w)))))
		if err != nil {
			e.t.Fatal(err)
		}
		challenge, err := por.ChallengeOf(r)
		if err != nil {
			e.t.Fatal(err)
		}
		tk := e.ticket(e.alice, e.carol, e.alice, tokens(1), 1, 1, porFixture{challenge: challenge, response: [32]byte(r)})
		tk.WinProb = winProb
		for tries := 0; ; tries++ {
			if tries == 10_000 {
				e.t.Fatal("no winning index in 10,000 tries at probability 0.01")
			}
			index++
			tk.Index = index
			h := tk.Hash(chainID, e.chanAddr)
			if new(big.Int).Rsh(new(big.Int).SetBytes(crypto.Keccak256(h[:], r[:])), 200).Uint64() <= winProb {
				break
			}
		}
		if err := tk.Sign(e.alice.key, chainID, e.chanAddr); err != nil {
			e.t.Fatal(err)
		}
		items = append(items, batchItem{src: e.alice, tk: toContract(tk), resp: [32]byte(r)})
	}
	r := e.must(e.carol, "redeemTickets (100)", e.channels, channelsABI.PackRedeemTickets(groups(items)))
	if v := batchVerdicts(e.t, r); len(v) != n {
		e.t.Fatalf("%d verdicts for %d tickets", len(v), n)
	}
	for i, v := range batchVerdicts(e.t, r) {
		if !v.paid {
			e.t.Fatalf("ticket %d: %v", i, v)
		}
	}
	e.gas["redeemTickets: 100 tickets of one channel, per ticket"] = r.GasUsed / n
}
