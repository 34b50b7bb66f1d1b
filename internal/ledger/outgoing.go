package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// outChannel is the state of an outgoing channel in one epoch.
type outChannel struct {
	mu          sync.Mutex
	epoch       uint32
	next, limit uint64 // indexes [next, limit) are reserved and unused
	// spare is the first index of a block of IndexBatch indexes reserved in the background
	// for epoch spareEpoch, before the current block runs out (0: none); fetching is true
	// while such a reservation is under way.
	spare      uint64
	spareEpoch uint32
	fetching   bool
	fetched    *sync.Cond // on mu: a background reservation ended
	// owed is what the tickets signed in epoch and not yet passed by the chain are worth, in
	// expected value (at a win probability below 1 the winners among them draw about that much);
	// loaded says it was read from the store for this epoch. unconfirmed is what the tickets
	// signed since the last stored record of owed are worth (at most IssuedSlack: past it,
	// signing waits for a record); saving is true while one is written in the background,
	// saved is broadcast when it ends, saveErr holds its failure.
	owed        issued
	loaded      bool
	unconfirmed uint256.Int
	saving      bool
	saved       *sync.Cond // on mu
	saveErr     error
}

// IssuedSlack is the value of the tickets an outgoing channel may sign beyond its last stored
// record of what it owes: 7.68 tokens. A record is written in the background whenever half of
// it is unrecorded; after a crash, the tickets signed after the record count as IssuedSlack, or
// as MaxTicketValue each when fewer indexes were reserved, until the chain's ticket index
// passes them (PROTOCOL.md §4.5). It is a bound in value, not in tickets, so that padded
// tickets (tickets.PadMax) do not hold back more of a channel after a crash.
var IssuedSlack = tickets.AmountFor(768)

// halfSlack is IssuedSlack / 2: past it, a record is started in the background.
var halfSlack = func() uint256.Int { var h uint256.Int; h.Rsh(&IssuedSlack, 1); return h }()

// IssueTicket signs a ticket of expected value `value` with the given challenge on this node's
// channel to `to`, with the channel's next outgoing index, which is never issued again (also
// after a crash). Its face amount is value at this node's outgoing win probability
// (tickets.FaceAmount). It is signed only if the channel's balance covers the face amount on top
// of what the tickets signed before and not yet passed by the chain are expected to draw
// (ErrNotEnoughBalance otherwise): the next hop accepts no more than that, so a message sent
// beyond it would be dropped on the way. It fails with ErrChannelNotFound, ErrChannelNotOpen,
// ErrNotEnoughBalance or ErrTicketAmount (value above MaxTicketValue) before using an index.
func (l *Ledger) IssueTicket(ctx context.Context, to common.Address, value *uint256.Int, challenge por.Challenge) (tickets.Ticket, error) {
	t, err := l.ReserveTicket(ctx, to, value, challenge)
	if err != nil {
		return t, err
	}
	return t, l.SignTicket(&t)
}

// SignTicket signs a ticket ReserveTicket returned. It reads no state: tickets of one channel
// may be signed in parallel (the signature is most of what issuing a ticket costs), as long as
// they reach the next hop in index order, the only order it accepts.
func (l *Ledger) SignTicket(t *tickets.Ticket) error {
	if err := t.Sign(l.cfg.Key, l.cfg.ChainID, l.cfg.Contract); err != nil {
		return fmt.Errorf("sign ticket: %w", err)
	}
	return nil
}

// ReserveTicket is IssueTicket without the signature (SignTicket): it checks the channel, takes
// the next index and counts the ticket as issued, with the same errors.
func (l *Ledger) ReserveTicket(ctx context.Context, to common.Address, value *uint256.Int, challenge por.Challenge) (tickets.Ticket, error) {
	ch, ok := l.cfg.Channels.Channel(l.self, to)
	if !ok {
		return tickets.Ticket{}, ErrChannelNotFound
	}
	if ch.Status != channels.Open {
		return tickets.Ticket{}, ErrChannelNotOpen
	}
	if value.Gt(&MaxTicketValue) { // the crash accounting assumes none is worth more
		return tickets.Ticket{}, fmt.Errorf("issue a ticket worth %s: %w", value.Dec(), ErrTicketAmount)
	}
	winProb := l.outWinProb()
	face, err := tickets.FaceAmount(value, winProb)
	if err != nil {
		return tickets.Ticket{}, fmt.Errorf("issue a ticket worth %s: %w", value.Dec(), ErrTicketAmount)
	}
	amount := value // what the crash accounting counts: the expected value
	balance := balanceOf(&ch)
	if err := ctx.Err(); err != nil {
		return tickets.Ticket{}, err
	}
	st := l.outgoing(ch.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if l.stopped.Load() { // checked under st.mu: saveIssued saw every ticket issued before
		return tickets.Ticket{}, ErrStopped
	}
	if err := l.sync(st, &ch); err != nil {
		return tickets.Ticket{}, err
	}
	if avail := st.owed.available(&balance); avail.Lt(&face) {
		return tickets.Ticket{}, ErrNotEnoughBalance
	}
	for st.unconfirmedWith(amount).Gt(&IssuedSlack) { // rare: the background record is late
		if st.saveErr != nil {
			err := st.saveErr
			st.saveErr = nil
			return tickets.Ticket{}, err
		}
		if !st.saving {
			l.startSave(st, ch.ID)
		}
		st.saved.Wait()
	}
	if st.next >= st.limit {
		for st.fetching { // the block is on its way: cheaper to wait than to reserve another
			st.fetched.Wait()
		}
		// The spare block is usable only above everything issued from this one (a synchronous
		// reservation may have overtaken it), in this epoch, and above the chain's index.
		if st.spare != 0 && st.spareEpoch == ch.Epoch && st.spare >= st.limit && st.spare > ch.TicketIndex {
			st.next, st.limit = st.spare, st.spare+l.cfg.IndexBatch
		} else {
			first, err := l.reserve(ch.ID, ch.Epoch, ch.TicketIndex+1)
			if err != nil {
				return tickets.Ticket{}, err
			}
			st.next, st.limit = first, first+l.cfg.IndexBatch
		}
		st.spare = 0
	}
	// Keep the next block reserved (an fsynced store write) off the hot path, started as soon
	// as this one is taken, so that issuing a ticket normally waits for no disk. A crash skips
	// at most two blocks.
	if !st.fetching && st.spare == 0 {
		st.fetching = true
		l.fetches.Add(1)
		go l.prefetch(st, ch.ID, ch.Epoch, max(ch.TicketIndex+1, st.limit))
	}
	t := tickets.Ticket{
		ChannelID: ch.ID,
		Amount:    face,
		Index:     st.next,
		Epoch:     ch.Epoch,
		WinProb:   winProb,
		Challenge: challenge,
	}
	st.owed.record(t.Index, amount)
	st.next++
	if st.unconfirmed.Add(&st.unconfirmed, amount); !st.unconfirmed.Lt(&halfSlack) && !st.saving {
		l.startSave(st, ch.ID)
	}
	return t, nil
}

// unconfirmedWith is what the tickets signed since the last record are worth with one more
// worth amount. st.mu is held.
func (st *outChannel) unconfirmedWith(amount *uint256.Int) *uint256.Int {
	var v uint256.Int
	return v.Add(&st.unconfirmed, amount)
}

// startSave writes the record of what st owes in the background. Every ticket signed later has
// an index of at least st.next, so the record is exact through st.next-1. st.mu is held.
func (l *Ledger) startSave(st *outChannel, id [32]byte) {
	rec, epoch, covered := st.owed.snapshot(st.next-min(st.next, 1)), st.epoch, st.unconfirmed
	st.saving = true
	l.fetches.Add(1)
	go func() {
		defer l.fetches.Done()
		err := l.cfg.Store.SaveIssuedTickets(id, epoch, rec)
		st.mu.Lock()
		defer st.mu.Unlock()
		st.saving = false
		if err != nil {
			st.saveErr = fmt.Errorf("store issued tickets: %w", err)
			l.log.Warn("ledger: storing what a channel owes failed", slog.Any("err", err))
		} else if st.epoch == epoch {
			if _, under := st.unconfirmed.SubOverflow(&st.unconfirmed, &covered); under {
				st.unconfirmed.Clear()
			}
		}
		st.saved.Broadcast()
	}()
}

// outgoing returns the state of outgoing channel id, creating it on first use.
func (l *Ledger) outgoing(id [32]byte) *outChannel {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.out[id]
	if st == nil {
		st = &outChannel{}
		st.fetched = sync.NewCond(&st.mu)
		st.saved = sync.NewCond(&st.mu)
		l.out[id] = st
	}
	return st
}

// sync brings st to channel ch's epoch and index: a new epoch starts afresh, the issued
// tickets of an epoch are read from the store on first use, and tickets the chain has passed
// stop counting. st.mu is held.
func (l *Ledger) sync(st *outChannel, ch *channels.Channel) error {
	if st.epoch != ch.Epoch || !st.loaded {
		if err := l.load(st, ch); err != nil {
			return err
		}
	}
	if st.next <= ch.TicketIndex { // e.g. a lost store: the chain has seen higher indexes
		st.next, st.limit = 0, 0
	}
	st.owed.prune(ch.TicketIndex)
	return nil
}

// load reads what channel ch owes in its epoch from the store (after a crash, with the
// tickets that may have been signed after the last record) and stores it again at once, exact
// through every index reserved so far: tickets signed from now on are counted against this
// record. st.mu is held.
func (l *Ledger) load(st *outChannel, ch *channels.Channel) error {
	rec, found, next, err := l.cfg.Store.IssuedTicketsOf(ch.ID, ch.Epoch)
	if err != nil {
		return fmt.Errorf("load issued tickets: %w", err)
	}
	var owed issued
	if found {
		owed.restore(rec, next, &IssuedSlack, &MaxTicketValue)
	}
	if err := l.cfg.Store.SaveIssuedTickets(ch.ID, ch.Epoch, owed.snapshot(next-min(next, 1))); err != nil {
		return fmt.Errorf("store issued tickets: %w", err)
	}
	st.epoch, st.next, st.limit, st.loaded = ch.Epoch, 0, 0, true
	st.owed, st.saveErr = owed, nil
	st.unconfirmed.Clear()
	return nil
}

// reserve reserves a block of outgoing indexes of a channel epoch.
func (l *Ledger) reserve(id [32]byte, epoch uint32, min uint64) (uint64, error) {
	first, err := l.cfg.Store.ReserveTicketIndexes(id, epoch, min, l.cfg.IndexBatch)
	if err != nil {
		return 0, fmt.Errorf("reserve ticket index: %w", err)
	}
	return first, nil
}

// prefetch reserves a block of outgoing indexes of channel id in epoch for st's next use.
func (l *Ledger) prefetch(st *outChannel, id [32]byte, epoch uint32, min uint64) {
	defer l.fetches.Done()
	first, err := l.reserve(id, epoch, min)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.fetching = false
	st.fetched.Broadcast()
	if err != nil {
		l.log.Warn("ledger: reserving ticket indexes ahead failed", slog.Any("err", err))
		return
	}
	if st.epoch == epoch {
		st.spare, st.spareEpoch = first, epoch
	}
}

// saveIssued stores, for every outgoing channel, the complete record of what it issued, so
// that a clean restart starts from the exact amount owed.
func (l *Ledger) saveIssued() error {
	l.stopped.Store(true)
	l.mu.Lock()
	out := make(map[[32]byte]*outChannel, len(l.out))
	maps.Copy(out, l.out)
	l.mu.Unlock()
	var errs []error
	for id, st := range out {
		st.mu.Lock()
		if st.loaded {
			rec := st.owed.snapshot(store.IssuedComplete)
			if err := l.cfg.Store.SaveIssuedTickets(id, st.epoch, rec); err != nil {
				errs = append(errs, fmt.Errorf("store issued tickets: %w", err))
			}
		}
		st.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Available is what the channel from this node to `to` can still pay for, in face amount: its
// balance less what the tickets signed on it that the chain has not passed yet are expected to
// draw. ok is false without an open channel.
func (l *Ledger) Available(to common.Address) (avail uint256.Int, ok bool) {
	ch, found := l.cfg.Channels.Channel(l.self, to)
	if !found || ch.Status != channels.Open {
		return avail, false
	}
	st := l.outgoing(ch.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := l.sync(st, &ch); err != nil {
		return avail, false
	}
	balance := balanceOf(&ch)
	return st.owed.available(&balance), true
}

// Capacity is the largest expected value a ticket on this node's channel to `to` can carry now:
// what Available leaves, at this node's outgoing win probability (a ticket's face is its value
// divided by it). Path selection and the channel strategy compare it with the values the
// protocol prices in (PROTOCOL.md §4.9). ok is false without an open channel.
func (l *Ledger) Capacity(to common.Address) (capacity uint256.Int, ok bool) {
	avail, ok := l.Available(to)
	if !ok {
		return capacity, false
	}
	return tickets.ExpectedValue(&avail, l.outWinProb()), true
}

// CapacityOf is Capacity for another node's channel with the given balance, assuming its source
// signs at the network minimum (the default; 1 without a known minimum).
func (l *Ledger) CapacityOf(balance *uint256.Int) uint256.Int {
	w := l.minWinProb()
	if w == 0 {
		w = tickets.MaxWinProb
	}
	return tickets.ExpectedValue(balance, w)
}
