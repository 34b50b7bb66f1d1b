package ledger

import (
	"errors"
	"testing"
)

// TestTicketCountersSurviveACrash: every count the statistics showed (neglected, rejected,
// unredeemed, settled) is still there after the process dies without a clean stop, as with
// SIGKILL: the ledger's Run never flushed, and a new Ledger opens the same store.
func TestTicketCountersSurviveACrash(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	for i := uint64(1); i <= 5; i++ {
		tk := e.incoming(t, i, PricePerHop)
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatal(err)
		}
		switch {
		case i <= 3: // the next hop never acknowledged these packets
			e.l.Neglect(e.sourceAddr, &tk)
		default:
			if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	again := e.incoming(t, 2, PricePerHop) // an index already used
	if err := e.l.AcceptTicket(e.sourceAddr, &again, false); !errors.Is(err, ErrTicketIndex) {
		t.Fatalf("replayed index: %v, want ErrTicketIndex", err)
	}
	if _, err := e.l.Redeem(t.Context(), &fakeRedeemer{}, nil, "test"); err != nil {
		t.Fatal(err)
	}
	late := e.incoming(t, 6, PricePerHop)
	if err := e.l.AcceptTicket(e.sourceAddr, &late, false); err != nil {
		t.Fatal(err)
	}
	e.l.Neglect(e.sourceAddr, &late)

	before, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	if before.Neglected != 4 || before.Rejected != 1 || before.Redeemed != 2 || before.Pending != 0 {
		t.Fatalf("statistics before the crash: %+v", before)
	}
	e.open(t) // killed: no Run to flush, a new Ledger over the same store
	after, err := e.l.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("statistics after a crash %+v, before %+v", after, before)
	}
}
