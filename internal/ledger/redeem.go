package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// RedeemChunk is how many winning tickets Redeem hands the Redeemer at a time: the results of
// one chunk are settled in the store (one transaction) before the next is sent, so a crash loses
// at most one chunk's marks, which the next run recovers from the chain's ticket index.
const RedeemChunk = 200

// redeemProgressEvery is the most often a running redemption logs its progress.
const redeemProgressEvery = 5 * time.Second

// Redeemer submits winning tickets to the channels contract. ChainRedeemer is the production
// one.
type Redeemer interface {
	// RedeemBatch redeems tickets (winners, ordered by channel and index, at most RedeemChunk)
	// in as few transactions as it can and returns one result per ticket, in order, for every
	// ticket whose transaction was mined; tickets after the results are unknown, and err says
	// why they are. It never reports a ticket paid that the chain did not pay.
	RedeemBatch(ctx context.Context, batch []AckedTicket) ([]RedeemResult, error)
}

// RedeemResult is the chain's verdict on one ticket.
type RedeemResult struct {
	// Tx is the transaction the verdict was mined in.
	Tx common.Hash
	// Err is nil when the contract paid the ticket. Otherwise it wraps ErrAlreadyRedeemed (the
	// index was passed: paid before, or void), ErrTicketVoid (refused for good),
	// ErrNotEnoughBalance (the channel cannot pay it now) or ErrContractRefused.
	Err error
}

// RedeemReport says what a redemption run did.
type RedeemReport struct {
	// Redeemed counts tickets the contract paid in this run (or had already paid).
	Redeemed int
	// Value is the face amount of the tickets redeemed in this run.
	Value uint256.Int
	// Losing and Neglected count tickets settled as losing or void.
	Losing, Neglected int
	// Left counts the tickets that are still unredeemed after the run (a failure stopped it, or
	// their channel cannot pay them now).
	Left int
}

// Redeem redeems the acknowledged tickets (every channel's when from is nil, else those of the
// channel from *from) through r, in chunks of RedeemChunk in channel and index order, for the
// reason why (logged: "requested", "threshold reached", …). A ticket is marked redeemed only
// once the chain paid it or already counts its index as redeemed (so a run that crashed between
// the transaction and the mark finishes cleanly the next time). Tickets of a closed or reopened
// channel, or whose response does not open their challenge, are settled as neglected without a
// transaction; losing ones as losing. A failure stops the run; the error says why. Concurrent
// calls are serialised. It logs one line when it starts, its progress at most every 5 s and a
// summary, never a line per ticket.
func (l *Ledger) Redeem(ctx context.Context, r Redeemer, from *common.Address, why string) (RedeemReport, error) {
	l.redeemMu.Lock()
	defer l.redeemMu.Unlock()
	if err := l.cfg.Store.PrunePaid(l.now().Add(-store.PaidKept)); err != nil {
		l.log.Warn("ledger: forgetting old redeemed tickets failed", "err", err)
	}
	var rows []store.AckedTicket
	var err error
	if from == nil {
		rows, err = l.cfg.Store.AcknowledgedTickets()
	} else {
		rows, err = l.cfg.Store.AcknowledgedTicketsOf(tickets.ChannelID(*from, l.self))
	}
	if err != nil {
		return RedeemReport{}, fmt.Errorf("redeem: %w", err)
	}
	if len(rows) == 0 {
		return RedeemReport{}, nil
	}
	log := l.log.With("why", why)
	level := slog.LevelInfo
	if why == whyThreshold {
		level = slog.LevelDebug
	}
	log.Log(ctx, level, "redeeming tickets", "tickets", len(rows))
	start := l.now()
	rep, err := l.redeem(ctx, r, rows, log)
	attrs := []any{"redeemed", rep.Redeemed, "value", token.Of(rep.Value.ToBig()).String(), "losing", rep.Losing,
		"neglected", rep.Neglected, "left", rep.Left, "of", len(rows), "took", l.now().Sub(start).Round(time.Millisecond)}
	if err != nil {
		log.Warn("ticket redemption stopped", append(attrs, "err", err)...)
	} else {
		log.Log(ctx, level, "tickets redeemed", attrs...)
	}
	return rep, err
}

func (l *Ledger) redeem(ctx context.Context, r Redeemer, rows []store.AckedTicket, log *slog.Logger) (RedeemReport, error) {
	var rep RedeemReport
	// First what needs no transaction; the winners wait in todo.
	var settle []store.Settlement
	var todo []AckedTicket
	var errs []error
	for i := range rows {
		a := &rows[i]
		t := &a.Ticket
		ch, ok := l.cfg.Channels.Channel(a.Source, l.self)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("redeem ticket %d: %w", t.Index, ErrChannelNotFound))
			rep.Left++
		case ch.Status == channels.Closed || ch.Epoch != t.Epoch:
			settle = append(settle, settlement(t, store.OutcomeNeglected))
		case t.Index <= ch.TicketIndex:
			settle = append(settle, settlement(t, store.OutcomeRedeemed))
		case !opens(a.Response, t.Challenge):
			// The contract would revert (ChallengeMismatch): the packet's sender committed to an
			// acknowledgement that does not open the challenge it had the ticket carry
			// (PROTOCOL.md §2). Void, without a transaction.
			log.Warn("ledger: acknowledged ticket's response does not open its challenge", slog.Uint64("index", t.Index))
			settle = append(settle, settlement(t, store.OutcomeNeglected))
		default:
			switch won, err := l.wins(t, a.Response); {
			case err != nil:
				// No VRF proof the contract accepts: it would refuse the ticket (InvalidVRFProof).
				log.Warn("ledger: no VRF output for a stored ticket; settled as neglected", slog.Uint64("index", t.Index), slog.Any("err", err))
				settle = append(settle, settlement(t, store.OutcomeNeglected))
			case !won:
				settle = append(settle, settlement(t, store.OutcomeLosing)) // stored before losers were dropped
			default:
				todo = append(todo, AckedTicket{Source: a.Source, Ticket: *t, Response: a.Response})
			}
		}
	}
	if err := l.settle(settle, rows, &rep); err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	last := l.now()
	for len(todo) > 0 {
		chunk := todo[:min(len(todo), l.redeemChunk)]
		if err := ctx.Err(); err != nil {
			rep.Left += len(todo)
			return rep, errors.Join(append(errs, err)...)
		}
		results, err := r.RedeemBatch(ctx, chunk)
		results = results[:min(len(results), len(chunk))]
		settle = settle[:0]
		for i, res := range results {
			t := &chunk[i].Ticket
			switch {
			case res.Err == nil, errors.Is(res.Err, ErrAlreadyRedeemed):
				settle = append(settle, settlement(t, store.OutcomeRedeemed))
			case errors.Is(res.Err, ErrTicketVoid):
				log.Warn("ledger: the contract refused a ticket for good; settled as neglected", slog.Uint64("index", t.Index), slog.Any("err", res.Err))
				settle = append(settle, settlement(t, store.OutcomeNeglected))
			default: // stays unredeemed: the channel cannot pay it now, or an unknown refusal
				rep.Left++
				errs = append(errs, fmt.Errorf("redeem ticket %d: %w", t.Index, res.Err))
			}
		}
		if serr := l.settle(settle, rowsOf(chunk), &rep); serr != nil {
			rep.Left += len(todo) - len(settle)
			return rep, errors.Join(append(errs, serr)...)
		}
		if err != nil {
			rep.Left += len(todo) - len(results)
			return rep, errors.Join(append(errs, err)...)
		}
		todo = todo[len(chunk):]
		if now := l.now(); now.Sub(last) >= redeemProgressEvery && len(todo) > 0 {
			last = now
			log.Info("redeeming tickets: progress", "redeemed", rep.Redeemed, "left", len(todo))
		}
	}
	return rep, errors.Join(errs...)
}

func settlement(t *tickets.Ticket, o store.Outcome) store.Settlement {
	return store.Settlement{ChannelID: t.ChannelID, Epoch: t.Epoch, Index: t.Index, Outcome: o}
}

func rowsOf(batch []AckedTicket) []store.AckedTicket {
	rows := make([]store.AckedTicket, len(batch))
	for i, a := range batch {
		rows[i] = store.AckedTicket{Source: a.Source, Ticket: a.Ticket, Response: a.Response}
	}
	return rows
}

// settle marks list in the store in one transaction and counts it in rep; the losing and void
// tickets stop counting as owed. rows holds the tickets list names (for their amounts).
func (l *Ledger) settle(list []store.Settlement, rows []store.AckedTicket, rep *RedeemReport) error {
	if len(list) == 0 {
		return nil
	}
	byKey := make(map[store.Settlement]*store.AckedTicket, len(rows))
	for i := range rows {
		byKey[settlement(&rows[i].Ticket, 0)] = &rows[i]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.cfg.Store.SettleTickets(list); err != nil {
		return fmt.Errorf("settle %d tickets: %w", len(list), err)
	}
	for _, s := range list {
		key := s
		key.Outcome = 0
		row := byKey[key]
		if row == nil {
			continue
		}
		t := &row.Ticket
		switch s.Outcome {
		case store.OutcomeRedeemed:
			rep.Redeemed++
			rep.Value.Add(&rep.Value, &t.Amount)
			l.parties.redeemed(row.Source, &t.Amount)
		case store.OutcomeLosing:
			rep.Losing++
			l.forgetStored(t)
		case store.OutcomeNeglected:
			rep.Neglected++
			l.forgetStored(t)
		}
	}
	return nil
}

// opens reports whether address(response·G) == challenge, the contract's proof-of-relay check.
func opens(response [32]byte, challenge [20]byte) bool {
	c, err := por.ChallengeOf(por.Scalar(response))
	return err == nil && c == por.Challenge(challenge)
}

// RolledBack takes in a reorganisation that moved channel ch's ticket index back (the indexer's
// Event.Reorg with the channel's state restored): the tickets of ch that this node settled as
// redeemed above the restored index were not paid after all; they are unredeemed again, and
// redeemed by the next run. It returns how many came back. Only tickets settled within
// store.PaidKept are known.
func (l *Ledger) RolledBack(ch channels.Channel) (int, error) {
	if ch.Destination != l.self {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.cfg.Store.UnsettleRedeemed(ch.ID, ch.Epoch, ch.TicketIndex)
	if err != nil {
		return 0, fmt.Errorf("put back the tickets a reorganisation unpaid: %w", err)
	}
	if st := l.in[ch.ID]; st != nil && n > 0 {
		st.redeemed = ^uint64(0) // reload what the store holds at the next use
	}
	if n > 0 {
		l.log.Warn("ledger: a chain reorganisation undid the redemption of tickets; they will be redeemed again",
			"tickets", n, "channel", common.Hash(ch.ID).Hex())
	}
	return n, nil
}
