package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

// inChannel is what an incoming channel owes this node in one epoch: the face amounts of the
// acknowledged winners in the store above the chain's ticket index (stored), and of the tickets
// accepted and not yet acknowledged (pending, in memory: at most what the relay's pending table
// holds). The winners themselves stay in the store; stored is re-read from it whenever the
// chain's index moves.
type inChannel struct {
	epoch      uint32
	lastIndex  uint64 // highest index accepted
	redeemed   uint64 // the chain's ticket index stored was computed at
	stored     uint256.Int
	pending    map[uint64]uint256.Int
	pendingSum uint256.Int
}

// owed is what the channel's source owes this node now.
func (st *inChannel) owed() uint256.Int {
	var o uint256.Int
	o.Add(&st.stored, &st.pendingSum)
	return o
}

// AcceptTicket validates t, received from the node with chain address from, for a packet this
// node relays (final false: its expected value must be between PricePerHop and MaxTicketValue)
// or receives as the recipient (final true: any amount, the sender's padding): t is for the
// channel from → this node, which is open, in the channel's epoch, with a win probability not
// below the network minimum, an index above the last one accepted, a face amount no more than
// the balance minus what from already owes this node, and signed by from. On success a
// relayer's ticket, and a recipient's worth more than 0, is pending until Acknowledge or Neglect
// settles it. A rejection is one of the package's ticket sentinels (errors.go). The
// proof-of-relay challenge is the caller's to check.
func (l *Ledger) AcceptTicket(from common.Address, t *tickets.Ticket, final bool) error {
	return l.accept(from, t, final, true)
}

// VerifyTicket checks that t is signed by from (ErrTicketSigner otherwise, counted as a
// rejection), and nothing else: it reads no state, so a caller may verify many tickets of one
// channel in parallel and then give them to AcceptVerified in index order. The recovery is an
// ecrecover, most of what accepting a ticket costs.
func (l *Ledger) VerifyTicket(from common.Address, t *tickets.Ticket) error {
	if signer, err := t.Signer(l.cfg.ChainID, l.cfg.Contract); err != nil || signer != from {
		l.rejected(t)
		return ErrTicketSigner
	}
	return nil
}

// AcceptVerified is AcceptTicket for a ticket VerifyTicket passed with the same from: every
// check but the signature's.
func (l *Ledger) AcceptVerified(from common.Address, t *tickets.Ticket, final bool) error {
	return l.accept(from, t, final, false)
}

func (l *Ledger) rejected(t *tickets.Ticket) {
	l.mu.Lock()
	l.unsaved.Rejected++
	l.unsaved.RejectedValue.Add(&l.unsaved.RejectedValue, &t.Amount)
	l.mu.Unlock()
}

func (l *Ledger) accept(from common.Address, t *tickets.Ticket, final, verify bool) (err error) {
	defer func() {
		if err != nil {
			l.rejected(t)
		}
	}()
	ch, ok := l.cfg.Channels.Channel(from, l.self)
	if !ok {
		return ErrChannelNotFound
	}
	if ch.Status != channels.Open {
		return ErrChannelNotOpen
	}
	if t.ChannelID != ch.ID {
		return ErrTicketChannel
	}
	if t.Epoch != ch.Epoch {
		return fmt.Errorf("%w: ticket %d, channel %d", ErrTicketEpoch, t.Epoch, ch.Epoch)
	}
	if !t.Amount.IsZero() && (t.WinProb > tickets.MaxWinProb || t.WinProb < l.minWinProb()) {
		return fmt.Errorf("%w: %s below %s", ErrTicketWinProb, tickets.FormatWinProb(t.WinProb), tickets.FormatWinProb(l.minWinProb()))
	}
	// The recipient takes any amount the channel covers: the sender's padding (PROTOCOL.md
	// §4.5). A relayer's ticket pays at least its price and at most what a sender pays, in
	// expected value.
	if !final {
		if v := t.Value(); v.Lt(&PricePerHop) || v.Gt(&MaxTicketValue) {
			return ErrTicketAmount
		}
	}
	// Cheap checks against the current state first, the signature (an ecrecover) last.
	if err := l.checkIncoming(&ch, t); err != nil {
		return err
	}
	if verify {
		if signer, err := t.Signer(l.cfg.ChainID, l.cfg.Contract); err != nil || signer != from {
			return ErrTicketSigner
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.incoming(&ch)
	if err != nil {
		return err
	}
	if err := st.check(&ch, t); err != nil { // again: another worker may have raced us
		return err
	}
	st.lastIndex = t.Index
	l.parties.received(from, &t.Amount)
	if !t.Amount.IsZero() {
		st.pending[t.Index] = t.Amount
		st.pendingSum.Add(&st.pendingSum, &t.Amount)
	}
	if !final || !t.Amount.IsZero() { // pending until Acknowledge stores it
		l.pending++
	}
	return nil
}

func (l *Ledger) checkIncoming(ch *channels.Channel, t *tickets.Ticket) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.incoming(ch)
	if err != nil {
		return err
	}
	return st.check(ch, t)
}

// incoming returns the state of channel ch, loading it from the store on first use, resetting
// it when the channel's epoch changed and re-reading what the store holds when the chain's
// ticket index moved. l.mu is held.
func (l *Ledger) incoming(ch *channels.Channel) (*inChannel, error) {
	st := l.in[ch.ID]
	if st == nil || st.epoch != ch.Epoch {
		st = &inChannel{epoch: ch.Epoch, pending: make(map[uint64]uint256.Int)}
		if err := l.reload(st, ch); err != nil {
			return nil, err
		}
		l.in[ch.ID] = st
		return st, nil
	}
	if st.redeemed != ch.TicketIndex {
		if err := l.reload(st, ch); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// reload recomputes what the store's winners of ch's epoch above the chain's index are worth,
// and forgets pending tickets at or below that index (the chain passed them: they are void).
// l.mu is held.
func (l *Ledger) reload(st *inChannel, ch *channels.Channel) error {
	acked, err := l.cfg.Store.AcknowledgedTicketsOf(ch.ID)
	if err != nil {
		return fmt.Errorf("load acknowledged tickets: %w", err)
	}
	st.stored.Clear()
	for _, a := range acked {
		if a.Ticket.Epoch != ch.Epoch {
			continue
		}
		st.lastIndex = max(st.lastIndex, a.Ticket.Index)
		if a.Ticket.Index > ch.TicketIndex {
			st.stored.Add(&st.stored, &a.Ticket.Amount)
		}
	}
	for i, amount := range st.pending {
		if i <= ch.TicketIndex {
			st.pendingSum.Sub(&st.pendingSum, &amount)
			delete(st.pending, i)
		}
	}
	st.redeemed = ch.TicketIndex
	return nil
}

// check validates t's index and face amount against the channel state without changing it.
func (st *inChannel) check(ch *channels.Channel, t *tickets.Ticket) error {
	if t.Index <= st.lastIndex || t.Index <= ch.TicketIndex {
		return fmt.Errorf("%w: %d after %d", ErrTicketIndex, t.Index, max(st.lastIndex, ch.TicketIndex))
	}
	balance, owed := balanceOf(ch), st.owed()
	var avail uint256.Int
	if _, under := avail.SubOverflow(&balance, &owed); under || avail.Lt(&t.Amount) {
		return ErrTicketBalance
	}
	return nil
}

// wins reports whether t, acknowledged with response, wins for this node, its holder (the
// channel's destination): the contract's draw (tickets.IsWinning) over this node's VRF output
// beta for the ticket hash, which the node's chain client proves at redemption. A ticket that
// always wins needs no beta and costs nothing; any other costs one vrf.OutputOf (about 50 µs).
// It fails only when the node's key has no proof the contract can check for this ticket
// (vrf.ErrUnprovable or vrf.ErrBadKey, probability about 2^-127): the ticket can never be paid.
func (l *Ledger) wins(t *tickets.Ticket, response [32]byte) (bool, error) {
	if t.AlwaysWins() {
		return true, nil
	}
	h := t.Hash(l.cfg.ChainID, l.cfg.Contract)
	beta, err := vrf.OutputOf(l.cfg.Key, h[:])
	if err != nil {
		return false, fmt.Errorf("vrf output of ticket %d: %w", t.Index, err)
	}
	return tickets.IsWinning(h, response, beta, t.WinProb), nil
}

// drawsPerWorker is the fewest tickets below certainty worth a goroutine of their own in draws
// (about 1.6 ms of VRF work).
const drawsPerWorker = 32

// draws is wins for every ticket of acks. The tickets below certainty are drawn by up to
// GOMAXPROCS goroutines, drawsPerWorker or more each, so that the relay's one committer, which
// calls Acknowledge, keeps up with acknowledgements on a machine with CPUs to spare.
func (l *Ledger) draws(acks []AckedTicket) (won []bool, errs []error) {
	won, errs = make([]bool, len(acks)), make([]error, len(acks))
	var lottery []int
	for i := range acks {
		if acks[i].Ticket.AlwaysWins() {
			won[i] = true
		} else {
			lottery = append(lottery, i)
		}
	}
	draw := func(i int) { won[i], errs[i] = l.wins(&acks[i].Ticket, acks[i].Response) }
	workers := min(runtime.GOMAXPROCS(0), len(lottery)/drawsPerWorker)
	if workers <= 1 {
		for _, i := range lottery {
			draw(i)
		}
		return won, errs
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(len(lottery)); k = next.Add(1) - 1 {
				draw(lottery[k])
			}
		})
	}
	wg.Wait()
	return won, errs
}

// settlePending takes a ticket off its channel's pending tickets and, when it won (and is above
// the index the stored sum was computed at), counts it as stored. l.mu is held.
func (l *Ledger) settlePending(t *tickets.Ticket, won bool) {
	st := l.in[t.ChannelID]
	if st == nil || st.epoch != t.Epoch {
		return
	}
	if amount, ok := st.pending[t.Index]; ok {
		st.pendingSum.Sub(&st.pendingSum, &amount)
		delete(st.pending, t.Index)
	}
	if won && t.Index > st.redeemed {
		st.stored.Add(&st.stored, &t.Amount)
	}
}

// Acknowledge records pending tickets as acknowledged, with their responses: the winners are
// stored durably (when it returns nil they survive a crash), the losers are dropped and counted.
// Whether a ticket below tickets.MaxWinProb won depends on this node's VRF output over its hash
// (wins), about 50 µs of work per such ticket, spread over the CPUs for a large batch (draws).
// One store transaction per call; the relay batches acknowledgements.
func (l *Ledger) Acknowledge(ctx context.Context, acks []AckedTicket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows := make([]store.AckedTicket, 0, len(acks))
	won, errs := l.draws(acks)
	void := make([]bool, len(acks))
	for i := range acks {
		a := &acks[i]
		if errs[i] != nil {
			// No VRF proof the contract accepts exists for this key and ticket (about 2^-127):
			// the ticket can never be paid. Not kept; counted as rejected.
			l.log.Warn("ledger: no VRF output for an acknowledged ticket; dropped", slog.Uint64("index", a.Ticket.Index), slog.Any("err", errs[i]))
			void[i] = true
			continue
		}
		if !won[i] {
			continue
		}
		if a.Unverified && !opens(a.Response, a.Ticket.Challenge) {
			// The contract would refuse it (ChallengeMismatch): a ticket its issuer made
			// unredeemable. Not kept; counted as rejected.
			won[i], void[i] = false, true
			continue
		}
		rows = append(rows, store.AckedTicket{Source: a.Source, Ticket: a.Ticket, Response: a.Response})
	}
	if err := l.cfg.Store.SaveAcknowledgedTickets(rows); err != nil {
		return fmt.Errorf("save %d acknowledged tickets: %w", len(rows), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range acks {
		t := &acks[i].Ticket
		l.settlePending(t, won[i])
		switch {
		case void[i]:
			l.unsaved.Rejected++
			l.unsaved.RejectedValue.Add(&l.unsaved.RejectedValue, &t.Amount)
		case !won[i]:
			l.unsaved.Losing++
			l.unsaved.LosingValue.Add(&l.unsaved.LosingValue, &t.Amount)
		}
	}
	l.pending -= min(l.pending, uint64(len(acks)))
	return nil
}

// Neglect gives up a pending ticket whose packet was never acknowledged (it expired, or the
// packet could not be forwarded).
func (l *Ledger) Neglect(from common.Address, t *tickets.Ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.settlePending(t, false)
	l.pending -= min(l.pending, 1)
	l.unsaved.Neglected++
}

// forgetStored takes a settled-unpaid ticket (losing or void) off what its channel owes. l.mu
// is held, and was held while the ticket left the store, so a reload saw it either in the store
// or not at all.
func (l *Ledger) forgetStored(t *tickets.Ticket) {
	if st := l.in[t.ChannelID]; st != nil && st.epoch == t.Epoch && t.Index > st.redeemed {
		if _, under := st.stored.SubOverflow(&st.stored, &t.Amount); under {
			st.stored.Clear()
		}
	}
}
