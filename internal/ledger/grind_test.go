package ledger

import (
	"crypto/ecdsa"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

// grindSender is a sender that knows its first ticket's proof-of-relay response before it sends
// (it derives the first hop's secrets itself) and re-seals the packet, with the channel's next
// index, whenever its best prediction says the ticket would win (issue 25, defect 1).
type grindSender struct {
	name string
	// wouldWin is the sender's prediction from what it knows: the ticket, its hash and the
	// response. nil: an honest sender, which sends every ticket.
	wouldWin func(tk *tickets.Ticket, h common.Hash, response [32]byte) bool
}

// oldRuleWins is the draw before the holder's VRF output took part: the top 56 bits of
// keccak256(hash ‖ response) at most winProb. The sender can compute it.
func oldRuleWins(tk *tickets.Ticket, h common.Hash, response [32]byte) bool {
	luck := crypto.Keccak256(h[:], response[:])
	var top uint64
	for _, b := range luck[:7] {
		top = top<<8 | uint64(b)
	}
	return top <= tk.WinProb
}

// TestGrindingSenderStillPays: at win probability 0.1 a sender relays 400 packets through a
// relayer and, for each, grinds its first ticket: it computes the ticket's response (which it
// knows) and, whenever its prediction says the ticket would win, discards it and signs the next
// index instead. The relayer accepts and acknowledges every ticket it receives, as a relayer
// does. Whatever the sender predicts with (the old draw keccak256(hash ‖ response), which it can
// compute, or the VRF draw with its own key in place of the relayer's, which it does not have),
// the relayer's winners must be Binomial(400, 0.1): within the 99 % bound 40 ± 15.5, as for an
// honest sender. Before the draw took the holder's VRF output, the old-rule grinder left the
// relayer no winner at all; the test checks that its tickets all lose under that rule (so the
// attack is real and the test not vacuous). Keys and responses are seeded: deterministic.
func TestGrindingSenderStillPays(t *testing.T) {
	const (
		n     = 400
		p     = 0.1
		chain = testChainID
	)
	w := winProb(t, "0.1")
	senders := []grindSender{
		{name: "honest"},
		{name: "grinds with the old draw", wouldWin: oldRuleWins},
		{name: "grinds with the VRF under its own key"}, // wouldWin set below: needs the key
	}
	mean := n * p
	half := 2.576 * math.Sqrt(n*p*(1-p))
	for i, s := range senders {
		t.Run(s.name, func(t *testing.T) {
			e := fixedLedgerEnv(t, "grind relayer", "grind sender "+s.name)
			e.l.SetMinWinProb(w)
			if i == 2 {
				s.wouldWin = func(tk *tickets.Ticket, h common.Hash, response [32]byte) bool {
					beta, err := vrf.OutputOf(e.source, h[:])
					if err != nil {
						t.Fatal(err)
					}
					return tickets.IsWinning(h, response, beta, tk.WinProb)
				}
			}
			// Face 0.1 at p = 0.1: expected value 0.01, the relayer's price.
			face, err := tickets.FaceAmount(&PricePerHop, w)
			if err != nil {
				t.Fatal(err)
			}
			e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(100_000))
			ch, _ := e.chans.Channel(e.sourceAddr, e.selfAddr)
			rng := rand.New(rand.NewChaCha8([32]byte{'g', 'r', 'i', 'n', 'd'}))
			index := uint64(0)
			var discarded, oldWins int
			for range n {
				for {
					index++
					response := seededResponse(rng)
					c, err := por.ChallengeOf(por.Scalar(response))
					if err != nil {
						t.Fatal(err)
					}
					tk := tickets.Ticket{ChannelID: ch.ID, Amount: face, Index: index, Epoch: ch.Epoch, WinProb: w, Challenge: c}
					if err := tk.Sign(e.source, chain, testContract); err != nil {
						t.Fatal(err)
					}
					h := tk.Hash(chain, testContract)
					if s.wouldWin != nil && s.wouldWin(&tk, h, response) {
						discarded++ // re-sealed: the packet goes with the next index
						continue
					}
					if oldRuleWins(&tk, h, response) {
						oldWins++
					}
					if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
						t.Fatalf("ticket %d: accept: %v", index, err)
					}
					if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk, Response: response}}); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			st, err := e.l.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			won := int(st.Winning)
			t.Logf("%s: %d tickets sent (%d discarded by the sender), the relayer won %d (99%% bound %.0f ± %.1f); %d would have won under the old draw",
				s.name, n, discarded, won, mean, half, oldWins)
			if st.Winning+st.LosingTickets != n || st.Unredeemed != st.Winning {
				t.Fatalf("statistics %+v for %d tickets", st, n)
			}
			if math.Abs(float64(won)-mean) > half {
				t.Errorf("the relayer won %d of %d tickets at p = %v: outside the 99%% bound %.0f ± %.1f", won, n, p, mean, half)
			}
			if s.name == "grinds with the old draw" && oldWins != 0 {
				t.Errorf("%d of the old-draw grinder's tickets win under the old draw: it should have discarded them all", oldWins)
			}
			if s.wouldWin != nil && discarded == 0 {
				t.Errorf("the grinder discarded no ticket")
			}
		})
	}
}

// seededResponse draws a proof-of-relay response (a valid scalar) from rng.
func seededResponse(rng *rand.Rand) [32]byte {
	for {
		var r [32]byte
		for j := 0; j < 32; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				r[j+k] = byte(v >> (8 * k))
			}
		}
		if _, err := por.ChallengeOf(por.Scalar(r)); err == nil {
			return r
		}
	}
}

// fixedLedgerEnv is newLedgerEnv with keys derived from seeds instead of random ones, for
// deterministic draws.
func fixedLedgerEnv(t *testing.T, selfSeed, sourceSeed string) *ledgerEnv {
	t.Helper()
	key := func(seed string) (*ecdsa.PrivateKey, common.Address) {
		k, err := crypto.ToECDSA(crypto.Keccak256([]byte("relayd ledger test " + seed)))
		if err != nil {
			t.Fatal(err)
		}
		return k, crypto.PubkeyToAddress(k.PublicKey)
	}
	e := &ledgerEnv{chans: channelstest.New(), dir: t.TempDir()}
	e.self, e.selfAddr = key(selfSeed)
	e.source, e.sourceAddr = key(sourceSeed)
	e.open(t)
	t.Cleanup(func() { e.db.Close() })
	return e
}
