package ledger

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

// TestAutoRedeemWeighsGas: past its threshold the strategy redeems, unless the gas would cost
// more than the policy's share of the value, in which case it waits and sends nothing.
func TestAutoRedeemWeighsGas(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	e.acknowledge(t, 3)
	r := &fakeRedeemer{}
	price := big.NewInt(0)
	a := &AutoRedeem{Ledger: e.l, Redeemer: r, GasPrice: func(context.Context) (*big.Int, error) { return price, nil }}
	p := strategy.RedeemPolicy{Enabled: true, Count: 3, MaxGasShare: 0.05}
	// 3 tickets of 0.01 = 0.03 tokens; 5 % of it is 0.0015 native. One batch of 3 tickets on one
	// channel is estimated at 231,000 gas: 10 gwei a gas costs 0.00231, too much.
	price.SetInt64(10_000_000_000)
	if err := a.check(t.Context(), p, nil, quiet); err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 0 {
		t.Fatalf("redeemed although the gas costs more than 5 %%: calls %v", r.calls)
	}
	price.SetInt64(1_000_000_000) // 1 gwei: 0.000231 native, under 5 %
	if err := a.check(t.Context(), p, nil, quiet); err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 3 {
		t.Fatalf("did not redeem when the gas was worth it: calls %v", r.calls)
	}
	// Below the threshold nothing happens, whatever the gas.
	if err := a.check(t.Context(), strategy.RedeemPolicy{Enabled: true, Count: 10}, nil, quiet); err != nil || len(r.calls) != 3 {
		t.Fatalf("below the threshold: %v, calls %v", err, r.calls)
	}
}

// TestLedgerKeepsNoTicketsInMemory: however many winners wait in the store, what the ledger holds
// per incoming channel is a sum and the pending tickets, which acknowledgement empties.
func TestLedgerKeepsNoTicketsInMemory(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	const n = 50
	acks := make([]AckedTicket, 0, n)
	for i := uint64(1); i <= n; i++ {
		tk := e.incoming(t, i, PricePerHop)
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatal(err)
		}
		acks = append(acks, AckedTicket{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)})
	}
	ch, _ := e.chans.Channel(e.sourceAddr, e.selfAddr)
	e.l.mu.Lock()
	pending := len(e.l.in[ch.ID].pending)
	e.l.mu.Unlock()
	if pending != n {
		t.Fatalf("%d pending tickets in memory, want %d", pending, n)
	}
	if err := e.l.Acknowledge(t.Context(), acks); err != nil {
		t.Fatal(err)
	}
	e.l.mu.Lock()
	st := e.l.in[ch.ID]
	pending, stored := len(st.pending), st.stored
	e.l.mu.Unlock()
	if want := PricePerHop; pending != 0 || stored.Uint64() != want.Uint64()*n {
		t.Fatalf("after acknowledgement: %d pending in memory, stored sum %s", pending, stored.Dec())
	}
	if list, _ := e.l.Tickets(); len(list) != n {
		t.Fatalf("%d tickets in the store, want %d", len(list), n)
	}
}

// TestLedgerRolledBack: a reorganisation that takes the channel's ticket index back below
// tickets this node settled as redeemed makes them unredeemed again, and the next run redeems
// them.
func TestLedgerRolledBack(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	e.acknowledge(t, 3)
	r := &fakeRedeemer{}
	if rep, err := e.l.Redeem(t.Context(), r, nil, "test"); err != nil || rep.Redeemed != 3 {
		t.Fatalf("first run: %+v, %v", rep, err)
	}
	ch, _ := e.chans.Channel(e.sourceAddr, e.selfAddr)
	ch.TicketIndex = 1 // the blocks that paid 2 and 3 were dropped
	if n, err := e.l.RolledBack(ch); err != nil || n != 2 {
		t.Fatalf("rolled back %d, %v; want 2", n, err)
	}
	if st, _ := e.l.Statistics(); st.Redeemed != 1 || st.Unredeemed != 2 {
		t.Fatalf("statistics after the rollback %+v", st)
	}
	if rep, err := e.l.Redeem(t.Context(), r, nil, "test"); err != nil || rep.Redeemed != 2 || len(r.calls) != 5 {
		t.Fatalf("second run: %+v, %v, calls %v", rep, err, r.calls)
	}
}

// TestClosingChannelRedeemedWhateverThePolicy: with auto-redeem off, a closing incoming channel's
// tickets are still redeemed at once (they are void once it is closed), the operator is warned,
// and a failed redemption is retried at the next check until none is left.
func TestClosingChannelRedeemedWhateverThePolicy(t *testing.T) {
	e := newLedgerEnv(t)
	e.chans.Open(e.sourceAddr, e.selfAddr, oneToken)
	e.acknowledge(t, 3)
	r := &fakeRedeemer{fail: map[uint64]error{1: errors.New("provider down")}}
	closing := make(chan common.Address, 1)
	var logs testlog.Buffer
	a := &AutoRedeem{Ledger: e.l, Redeemer: r, Channels: e.chans, Closing: closing, Interval: 10 * time.Millisecond,
		Policy:   func() strategy.RedeemPolicy { return strategy.RedeemPolicy{Enabled: false, MaxGasShare: 0.05} },
		GasPrice: func(context.Context) (*big.Int, error) { return big.NewInt(1), nil },
		Logger:   slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	closing <- e.sourceAddr
	wait.For(t, func() bool { left, _ := e.l.Tickets(); return len(left) == 0 }, 10*time.Second, "the closing channel's tickets redeemed")
	cancel()
	<-done
	if len(r.calls) < 4 || !strings.Contains(logs.String(), "an incoming channel is closing") || !strings.Contains(logs.String(), "retrying at the next check") ||
		strings.Contains(logs.String(), "closure period is shorter") {
		t.Fatalf("calls %v (the first failed, so a retry), log:\n%s", r.calls, logs.String())
	}
}

// TestShortClosurePeriodWarned: Run warns once at start when the contract's closure period is
// shorter than a redemption needs, and not otherwise.
func TestShortClosurePeriodWarned(t *testing.T) {
	e := newLedgerEnv(t)
	for _, tc := range []struct {
		period time.Duration
		warned bool
	}{{time.Minute, true}, {time.Hour, false}} {
		var logs testlog.Buffer
		a := &AutoRedeem{Ledger: e.l, Redeemer: &fakeRedeemer{}, ClosurePeriod: tc.period, ClosureNeeds: MinClosurePeriod(8, 12*time.Second),
			Policy: func() strategy.RedeemPolicy { return strategy.RedeemPolicy{} }, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // Run warns, then returns at once
		if err := a.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "closure period is shorter"); got != tc.warned {
			t.Errorf("closure period %v against %v needed: warned %v", tc.period, MinClosurePeriod(8, 12*time.Second), got)
		}
	}
	if MinClosurePeriod(0, time.Second) > time.Minute {
		t.Error("the dev chain's default closure period (60 s) is below what a dev network needs")
	}
}
