package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/tickets"
)

// redeemProgressEvery is the most often a running redemption logs its progress.
var redeemProgressEvery = 5 * time.Second

// redeemTickets redeems every acknowledged ticket (from == nil) or those of the channel from
// *from, for why ("requested", "threshold reached", …). It logs one line when it starts, its
// progress at most every redeemProgressEvery while it sends transactions, and one summary line
// when it ends, never a line per ticket.
func (s *settlement) redeemTickets(ctx context.Context, from *common.Address, why string) (relay.RedeemReport, error) {
	ledger := s.n.msg.ledger
	var todo []relay.AckedTicket
	var err error
	if from == nil {
		todo, err = ledger.Tickets()
	} else {
		todo, err = ledger.TicketsFrom(*from)
	}
	if err != nil {
		return relay.RedeemReport{}, err
	}
	if len(todo) == 0 {
		return relay.RedeemReport{}, nil
	}
	log := s.n.log.With("why", why)
	log.Info("redeeming tickets", "tickets", len(todo))
	start := time.Now()
	r := &progressRedeemer{next: redeemer{s.client}, log: log, total: len(todo), every: redeemProgressEvery, now: time.Now}
	r.last = r.now()
	var rep relay.RedeemReport
	if from == nil {
		rep, err = ledger.Redeem(ctx, r)
	} else {
		rep, err = ledger.RedeemFrom(ctx, r, *from)
	}
	attrs := []any{"redeemed", rep.Redeemed, "value", formatTokens(rep.Value.ToBig()) + " " + s.client.TokenSymbol(),
		"losing", rep.Losing, "neglected", rep.Neglected, "of", len(todo), "took", time.Since(start).Round(time.Millisecond)}
	if err != nil {
		log.Warn("ticket redemption stopped", append(attrs, "err", err)...)
	} else {
		log.Info("tickets redeemed", attrs...)
	}
	return rep, err
}

// progressRedeemer passes redemptions on to next and logs how many it sent, at most every
// every, so that an operator (and relayctl, which waits on the admin WebSocket) sees a long
// redemption move.
type progressRedeemer struct {
	next  relay.Redeemer
	log   *slog.Logger
	total int
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	sent int
	last time.Time
}

func (p *progressRedeemer) RedeemTicket(ctx context.Context, t tickets.Ticket, response [32]byte) (common.Hash, error) {
	h, err := p.next.RedeemTicket(ctx, t, response)
	if err != nil {
		return h, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent++
	if now := p.now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.log.Info("redeeming tickets: progress", "transactions", p.sent, "tickets", p.total)
	}
	return h, nil
}
