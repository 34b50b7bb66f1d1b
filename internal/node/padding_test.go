package node

import (
	"cmp"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"testing"

	"github.com/relayd/relayd/internal/tickets"
)

// TestPaddingReachesTheRecipientOnChain: A sends ten messages to B over R1 and R2. Each first
// ticket carries the sender's random padding (PROTOCOL.md §4.5); the relayers pass it on, each
// netting exactly 0.01 per message once everything is redeemed on the dev chain's contract, and
// B holds the padding as acknowledged tickets from R2 that it redeems into its wallet.
func TestPaddingReachesTheRecipientOnChain(t *testing.T) {
	const msgs = 10 // every padding 0: probability 8^-10
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	for _, c := range [][2]*Node{{a, r1}, {r1, r2}, {r2, b}} {
		net.open(c[0], c[1], tokens(1))
	}
	wallets := map[*Node]*big.Int{r1: net.tokenBalance(r1), r2: net.tokenBalance(r2), b: net.tokenBalance(b)}
	for i := range msgs {
		net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"padded %d","recipient":%q}`, i, b.id.PeerID()), http.StatusAccepted, nil)
	}
	held := func(n *Node) []ticketView {
		var list []ticketView
		net.mustCall(n, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return list
	}
	amount := func(s string) *big.Int {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("amount %q", s)
		}
		return v
	}
	var in1, in2, padding []*big.Int
	net.eventually("every ticket is acknowledged and stored", func() bool {
		t1, t2 := held(r1), held(r2)
		if len(t1) != msgs || len(t2) != msgs {
			return false
		}
		in1, in2, padding = nil, nil, nil
		for i := range msgs {
			in1, in2 = append(in1, amount(t1[i].Amount)), append(in2, amount(t2[i].Amount))
			if pad := new(big.Int).Sub(in2[i], centToken); pad.Sign() > 0 {
				padding = append(padding, pad)
			}
		}
		var st struct{ Pending int }
		net.mustCall(b, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
		return st.Pending == 0 && len(held(b)) == len(padding)
	})
	maxFirst := tickets.PaddedAmount(2, tickets.PadMax)
	sum := func(xs []*big.Int) *big.Int {
		s := new(big.Int)
		for _, x := range xs {
			s.Add(s, x)
		}
		return s
	}
	// The relayers work on packets in parallel, so R2's tickets need not come in the order of
	// R1's: each message's pair is found by its amounts (R1's ticket less 0.01 is R2's).
	sorted := func(xs []*big.Int) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = x.String()
		}
		slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
		return out
	}
	var less1 []*big.Int
	for i := range msgs {
		if in1[i].Cmp(new(big.Int).Mul(centToken, big.NewInt(2))) < 0 || in1[i].Cmp(maxFirst.ToBig()) > 0 {
			t.Fatalf("message %d: R1's ticket %s: want 0.02 to 0.09", i, in1[i])
		}
		less1 = append(less1, new(big.Int).Sub(in1[i], centToken))
	}
	if !slices.Equal(sorted(less1), sorted(in2)) {
		t.Fatalf("R1's tickets less 0.01 %v are not R2's %v", sorted(less1), sorted(in2))
	}
	if len(padding) == 0 {
		t.Fatalf("no message of %d carried padding: R1's tickets %v", msgs, in1)
	}
	var atB []*big.Int
	for i, tk := range held(b) {
		if tk.Counterparty != r2.id.PeerID().String() {
			t.Fatalf("B's ticket %d: %+v, want it from R2", i, tk)
		}
		atB = append(atB, amount(tk.Amount))
	}
	if !slices.Equal(sorted(atB), sorted(padding)) {
		t.Fatalf("B's tickets %v, want the padding %v", sorted(atB), sorted(padding))
	}

	for _, n := range []*Node{r1, r2, b} {
		net.mustCall(n, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	}
	channelBalance := func(from, to *Node) *big.Int {
		c, status := net.channel(from, to, "outgoing")
		if status != http.StatusOK {
			t.Fatalf("channel: %d", status)
		}
		return amount(c.Balance)
	}
	spent := func(from, to *Node) *big.Int { return new(big.Int).Sub(tokens(1), channelBalance(from, to)) }
	net.eventually("the redemptions are indexed", func() bool {
		return spent(a, r1).Cmp(sum(in1)) == 0 && spent(r1, r2).Cmp(sum(in2)) == 0 && spent(r2, b).Cmp(sum(padding)) == 0
	})
	// Each relayer's wallet rose by its tickets and its channel paid the next hop's: it nets
	// 0.01 per message. B's wallet rose by the padding.
	perRelayer := new(big.Int).Mul(centToken, big.NewInt(msgs))
	for _, c := range []struct {
		n, next *Node
		want    *big.Int
	}{{r1, r2, perRelayer}, {r2, b, perRelayer}, {b, nil, sum(padding)}} {
		gain := new(big.Int).Sub(net.tokenBalance(c.n), wallets[c.n])
		if c.next != nil {
			gain.Sub(gain, spent(c.n, c.next))
		}
		if gain.Cmp(c.want) != 0 {
			t.Fatalf("a node gained %s net, want %s", gain, c.want)
		}
	}
	var st struct {
		Redeemed      int
		RedeemedValue string
		Unredeemed    int
	}
	net.mustCall(b, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
	if st.Redeemed != len(padding) || st.Unredeemed != 0 || st.RedeemedValue != sum(padding).String() {
		t.Fatalf("B's statistics %+v, want %d redeemed worth %s", st, len(padding), sum(padding))
	}
}
