package relay

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// Ledger defaults.
const (
	// DefaultIndexBatch is how many outgoing ticket indexes the Ledger reserves in the store
	// at a time (one fsync per batch, done ahead in the background; a crash skips at most
	// twice this many, which the contract allows). At 64 the background reservation, queued
	// behind acknowledged-ticket commits on a busy disk, did not always finish in time.
	DefaultIndexBatch = 1024
	// DefaultFlushInterval is how often Ledger.Run persists the rejected and neglected counters.
	DefaultFlushInterval = 5 * time.Second
)

// LedgerConfig configures a Ledger. Key, ChainID, Contract, Channels and Store are required.
type LedgerConfig struct {
	// Key is the node's secp256k1 key: it signs outgoing tickets, and its address is the
	// destination of incoming channels and the source of outgoing ones.
	Key *ecdsa.PrivateKey
	// ChainID and Contract name the channels contract deployment the tickets are for.
	ChainID  uint64
	Contract common.Address
	// Channels looks channels up in the node's view of the chain.
	Channels ChannelLookup
	// Store keeps acknowledged tickets, outgoing index reservations and counters.
	Store *store.DB
	// IndexBatch is the number of indexes reserved per store write (default DefaultIndexBatch).
	IndexBatch uint64
	// FlushInterval is how often Run persists counters (default DefaultFlushInterval).
	FlushInterval time.Duration
	// Logger receives the ledger's logs. Optional: nil discards them.
	Logger *slog.Logger
}

// Ledger is the Payments implementation over the node's store and channel view. Incoming
// state (last accepted index, what a source owes) lives in memory and is rebuilt from the
// acknowledged tickets in the store; pending (unacknowledged) tickets are not persisted, they
// are worth nothing until acknowledged. It is safe for concurrent use.
type Ledger struct {
	cfg  LedgerConfig
	log  *slog.Logger
	self common.Address

	fetches sync.WaitGroup // background index reservations

	mu       sync.Mutex
	in       map[[32]byte]*inChannel
	out      map[[32]byte]*outChannel
	pending  uint64
	unsaved  counters   // rejected and neglected not yet persisted
	flushMu  sync.Mutex // one flush at a time, so Statistics waits for one under way
	redeemMu sync.Mutex
	stopped  atomic.Bool // Run ended: no more outgoing tickets (saveIssued stored them all)
}

type counters struct {
	neglected, rejected uint64
	rejectedValue       uint256.Int
}

// inChannel is the state of an incoming channel in one epoch.
type inChannel struct {
	epoch     uint32
	lastIndex uint64
	owed      []owedTicket // pending and acknowledged, unredeemed, by index
	owedSum   uint256.Int
}

type owedTicket struct {
	index  uint64
	amount uint256.Int
}

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
	// owed is what the tickets signed in epoch and not yet passed by the chain are worth;
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
// as MaxTicketAmount each when fewer indexes were reserved, until the chain's ticket index
// passes them (PROTOCOL.md §4.5). It is a bound in value, not in tickets, so that padded
// tickets (tickets.PadMax) do not hold back more of a channel after a crash.
var IssuedSlack = tickets.AmountFor(768)

// halfSlack is IssuedSlack / 2: past it, a record is started in the background.
var halfSlack = func() uint256.Int { var h uint256.Int; h.Rsh(&IssuedSlack, 1); return h }()

// NewLedger checks cfg and returns a Ledger. It starts nothing; Run persists counters.
func NewLedger(cfg LedgerConfig) (*Ledger, error) {
	switch {
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: Key is required", ErrInvalidConfig)
	case cfg.Channels == nil:
		return nil, fmt.Errorf("%w: Channels is required", ErrInvalidConfig)
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: Store is required", ErrInvalidConfig)
	case cfg.ChainID == 0:
		return nil, fmt.Errorf("%w: ChainID is required", ErrInvalidConfig)
	case cfg.Contract == (common.Address{}):
		return nil, fmt.Errorf("%w: Contract is required", ErrInvalidConfig)
	}
	if cfg.IndexBatch == 0 {
		cfg.IndexBatch = DefaultIndexBatch
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Ledger{
		cfg:  cfg,
		log:  log,
		self: crypto.PubkeyToAddress(cfg.Key.PublicKey),
		in:   make(map[[32]byte]*inChannel),
		out:  make(map[[32]byte]*outChannel),
	}, nil
}

// Run persists the rejected and neglected counters every FlushInterval and once more when ctx
// ends, then returns nil.
func (l *Ledger) Run(ctx context.Context) error {
	t := time.NewTicker(l.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.fetches.Wait()
			return errors.Join(l.flush(), l.saveIssued())
		case <-t.C:
			if err := l.flush(); err != nil {
				l.log.Error("ledger: persisting ticket counters failed", slog.Any("err", err))
			}
		}
	}
}

func (l *Ledger) flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	c := l.unsaved
	l.unsaved = counters{}
	l.mu.Unlock()
	if err := l.cfg.Store.AddTicketCounters(c.neglected, c.rejected, c.rejectedValue); err != nil {
		l.mu.Lock()
		l.unsaved.neglected += c.neglected
		l.unsaved.rejected += c.rejected
		l.unsaved.rejectedValue.Add(&l.unsaved.rejectedValue, &c.rejectedValue)
		l.mu.Unlock()
		return fmt.Errorf("flush ticket counters: %w", err)
	}
	return nil
}

func reject(reason error) error { return fmt.Errorf("%w: %w", ErrInvalidTicket, reason) }

// AcceptTicket implements Payments.
func (l *Ledger) AcceptTicket(from common.Address, t *tickets.Ticket, final bool) (err error) {
	defer func() {
		if err != nil {
			l.mu.Lock()
			l.unsaved.rejected++
			l.unsaved.rejectedValue.Add(&l.unsaved.rejectedValue, &t.Amount)
			l.mu.Unlock()
		}
	}()
	ch, ok := l.cfg.Channels.Channel(from, l.self)
	if !ok {
		return reject(ErrChannelNotFound)
	}
	if ch.Status != StatusOpen {
		return reject(ErrChannelNotOpen)
	}
	if t.ChannelID != ch.ID {
		return reject(ErrTicketChannel)
	}
	if t.Epoch != ch.Epoch {
		return reject(fmt.Errorf("%w: ticket %d, channel %d", ErrTicketEpoch, t.Epoch, ch.Epoch))
	}
	// The recipient takes any amount the channel covers: the sender's padding (PROTOCOL.md
	// §4.5). A relayer's ticket pays at least its price and at most what a sender pays.
	if !final && (t.Amount.Lt(&PricePerHop) || t.Amount.Gt(&MaxTicketAmount)) {
		return reject(ErrTicketAmount)
	}
	// Cheap checks against the current state first, the signature (an ecrecover) last.
	if err := l.checkIncoming(ch, t); err != nil {
		return err
	}
	signer, err := t.Signer(l.cfg.ChainID, l.cfg.Contract)
	if err != nil || signer != from {
		return reject(ErrTicketSigner)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.incoming(ch)
	if err != nil {
		return err
	}
	if err := st.admit(ch, t); err != nil { // again: another worker may have raced us
		return err
	}
	if !final || !t.Amount.IsZero() { // pending until Acknowledge stores it
		l.pending++
	}
	return nil
}

func (l *Ledger) checkIncoming(ch ChannelState, t *tickets.Ticket) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.incoming(ch)
	if err != nil {
		return err
	}
	return st.check(ch, t)
}

// incoming returns the state of channel ch, loading it from the store on first use and
// resetting it when the channel's epoch changed. l.mu is held.
func (l *Ledger) incoming(ch ChannelState) (*inChannel, error) {
	st := l.in[ch.ID]
	if st != nil && st.epoch == ch.Epoch {
		return st, nil
	}
	st = &inChannel{epoch: ch.Epoch}
	acked, err := l.cfg.Store.AcknowledgedTicketsOf(ch.ID)
	if err != nil {
		return nil, fmt.Errorf("load acknowledged tickets: %w", err)
	}
	for _, a := range acked {
		if a.Ticket.Epoch == ch.Epoch {
			st.lastIndex = max(st.lastIndex, a.Ticket.Index)
			st.owed = append(st.owed, owedTicket{a.Ticket.Index, a.Ticket.Amount})
			st.owedSum.Add(&st.owedSum, &a.Ticket.Amount)
		}
	}
	l.in[ch.ID] = st
	return st, nil
}

// check validates t's index and amount against the channel state without changing it.
func (st *inChannel) check(ch ChannelState, t *tickets.Ticket) error {
	st.prune(ch.TicketIndex)
	if t.Index <= st.lastIndex || t.Index <= ch.TicketIndex {
		return reject(fmt.Errorf("%w: %d after %d", ErrTicketIndex, t.Index, max(st.lastIndex, ch.TicketIndex)))
	}
	var avail uint256.Int
	if _, under := avail.SubOverflow(&ch.Balance, &st.owedSum); under || avail.Lt(&t.Amount) {
		return reject(ErrTicketBalance)
	}
	return nil
}

// admit checks t and records it as owed.
func (st *inChannel) admit(ch ChannelState, t *tickets.Ticket) error {
	if err := st.check(ch, t); err != nil {
		return err
	}
	st.lastIndex = t.Index
	if !t.Amount.IsZero() {
		st.owed = append(st.owed, owedTicket{t.Index, t.Amount})
		st.owedSum.Add(&st.owedSum, &t.Amount)
	}
	return nil
}

// prune forgets owed tickets the chain has redeemed (index ≤ redeemed): the channel balance
// the chain reports no longer includes them.
func (st *inChannel) prune(redeemed uint64) {
	n := 0
	for n < len(st.owed) && st.owed[n].index <= redeemed {
		st.owedSum.Sub(&st.owedSum, &st.owed[n].amount)
		n++
	}
	if n > 0 {
		st.owed = slices.Delete(st.owed, 0, n)
	}
}

// forget removes one owed ticket (neglected or losing).
func (st *inChannel) forget(index uint64) {
	i, ok := slices.BinarySearchFunc(st.owed, index, func(o owedTicket, idx uint64) int { return cmp.Compare(o.index, idx) })
	if ok {
		st.owedSum.Sub(&st.owedSum, &st.owed[i].amount)
		st.owed = slices.Delete(st.owed, i, i+1)
	}
}

// IssueTicket implements Payments. A ticket is signed only if the channel's balance covers it
// on top of every ticket signed before that the chain has not passed yet (ErrNotEnoughBalance
// otherwise): the next hop accepts no more than that, so a message sent beyond it would be
// dropped on the way.
func (l *Ledger) IssueTicket(ctx context.Context, to common.Address, amount *uint256.Int, challenge por.Challenge) (tickets.Ticket, error) {
	ch, ok := l.cfg.Channels.Channel(l.self, to)
	if !ok {
		return tickets.Ticket{}, ErrChannelNotFound
	}
	if ch.Status != StatusOpen {
		return tickets.Ticket{}, ErrChannelNotOpen
	}
	if amount.Gt(&MaxTicketAmount) { // the crash accounting assumes none is worth more
		return tickets.Ticket{}, fmt.Errorf("issue a ticket worth %s: %w", amount.Dec(), ErrTicketAmount)
	}
	if err := ctx.Err(); err != nil {
		return tickets.Ticket{}, err
	}
	st := l.outgoing(ch.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if l.stopped.Load() { // checked under st.mu: saveIssued saw every ticket issued before
		return tickets.Ticket{}, ErrStopped
	}
	if err := l.sync(st, ch); err != nil {
		return tickets.Ticket{}, err
	}
	if avail := st.owed.available(&ch.Balance); avail.Lt(amount) {
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
		Amount:    *amount,
		Index:     st.next,
		Epoch:     ch.Epoch,
		WinProb:   tickets.MaxWinProb,
		Challenge: challenge,
	}
	if err := t.Sign(l.cfg.Key, l.cfg.ChainID, l.cfg.Contract); err != nil {
		return tickets.Ticket{}, fmt.Errorf("sign ticket: %w", err)
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
func (l *Ledger) sync(st *outChannel, ch ChannelState) error {
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
func (l *Ledger) load(st *outChannel, ch ChannelState) error {
	rec, found, next, err := l.cfg.Store.IssuedTicketsOf(ch.ID, ch.Epoch)
	if err != nil {
		return fmt.Errorf("load issued tickets: %w", err)
	}
	var owed issued
	if found {
		owed.restore(rec, next, &IssuedSlack, &MaxTicketAmount)
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

// Available is what the channel from this node to `to` can still pay for: its balance less the
// tickets signed on it that the chain has not passed yet. ok is false without an open channel.
func (l *Ledger) Available(to common.Address) (avail uint256.Int, ok bool) {
	ch, found := l.cfg.Channels.Channel(l.self, to)
	if !found || ch.Status != StatusOpen {
		return avail, false
	}
	st := l.outgoing(ch.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := l.sync(st, ch); err != nil {
		return avail, false
	}
	return st.owed.available(&ch.Balance), true
}

// Acknowledge implements Payments: one store transaction for the batch.
func (l *Ledger) Acknowledge(ctx context.Context, acks []AckedTicket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows := make([]store.AckedTicket, len(acks))
	for i, a := range acks {
		rows[i] = store.AckedTicket{Source: a.Source, Ticket: a.Ticket, Response: a.Response}
	}
	if err := l.cfg.Store.SaveAcknowledgedTickets(rows); err != nil {
		return fmt.Errorf("save %d acknowledged tickets: %w", len(acks), err)
	}
	l.mu.Lock()
	l.pending -= min(l.pending, uint64(len(acks)))
	l.mu.Unlock()
	return nil
}

// Neglect implements Payments.
func (l *Ledger) Neglect(from common.Address, t *tickets.Ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.in[t.ChannelID]; st != nil && st.epoch == t.Epoch {
		st.forget(t.Index)
	}
	l.pending -= min(l.pending, 1)
	l.unsaved.neglected++
}

// Tickets returns every acknowledged, unredeemed ticket, ordered by channel, epoch and index.
func (l *Ledger) Tickets() ([]AckedTicket, error) {
	rows, err := l.cfg.Store.AcknowledgedTickets()
	return fromRows(rows), err
}

// TicketsFrom returns the acknowledged, unredeemed tickets of the channel from source to this
// node, in index order.
func (l *Ledger) TicketsFrom(source common.Address) ([]AckedTicket, error) {
	rows, err := l.cfg.Store.AcknowledgedTicketsOf(tickets.ChannelID(source, l.self))
	return fromRows(rows), err
}

func fromRows(rows []store.AckedTicket) []AckedTicket {
	out := make([]AckedTicket, len(rows))
	for i, r := range rows {
		out[i] = AckedTicket{Source: r.Source, Ticket: r.Ticket, Response: r.Response}
	}
	return out
}

// Statistics are the node's ticket statistics (GET /tickets/statistics). Values are in the
// token's smallest unit.
type Statistics struct {
	// Pending counts tickets received for relayed packets that await the next hop's
	// acknowledgement, and padded tickets received as the recipient until they are stored.
	Pending uint64
	// Unredeemed and UnredeemedValue count acknowledged tickets not yet redeemed.
	Unredeemed      uint64
	UnredeemedValue uint256.Int
	// Redeemed and RedeemedValue count tickets the contract paid.
	Redeemed      uint64
	RedeemedValue uint256.Int
	// LosingTickets counts acknowledged tickets that did not win.
	LosingTickets uint64
	// WinProportion is Redeemed / (Redeemed + LosingTickets), 0 before any settled ticket.
	WinProportion float64
	// Neglected counts tickets never acknowledged in time, or void before redemption.
	Neglected uint64
	// Rejected and RejectedValue count incoming tickets that failed validation.
	Rejected      uint64
	RejectedValue uint256.Int
}

// Statistics returns the ticket statistics. Every count but Pending is read from the store,
// after the neglected and rejected tickets counted in memory since the last flush are stored:
// a count once shown never drops, also when the process is killed.
func (l *Ledger) Statistics() (Statistics, error) {
	if err := l.flush(); err != nil {
		return Statistics{}, err
	}
	c, err := l.cfg.Store.TicketCounters()
	if err != nil {
		return Statistics{}, fmt.Errorf("ticket counters: %w", err)
	}
	s := Statistics{
		Unredeemed:      c.Unredeemed,
		UnredeemedValue: c.UnredeemedValue,
		Redeemed:        c.Redeemed,
		RedeemedValue:   c.RedeemedValue,
		LosingTickets:   c.Losing,
		Neglected:       c.Neglected,
		Rejected:        c.Rejected,
		RejectedValue:   c.RejectedValue,
	}
	l.mu.Lock()
	s.Pending = l.pending
	l.mu.Unlock()
	if settled := s.Redeemed + s.LosingTickets; settled > 0 {
		s.WinProportion = float64(s.Redeemed) / float64(settled)
	}
	return s, nil
}

// RedeemReport says what a redemption run did.
type RedeemReport struct {
	// Redeemed counts tickets the contract paid in this run (or had already paid).
	Redeemed int
	// Value is the amount of the tickets redeemed in this run.
	Value uint256.Int
	// Losing and Neglected count tickets settled as losing or void.
	Losing, Neglected int
}

// Redeem redeems every acknowledged ticket through r, channel by channel in index order. A
// ticket is marked redeemed only after r succeeded, or when the chain already counts its index
// as redeemed (so a run that crashed between the transaction and the mark finishes cleanly the
// next time). Tickets of a closed or reopened channel are settled as neglected, losing ones as
// losing. A failure stops that channel's run (a later index redeemed first would void the
// earlier one) and the others go on; the errors are joined. Concurrent calls are serialised.
func (l *Ledger) Redeem(ctx context.Context, r Redeemer) (RedeemReport, error) {
	rows, err := l.cfg.Store.AcknowledgedTickets()
	if err != nil {
		return RedeemReport{}, fmt.Errorf("redeem: %w", err)
	}
	return l.redeem(ctx, r, rows)
}

// RedeemFrom is Redeem for the one channel from source to this node.
func (l *Ledger) RedeemFrom(ctx context.Context, r Redeemer, source common.Address) (RedeemReport, error) {
	rows, err := l.cfg.Store.AcknowledgedTicketsOf(tickets.ChannelID(source, l.self))
	if err != nil {
		return RedeemReport{}, fmt.Errorf("redeem: %w", err)
	}
	return l.redeem(ctx, r, rows)
}

func (l *Ledger) redeem(ctx context.Context, r Redeemer, rows []store.AckedTicket) (RedeemReport, error) {
	l.redeemMu.Lock()
	defer l.redeemMu.Unlock()
	var (
		rep  RedeemReport
		errs []error
	)
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].Ticket.ChannelID == rows[start].Ticket.ChannelID {
			end++
		}
		if err := l.redeemChannel(ctx, r, rows[start:end], &rep); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
		start = end
	}
	return rep, errors.Join(errs...)
}

func (l *Ledger) redeemChannel(ctx context.Context, r Redeemer, rows []store.AckedTicket, rep *RedeemReport) error {
	for i := range rows {
		a := &rows[i]
		t := &a.Ticket
		ch, ok := l.cfg.Channels.Channel(a.Source, l.self)
		if !ok {
			return fmt.Errorf("redeem ticket %d: %w", t.Index, ErrChannelNotFound)
		}
		var outcome store.Outcome
		switch {
		case ch.Status == StatusClosed || ch.Epoch != t.Epoch:
			outcome = store.OutcomeNeglected
		case t.Index <= ch.TicketIndex:
			outcome = store.OutcomeRedeemed
		case !opens(a.Response, t.Challenge):
			// The contract would revert (ChallengeMismatch): the packet's sender committed to an
			// acknowledgement that does not open the challenge it had the ticket carry
			// (PROTOCOL.md §2). Void, without a transaction.
			l.log.Warn("ledger: acknowledged ticket's response does not open its challenge", slog.Uint64("index", t.Index))
			outcome = store.OutcomeNeglected
		case !wins(t, a.Response, l.cfg.ChainID, l.cfg.Contract):
			outcome = store.OutcomeLosing
		default:
			tx, err := r.RedeemTicket(ctx, *t, a.Response)
			switch {
			case errors.Is(err, ErrAlreadyRedeemed):
				outcome = store.OutcomeRedeemed
			case err != nil:
				return fmt.Errorf("redeem ticket %d: %w", t.Index, err)
			default:
				l.log.Debug("ledger: ticket redeemed", slog.Uint64("index", t.Index), slog.String("tx", tx.Hex()))
				outcome = store.OutcomeRedeemed
			}
		}
		if err := l.cfg.Store.SettleTicket(t.ChannelID, t.Epoch, t.Index, outcome); err != nil {
			return fmt.Errorf("settle ticket %d: %w", t.Index, err)
		}
		switch outcome {
		case store.OutcomeRedeemed:
			rep.Redeemed++
			rep.Value.Add(&rep.Value, &t.Amount)
		case store.OutcomeLosing:
			rep.Losing++
			l.forget(t)
		case store.OutcomeNeglected:
			rep.Neglected++
			l.forget(t)
		}
	}
	return nil
}

func (l *Ledger) forget(t *tickets.Ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.in[t.ChannelID]; st != nil && st.epoch == t.Epoch {
		st.forget(t.Index)
	}
}

// opens reports whether address(response·G) == challenge, the contract's proof-of-relay check.
func opens(response [32]byte, challenge [20]byte) bool {
	c, err := por.ChallengeOf(por.Scalar(response))
	return err == nil && c == por.Challenge(challenge)
}

// wins reports whether a ticket wins (PROTOCOL.md §4.5): the top 56 bits of
// keccak256(ticketHash ‖ response) are at most WinProb.
func wins(t *tickets.Ticket, response [32]byte, chainID uint64, contract common.Address) bool {
	if t.WinProb >= tickets.MaxWinProb {
		return true
	}
	h := t.Hash(chainID, contract)
	luck := crypto.Keccak256(h[:], response[:])
	var top uint64
	for _, b := range luck[:7] {
		top = top<<8 | uint64(b)
	}
	return top <= t.WinProb
}
