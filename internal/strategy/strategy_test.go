package strategy

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func tok(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

func addr(b byte) common.Address { return common.Address{19: b} }

func TestParse(t *testing.T) {
	for in, want := range map[string]Name{"passive": Passive, " Promiscuous ": Promiscuous} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := Parse("aggressive"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Parse(aggressive): %v, want ErrUnknown", err)
	}
}

func count(as []Action, k Kind) int {
	n := 0
	for _, a := range as {
		if a.Kind == k {
			n++
		}
	}
	return n
}

func TestDecide(t *testing.T) {
	promiscuous := Policy{Strategy: Promiscuous, MaxChannels: 3, MaxOpensPerTick: 5, ChannelFunding: tok(10), DepletedBelow: tok(1)}
	peers := func(qs ...float64) []Peer {
		var out []Peer
		for i, q := range qs {
			out = append(out, Peer{Address: addr(byte(i + 1)), Quality: q})
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		policy      Policy
		state       State
		opens       int
		closes      []common.Address
		neverOpenTo []common.Address
	}{
		{name: "passive does nothing", policy: Policy{Strategy: Passive, ChannelFunding: tok(10)},
			state: State{Balance: tok(100), Peers: peers(1, 1, 1)}},
		{name: "opens up to MaxChannels", policy: promiscuous,
			state: State{Balance: tok(100), Peers: peers(1, 1, 1, 1, 1)}, opens: 3},
		{name: "never more than the balance pays for", policy: promiscuous,
			state: State{Balance: tok(25), Peers: peers(1, 1, 1, 1)}, opens: 2},
		{name: "nothing without the funding of one channel", policy: promiscuous,
			state: State{Balance: tok(9), Peers: peers(1, 1)}},
		{name: "only to good peers, none twice", policy: promiscuous,
			state: State{Balance: tok(100), Peers: peers(0.9, 0.2, 0.9, 0.6),
				Open: []Channel{{Peer: addr(1), Balance: tok(5)}}, Busy: []common.Address{addr(4)}},
			opens: 1, neverOpenTo: []common.Address{addr(1), addr(2), addr(4)}},
		{name: "counts what it keeps", policy: promiscuous,
			state: State{Balance: tok(100), Peers: peers(1, 1, 1, 1),
				Open: []Channel{{Peer: addr(1), Balance: tok(5)}, {Peer: addr(2), Balance: tok(5)}, {Peer: addr(3), Balance: tok(5)}}}},
		{name: "closes unreachable and depleted, then replaces them", policy: promiscuous,
			state: State{Balance: tok(100), Peers: peers(0.05, 0.9, 0.9, 0.9, 0.9),
				Open: []Channel{{Peer: addr(1), Balance: tok(5)}, {Peer: addr(2), Balance: big.NewInt(1)}, {Peer: addr(3), Balance: tok(5)}}},
			closes: []common.Address{addr(1), addr(2)}, opens: 2, neverOpenTo: []common.Address{addr(1), addr(2), addr(3)}},
		{name: "closes a channel to a peer no longer announced", policy: promiscuous,
			state:  State{Balance: tok(0), Peers: peers(1), Open: []Channel{{Peer: addr(9), Balance: tok(5)}}},
			closes: []common.Address{addr(9)}},
		{name: "finalizes closures whose period is over and never reopens them at once", policy: promiscuous,
			state:  State{Balance: tok(10), Peers: peers(1, 1), Finalizable: []common.Address{addr(1)}},
			closes: []common.Address{addr(1)}, opens: 1, neverOpenTo: []common.Address{addr(1)}},
		{name: "at most MaxOpensPerTick", policy: Policy{Strategy: Promiscuous, MaxChannels: 10, MaxOpensPerTick: 2, ChannelFunding: tok(1)},
			state: State{Balance: tok(100), Peers: peers(1, 1, 1, 1, 1)}, opens: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				as := Decide(tc.policy, tc.state, rand.New(rand.NewPCG(seed, 1)))
				if got := count(as, Open); got != tc.opens {
					t.Fatalf("seed %d: %d opens, want %d: %+v", seed, got, tc.opens, as)
				}
				if got := count(as, Close); got != len(tc.closes) {
					t.Fatalf("seed %d: %d closes, want %d: %+v", seed, got, len(tc.closes), as)
				}
				seen := map[common.Address]bool{}
				for _, a := range as {
					if seen[a.Peer] {
						t.Fatalf("two actions for %s: %+v", a.Peer, as)
					}
					seen[a.Peer] = true
					switch a.Kind {
					case Open:
						if a.Amount.Cmp(tc.policy.ChannelFunding) != 0 {
							t.Fatalf("opens with %v", a.Amount)
						}
						for _, n := range tc.neverOpenTo {
							if a.Peer == n {
								t.Fatalf("opened to %s: %+v", n, as)
							}
						}
					case Close:
						found := false
						for _, c := range tc.closes {
							found = found || c == a.Peer
						}
						if !found {
							t.Fatalf("closed %s: %+v", a.Peer, as)
						}
					}
				}
			}
		})
	}
}

// TestDecideTopsUp: under either strategy, with TopUp, a channel to a reachable peer below half of
// ChannelFunding is brought back to ChannelFunding from the balance; a channel above half, to an
// unreachable or busy peer, or one the balance cannot pay for is left; a topped-up channel is
// not closed as depleted, and what the top-ups take is not spent on openings.
func TestDecideTopsUp(t *testing.T) {
	peers := []Peer{{Address: addr(1), Quality: 1}, {Address: addr(2), Quality: 1}, {Address: addr(3), Quality: 0.05},
		{Address: addr(4), Quality: 1}, {Address: addr(5), Quality: 1}}
	low := []Channel{{Peer: addr(1), Balance: tok(4)}, {Peer: addr(2), Balance: tok(6)}, {Peer: addr(3), Balance: tok(1)},
		{Peer: addr(4), Balance: nil}}
	want := map[common.Address]*big.Int{addr(1): tok(6), addr(4): tok(10)}
	for _, tc := range []struct {
		name    string
		policy  Policy
		balance *big.Int
		busy    []common.Address
		ups     map[common.Address]*big.Int
		opens   int
	}{
		{name: "passive without TopUp does nothing", policy: Policy{Strategy: Passive, ChannelFunding: tok(10)}, balance: tok(100)},
		{name: "passive", policy: Policy{Strategy: Passive, ChannelFunding: tok(10), TopUp: true}, balance: tok(100), ups: want},
		{name: "not what the balance cannot pay", policy: Policy{Strategy: Passive, ChannelFunding: tok(10), TopUp: true},
			balance: tok(9), ups: map[common.Address]*big.Int{addr(1): tok(6)}},
		{name: "not a busy peer", policy: Policy{Strategy: Passive, ChannelFunding: tok(10), TopUp: true},
			balance: tok(100), busy: []common.Address{addr(4)}, ups: map[common.Address]*big.Int{addr(1): tok(6)}},
		{name: "promiscuous tops up before it opens", policy: Policy{Strategy: Promiscuous, MaxChannels: 8, ChannelFunding: tok(10),
			DepletedBelow: tok(1), TopUp: true}, balance: tok(26), ups: want, opens: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{Balance: tc.balance, Peers: peers, Open: low, Busy: tc.busy}
			as := Decide(tc.policy, st, rand.New(rand.NewPCG(1, 1)))
			got := map[common.Address]*big.Int{}
			for _, a := range as {
				switch a.Kind {
				case TopUp:
					got[a.Peer] = a.Amount
				case Close:
					if a.Peer != addr(3) { // the unreachable one
						t.Fatalf("closed %s: %+v", a.Peer, as)
					}
				}
			}
			if len(got) != len(tc.ups) {
				t.Fatalf("top-ups %v, want %v", got, tc.ups)
			}
			for p, amt := range tc.ups {
				if got[p] == nil || got[p].Cmp(amt) != 0 {
					t.Fatalf("top-up of %s: %v, want %v", p, got[p], amt)
				}
			}
			if n := count(as, Open); n != tc.opens {
				t.Fatalf("%d opens, want %d: %+v", n, tc.opens, as)
			}
		})
	}
}

// TestDecideSpreads: different random sources pick different peers, so a network of promiscuous
// nodes does not pile its channels on the same few.
func TestDecideSpreads(t *testing.T) {
	var ps []Peer
	for i := range 20 {
		ps = append(ps, Peer{Address: addr(byte(i + 1)), Quality: 1})
	}
	picked := map[common.Address]bool{}
	for seed := range uint64(10) {
		for _, a := range Decide(Policy{Strategy: Promiscuous, MaxOpensPerTick: 5, ChannelFunding: tok(1)}, State{Balance: tok(100), Peers: ps}, rand.New(rand.NewPCG(seed, 2))) {
			picked[a.Peer] = true
		}
	}
	if len(picked) < 15 {
		t.Fatalf("10 nodes picked only %d distinct peers of 20", len(picked))
	}
}

// TestDecidePrefersUnpaidPeers: a peer nobody has a channel to is the likeliest pick, so that
// nodes announced late are not left without incoming channels.
func TestDecidePrefersUnpaidPeers(t *testing.T) {
	var ps []Peer
	for i := range 10 {
		ps = append(ps, Peer{Address: addr(byte(i + 1)), Quality: 1, Incoming: 5})
	}
	ps[7].Incoming = 0
	hits := 0
	const draws = 400
	r := rand.New(rand.NewPCG(7, 7))
	for range draws {
		as := Decide(Policy{Strategy: Promiscuous, MaxOpensPerTick: 1, ChannelFunding: tok(1)}, State{Balance: tok(100), Peers: ps}, r)
		if len(as) != 1 {
			t.Fatalf("%d actions", len(as))
		}
		if as[0].Peer == ps[7].Address {
			hits++
		}
	}
	// Weight 1 against 9 × 1/36: the unpaid peer is drawn 80 % of the time.
	if hits < draws*7/10 || hits > draws*9/10 {
		t.Fatalf("the peer without incoming channels was drawn %d times of %d, want about 80 %%", hits, draws)
	}
}

func TestShouldRedeem(t *testing.T) {
	p := RedeemPolicy{Enabled: true, Count: 10, Value: tok(1)}
	for _, c := range []struct {
		policy RedeemPolicy
		count  uint64
		value  *big.Int
		want   bool
	}{
		{p, 9, tok(0), false},
		{p, 10, tok(0), true},
		{p, 3, tok(1), true},
		{p, 0, tok(5), false},
		{RedeemPolicy{Count: 1}, 50, tok(50), false}, // off
		{RedeemPolicy{Enabled: true, Value: tok(2)}, 1000, tok(1), false},
		{RedeemPolicy{Enabled: true, Count: 5}, 4, tok(100), false},
	} {
		if got := c.policy.ShouldRedeem(c.count, c.value); got != c.want {
			t.Errorf("%+v with %d tickets worth %v: %v, want %v", c.policy, c.count, c.value, got, c.want)
		}
	}
}

func TestRedeemWorthGas(t *testing.T) {
	p := RedeemPolicy{Enabled: true, MaxGasShare: 0.05}
	value := big.NewInt(1_000_000)
	for _, c := range []struct {
		gas  int64
		want bool
	}{{50_000, true}, {50_001, false}, {0, true}} {
		if got := p.WorthGas(big.NewInt(c.gas), value); got != c.want {
			t.Errorf("gas %d for value %s at 5 %%: %v, want %v", c.gas, value, got, c.want)
		}
	}
	if p.WorthGas(big.NewInt(1), big.NewInt(0)) {
		t.Error("nothing to redeem is never worth gas")
	}
	p.MaxGasShare = 0
	if !p.WorthGas(big.NewInt(1e18), big.NewInt(1)) {
		t.Error("no limit refused")
	}
}

// TestTopUpGoesByFaceAmount: with lottery tickets a channel's Balance (the largest expected value
// a ticket can carry) is a fraction of what it holds; top-ups go by Available, in face amount,
// and bring that back to ChannelFunding.
func TestTopUpGoesByFaceAmount(t *testing.T) {
	p := Policy{Strategy: Passive, ChannelFunding: tok(100), TopUp: true}
	peers := []Peer{{Address: addr(1), Quality: 1}, {Address: addr(2), Quality: 1}}
	st := State{Balance: tok(1000), Peers: peers, Open: []Channel{
		{Peer: addr(1), Balance: tok(1), Available: tok(90)}, // p = 0.01: full enough
		{Peer: addr(2), Balance: new(big.Int).Div(tok(2), big.NewInt(5)), Available: tok(40)},
	}}
	as := Decide(p, st, rand.New(rand.NewPCG(1, 1)))
	if len(as) != 1 || as[0].Peer != addr(2) || as[0].Amount.Cmp(tok(60)) != 0 {
		t.Fatalf("top-ups %+v, want 60 tokens to the second channel only", as)
	}
}
