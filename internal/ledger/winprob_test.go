package ledger

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

func winProb(t *testing.T, p string) uint64 {
	t.Helper()
	w, err := tickets.ParseWinProb(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLedgerIssuesAtItsWinProbability: a ticket's face amount is its expected value divided by
// the outgoing probability, which never goes below the network minimum; "follow the minimum"
// (0) without a known minimum signs tickets that always win.
func TestLedgerIssuesAtItsWinProbability(t *testing.T) {
	e := newLedgerEnv(t)
	var setting uint64
	e.l.cfg.WinProb = func() uint64 { return setting }
	dst := common.Address{0xd1}
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(100_000))
	issue := func() tickets.Ticket {
		t.Helper()
		tk, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
		if err != nil {
			t.Fatal(err)
		}
		if v := tk.Value(); v.Lt(&PricePerHop) {
			t.Fatalf("ticket at %s worth %s, below the price", tickets.FormatWinProb(tk.WinProb), v.Dec())
		}
		return tk
	}
	if tk := issue(); tk.WinProb != tickets.MaxWinProb || tk.Amount != PricePerHop {
		t.Fatalf("no setting, no minimum: %+v", tk)
	}
	minimum := winProb(t, "0.01")
	e.l.SetMinWinProb(minimum)
	if tk := issue(); tk.WinProb != minimum || tickets.FormatWinProb(tk.WinProb) != "0.01" {
		t.Fatalf("following the minimum: win prob %s", tickets.FormatWinProb(tk.WinProb))
	}
	setting = winProb(t, "0.001") // below the minimum: the minimum wins
	if tk := issue(); tk.WinProb != minimum {
		t.Fatalf("setting below the minimum: %s", tickets.FormatWinProb(tk.WinProb))
	}
	setting = winProb(t, "0.5")
	tk := issue()
	if tk.WinProb != setting {
		t.Fatalf("setting above the minimum: %s", tickets.FormatWinProb(tk.WinProb))
	}
	if want := tickets.AmountFor(2); tk.Amount.Cmp(&want) < 0 || tk.Amount.Cmp(uint256.NewInt(0).AddUint64(&want, 1)) > 0 {
		t.Fatalf("face amount at 0.5: %s, want 0.02", tk.Amount.Dec())
	}
}

// TestLedgerRefusesBelowTheMinimum: a relayer refuses a ticket whose probability is below the
// network minimum, and one whose expected value is below its price even if its face is above.
func TestLedgerRefusesBelowTheMinimum(t *testing.T) {
	e := newLedgerEnv(t)
	minimum := winProb(t, "0.1")
	e.l.SetMinWinProb(minimum)
	e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(10_000))
	sign := func(index uint64, face uint256.Int, w uint64) tickets.Ticket {
		tk := e.incoming(t, index, face)
		tk.WinProb = w
		if err := tk.Sign(e.source, testChainID, testContract); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	low := sign(1, tickets.AmountFor(100), winProb(t, "0.01"))
	if err := e.l.AcceptTicket(e.sourceAddr, &low, false); !errors.Is(err, ErrTicketWinProb) {
		t.Fatalf("below the minimum: %v", err)
	}
	cheap := sign(2, tickets.AmountFor(5), minimum) // face 0.05 at 0.1: worth 0.005
	if err := e.l.AcceptTicket(e.sourceAddr, &cheap, false); !errors.Is(err, ErrTicketAmount) {
		t.Fatalf("expected value below the price: %v", err)
	}
	fair := sign(3, tickets.AmountFor(10), minimum) // face 0.10 at 0.1: worth 0.01
	if err := e.l.AcceptTicket(e.sourceAddr, &fair, false); err != nil {
		t.Fatalf("a fair ticket: %v", err)
	}
}

// TestLedgerDropsLosersKeepsWinners: of many acknowledged tickets at probability 0.25, only the
// winners reach the store; the statistics count both, and what the channel owes counts only the
// winners (a loser frees its face amount at once).
func TestLedgerDropsLosersKeepsWinners(t *testing.T) {
	e := newLedgerEnv(t)
	w := winProb(t, "0.25")
	face := tickets.AmountFor(4) // worth 0.01 at 0.25
	e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(4*400))
	const n = 400
	var won int
	for i := uint64(1); i <= n; i++ {
		tk := e.incoming(t, i, face)
		tk.WinProb = w
		if err := tk.Sign(e.source, testChainID, testContract); err != nil {
			t.Fatal(err)
		}
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		resp := responseFor(i)
		h := tk.Hash(testChainID, testContract)
		beta, err := vrf.OutputOf(e.self, h[:])
		if err != nil {
			t.Fatal(err)
		}
		if tk.Wins(resp, beta, testChainID, testContract) {
			won++
		}
		if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk, Response: resp}}); err != nil {
			t.Fatal(err)
		}
	}
	if won < 50 || won > 150 { // mean 100, sd 8.7
		t.Fatalf("%d of %d won at 0.25", won, n)
	}
	stored, _ := e.l.Tickets()
	st, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != won || st.Unredeemed != uint64(won) || st.Winning != uint64(won) || st.LosingTickets != uint64(n-won) {
		t.Fatalf("%d won; stored %d, statistics %+v", won, len(stored), st)
	}
	if got := st.WinProportion; got < 0.12 || got > 0.38 {
		t.Fatalf("win proportion %v", got)
	}
	// Only the winners are owed: the channel holds 1,600 faces' worth... of which `won` are
	// taken; a ticket for all the rest fits, one more does not.
	var rest uint256.Int
	rest.Mul(&face, uint256.NewInt(uint64(n-won)))
	big := e.incoming(t, n+1, rest)
	if err := e.l.AcceptTicket(e.sourceAddr, &big, true); err != nil {
		t.Fatalf("a ticket for what the losers freed: %v", err)
	}
	e.l.Neglect(e.sourceAddr, &big)
	rest.AddUint64(&rest, 1)
	over := e.incoming(t, n+2, rest)
	if err := e.l.AcceptTicket(e.sourceAddr, &over, true); !errors.Is(err, ErrTicketBalance) {
		t.Fatalf("a ticket over what is free: %v", err)
	}
}

// TestRedeemProgress: a long redemption logs its progress at most every 5 s and one summary,
// never a line per ticket.
func TestRedeemProgress(t *testing.T) {
	var out bytes.Buffer
	e := newLedgerEnv(t)
	e.l.log = slog.New(slog.NewTextHandler(&out, nil))
	e.l.redeemChunk = 2
	now := time.Unix(0, 0)
	e.l.now = func() time.Time { now = now.Add(2 * time.Second); return now }
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	e.acknowledge(t, 20)
	rep, err := e.l.Redeem(t.Context(), &fakeRedeemer{}, nil, "test")
	if err != nil || rep.Redeemed != 20 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var progress int
	for _, l := range lines {
		if strings.Contains(l, "progress") {
			progress++
		}
	}
	// 10 chunks, the clock moving 2 s per look: a progress line every third chunk or so.
	if progress < 2 || progress > 5 || !strings.Contains(lines[len(lines)-1], "tickets redeemed") || len(lines) > 8 {
		t.Fatalf("%d progress lines of %d:\n%s", progress, len(lines), out.String())
	}
}

// TestLedgerChecksAnUnverifiedWinner: a recipient's ticket arrives unverified (its challenge not
// checked against the packet, to spare a scalar multiplication per message); Acknowledge checks
// it for a winner and keeps it only if its response opens its challenge.
func TestLedgerChecksAnUnverifiedWinner(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	good := e.incoming(t, 1, PricePerHop)
	bad := e.incoming(t, 2, PricePerHop)
	for _, tk := range []*tickets.Ticket{&good, &bad} {
		if err := e.l.AcceptTicket(e.sourceAddr, tk, true); err != nil {
			t.Fatal(err)
		}
	}
	acks := []AckedTicket{
		{Source: e.sourceAddr, Ticket: good, Response: responseFor(1), Unverified: true},
		{Source: e.sourceAddr, Ticket: bad, Response: responseFor(9), Unverified: true}, // opens another challenge
	}
	if err := e.l.Acknowledge(t.Context(), acks); err != nil {
		t.Fatal(err)
	}
	stored, _ := e.l.Tickets()
	st, _ := e.l.Statistics()
	if len(stored) != 1 || stored[0].Ticket.Index != 1 || st.Rejected != 1 || st.Unredeemed != 1 || st.Pending != 0 {
		t.Fatalf("stored %d tickets, statistics %+v", len(stored), st)
	}
}

// TestAcknowledgeBatchDrawsAsSingly: a batch of acknowledgements large enough to be drawn by
// several goroutines (draws) keeps exactly the winners the tickets' draws give one by one, and
// the tickets that always win among them.
func TestAcknowledgeBatchDrawsAsSingly(t *testing.T) {
	e := fixedLedgerEnv(t, "batch relayer", "batch sender")
	w := winProb(t, "0.25")
	face := tickets.AmountFor(4) // worth 0.01 at 0.25
	e.chans.Open(e.sourceAddr, e.selfAddr, tickets.AmountFor(4*1000))
	const n = 8 * drawsPerWorker
	acks := make([]AckedTicket, 0, n)
	want := map[uint64]bool{}
	for i := uint64(1); i <= n; i++ {
		tk := e.incoming(t, i, face)
		if i%5 != 0 { // every fifth always wins
			tk.WinProb = w
			if err := tk.Sign(e.source, testChainID, testContract); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		h := tk.Hash(testChainID, testContract)
		beta, err := vrf.OutputOf(e.self, h[:])
		if err != nil {
			t.Fatal(err)
		}
		if tk.Wins(responseFor(i), beta, testChainID, testContract) {
			want[i] = true
		}
		acks = append(acks, AckedTicket{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)})
	}
	if err := e.l.Acknowledge(t.Context(), acks); err != nil {
		t.Fatal(err)
	}
	stored, err := e.l.Tickets()
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for _, a := range stored {
		got[a.Ticket.Index] = true
	}
	if len(got) != len(want) {
		t.Fatalf("%d winners stored, %d drawn one by one", len(got), len(want))
	}
	for i := range want {
		if !got[i] {
			t.Fatalf("ticket %d won one by one but was not stored", i)
		}
	}
	if st, _ := e.l.Statistics(); st.LosingTickets != uint64(n-len(want)) || st.Pending != 0 {
		t.Fatalf("statistics %+v for %d winners of %d", st, len(want), n)
	}
}
