package ledger

import (
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// TestVerifyThenAcceptVerified: VerifyTicket checks the signer only (and counts a forgery as
// rejected); AcceptVerified does every other check, the index's order included.
func TestVerifyThenAcceptVerified(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	t1, t2, t3 := e.incoming(t, 1, PricePerHop), e.incoming(t, 2, PricePerHop), e.incoming(t, 3, PricePerHop)
	for _, tk := range []*tickets.Ticket{&t1, &t2, &t3} {
		if err := e.l.VerifyTicket(e.sourceAddr, tk); err != nil {
			t.Fatalf("VerifyTicket(%d): %v", tk.Index, err)
		}
	}
	if err := e.l.VerifyTicket(common.Address{0xbb}, &t1); !errors.Is(err, ErrTicketSigner) {
		t.Fatalf("VerifyTicket by another address: %v, want ErrTicketSigner", err)
	}
	if err := e.l.AcceptVerified(e.sourceAddr, &t2, false); err != nil {
		t.Fatal(err)
	}
	if err := e.l.AcceptVerified(e.sourceAddr, &t1, false); !errors.Is(err, ErrTicketIndex) {
		t.Fatalf("AcceptVerified of index 1 after 2: %v, want ErrTicketIndex", err)
	}
	if err := e.l.AcceptVerified(e.sourceAddr, &t3, false); err != nil {
		t.Fatal(err)
	}
	st, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	if st.Rejected != 2 || st.Pending != 2 {
		t.Fatalf("rejected %d, pending %d; want 2 (the forgery and the index), 2", st.Rejected, st.Pending)
	}
}

// TestReserveThenSign: ReserveTicket takes the indexes in order and refuses what IssueTicket
// refuses; SignTicket signs each with the node's key, in any order.
func TestReserveThenSign(t *testing.T) {
	e := newLedgerEnv(t)
	dst := common.Address{0xd5}
	if _, err := e.l.ReserveTicket(t.Context(), dst, &PricePerHop, por.Challenge{1}); !errors.Is(err, ErrChannelNotFound) {
		t.Fatalf("ReserveTicket without a channel: %v, want ErrChannelNotFound", err)
	}
	e.chans.Open(e.selfAddr, dst, tickets.AmountFor(1<<20))
	var ts []tickets.Ticket
	for i := 1; i <= 3; i++ {
		tk, err := e.l.ReserveTicket(t.Context(), dst, &PricePerHop, por.Challenge{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		if tk.Index != uint64(i) || tk.Challenge != (por.Challenge{byte(i)}) {
			t.Fatalf("reservation %d: index %d, challenge %x", i, tk.Index, tk.Challenge)
		}
		ts = append(ts, tk)
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if err := e.l.SignTicket(&ts[i]); err != nil {
			t.Fatal(err)
		}
		if s, err := ts[i].Signer(testChainID, testContract); err != nil || s != e.selfAddr {
			t.Fatalf("ticket %d signed by %s, %v", ts[i].Index, s, err)
		}
	}
	if tk, err := e.l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{4}); err != nil || tk.Index != 4 {
		t.Fatalf("IssueTicket after three reservations: index %d, %v; want 4", tk.Index, err)
	}
}
