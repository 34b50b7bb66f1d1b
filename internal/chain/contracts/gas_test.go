package contracts_test

import (
	"fmt"
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
// Tickets at p = 1 always win and go with a zero VRF proof; tickets at p = 0.01 go with their
// holder's proof (PROTOCOL.md §4.5).
var gasSteps = []struct {
	what         string
	osakaCeiling uint64
}{
	{"deploy RelayToken", 1_000_000},
	{"deploy RelayChannels", 3_100_000},
	{"announce", 40_000},
	{"fundChannel (open)", 120_000},
	{"fundChannel (top up)", 60_000},
	{"redeemTicket", 90_000},
	{"redeemTicket (destination held no tokens)", 110_000},
	{"redeemTicket at p = 0.01 (VRF proof)", 127_000},
	{"redeemTickets: 100 tickets of one channel at p = 1, per ticket", 20_000},
	{"redeemTickets: 100 tickets of one channel at p = 0.01 (VRF proofs), per ticket", 51_000},
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
	// Issue 15's target: redeeming in batches costs at most a quarter of redeeming one by one,
	// for what a batch can share (tickets at p = 1, which need no proof). A ticket below p = 1
	// carries its holder's VRF proof, whose verification (about 22,000 gas) and call data (288
	// bytes) no batch can share: there the bound is half.
	for name, g := range map[string]map[string]uint64{"Osaka": osaka, "dev-chain default": dev} {
		for _, c := range []struct {
			batch, single string
			parts         uint64
		}{
			{"redeemTickets: 100 tickets of one channel at p = 1, per ticket", "redeemTicket", 4},
			{"redeemTickets: 100 tickets of one channel at p = 0.01 (VRF proofs), per ticket", "redeemTicket at p = 0.01 (VRF proof)", 2},
		} {
			if batch, single := g[c.batch], g[c.single]; c.parts*batch > single {
				t.Errorf("%s rules: %s: %d gas, more than 1/%d of %s's %d", name, c.batch, batch, c.parts, c.single, single)
			}
		}
	}
}

// gasWinProb is the 56-bit field of probability 0.01: round(0.01 · 2^56) − 1.
const gasWinProb = 720575940379278

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
		tk := toContract(e.ticket(e.alice, dst, e.alice, amount.ToBig(), index, 1, p))
		e.must(dst, what, e.channels, channelsABI.PackRedeemTicket(e.alice.addr, tk, p.response, holderKey(dst), zeroProof()))
	}
	redeem("redeemTicket", e.bob, 1, 20)
	redeem("redeemTicket", e.bob, 2, 21)
	redeem("redeemTicket (destination held no tokens)", e.dave, 1, 22)
	// A winner at p = 0.01 of alice→bob: the first index from 3 on at which bob's draw wins.
	p := newPoR(t, 23)
	tk := toContract(e.ticket(e.alice, e.bob, e.alice, amount.ToBig(), 3, 1, p))
	tk.WinProb = gasWinProb
	for !e.wins(e.bob, tk, p.response) {
		tk.Index++
	}
	tk = resign(t, e, e.alice, tk)
	e.must(e.bob, "redeemTicket at p = 0.01 (VRF proof)", e.channels,
		channelsABI.PackRedeemTicket(e.alice.addr, tk, p.response, holderKey(e.bob), e.vrfProof(e.bob, tk)))
	e.must(e.alice, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
	e.advance(closurePeriod)
	e.must(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
	e.must(e.dave, "closeIncomingChannel", e.channels, channelsABI.PackCloseIncomingChannel(e.alice.addr))
	batchGasPerTicket(e, e.bob, tickets.MaxWinProb, "redeemTickets: 100 tickets of one channel at p = 1, per ticket")
	batchGasPerTicket(e, e.alice, gasWinProb, "redeemTickets: 100 tickets of one channel at p = 0.01 (VRF proofs), per ticket")
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

// batchGasPerTicket redeems 100 winning tickets of src→carol at win probability winProb (face
// value 1 token, each with its own challenge; below 1, with the gaps in the indexes of the
// losing tickets a relayer drops, and carol's VRF proofs) in one redeemTickets call and records
// its gas divided by 100 as what.
func batchGasPerTicket(e *env, src *actor, winProb uint64, what string) {
	e.t.Helper()
	const n = 100
	e.fund(src, e.carol, tokens(n+1))
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
		tk := toContract(e.ticket(src, e.carol, src, tokens(1), 1, 1, porFixture{challenge: challenge, response: [32]byte(r)}))
		tk.WinProb = winProb
		for tries := 0; ; tries++ {
			if tries == 10_000 {
				e.t.Fatal("no winning index in 10,000 tries")
			}
			index++
			tk.Index = index
			if e.wins(e.carol, tk, [32]byte(r)) {
				break
			}
		}
		tk = resign(e.t, e, src, tk)
		items = append(items, batchItem{src: src, tk: tk, resp: [32]byte(r), proof: ptr(e.drawProof(e.carol, tk))})
	}
	r := e.must(e.carol, what, e.channels, channelsABI.PackRedeemTickets(groups(items), holderKey(e.carol)))
	if v := batchVerdicts(e.t, r); len(v) != n {
		e.t.Fatalf("%d verdicts for %d tickets", len(v), n)
	}
	for i, v := range batchVerdicts(e.t, r) {
		if !v.paid {
			e.t.Fatalf("ticket %d: %v", i, v)
		}
	}
	e.gas[what] = r.GasUsed / n
}
