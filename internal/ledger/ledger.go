package ledger

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// Defaults of Config's optional fields.
const (
	// DefaultIndexBatch is how many outgoing ticket indexes the Ledger reserves in the store
	// at a time (one fsync per batch, done ahead in the background; a crash skips at most
	// twice this many, which the contract allows). At 64 the background reservation, queued
	// behind acknowledged-ticket commits on a busy disk, did not always finish in time.
	DefaultIndexBatch = 1024
	// DefaultFlushInterval is how often Ledger.Run persists the counters kept in memory.
	DefaultFlushInterval = 5 * time.Second
)

// Config configures a Ledger. Key, ChainID, Contract, Channels and Store are required.
type Config struct {
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
	// MinWinProb is the network's minimum win probability (the WinProb field) as the contract
	// published it when the node started: incoming tickets below it are refused and outgoing
	// ones never go below it. OnEvent follows its changes. 0: no minimum.
	MinWinProb uint64
	// WinProb returns this node's outgoing win probability (the WinProb field); the Ledger uses
	// the larger of it and MinWinProb. 0 (or nil) follows the network minimum, and without a
	// known minimum every ticket wins (tickets.MaxWinProb).
	WinProb func() uint64
	// IndexBatch is the number of indexes reserved per store write (default DefaultIndexBatch).
	IndexBatch uint64
	// FlushInterval is how often Run persists counters (default DefaultFlushInterval).
	FlushInterval time.Duration
	// Logger receives the ledger's logs. Optional: nil discards them.
	Logger *slog.Logger
	// Registerer, when set, receives the relayd_tickets and relayd_ticket_value_tokens gauges.
	Registerer prometheus.Registerer
}

// Ledger keeps this node's tickets: it validates incoming ones (relay.Payments' AcceptTicket),
// signs outgoing ones with indexes that never go back (IssueTicket), stores the winners once
// their packet is acknowledged and redeems them (Redeem). What incoming channels owe is rebuilt
// from the store; pending (unacknowledged) tickets are kept in memory only, since they are worth
// nothing until acknowledged. It is safe for concurrent use.
type Ledger struct {
	cfg  Config
	log  *slog.Logger
	self common.Address

	fetches sync.WaitGroup // background index reservations and records

	mu       sync.Mutex
	in       map[[32]byte]*inChannel
	out      map[[32]byte]*outChannel
	pending  uint64
	unsaved  store.TicketCounterDelta // counted in memory, not yet persisted
	flushMu  sync.Mutex               // one flush at a time, so Statistics waits for one under way
	redeemMu sync.Mutex
	stopped  atomic.Bool // Run ended: no more outgoing tickets (saveIssued stored them all)
	minWin   atomic.Uint64
	// closing carries the source of every incoming channel that starts closing (OnEvent), for
	// AutoRedeem: its tickets are void once it is closed.
	closing chan common.Address

	// parties counts tickets per counterparty (relayd_channel_* metrics).
	parties counterparties

	// redeemChunk and now are RedeemChunk and time.Now, replaced in tests.
	redeemChunk int
	now         func() time.Time
}

// New checks cfg and returns a Ledger. It starts nothing; Run persists counters.
func New(cfg Config) (*Ledger, error) {
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
	l := &Ledger{
		cfg:     cfg,
		log:     log,
		self:    crypto.PubkeyToAddress(cfg.Key.PublicKey),
		in:      make(map[[32]byte]*inChannel),
		out:     make(map[[32]byte]*outChannel),
		closing: make(chan common.Address, closingQueue),

		redeemChunk: RedeemChunk,
		now:         time.Now,
	}
	l.minWin.Store(cfg.MinWinProb)
	if reg := cfg.Registerer; reg != nil {
		if err := reg.Register(ticketCollector{l}); err != nil {
			return nil, fmt.Errorf("%w: register metrics: %w", ErrInvalidConfig, err)
		}
	}
	return l, nil
}

// Run persists the counters kept in memory every FlushInterval and once more when ctx ends,
// then stores what every outgoing channel owes and returns.
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
	l.unsaved = store.TicketCounterDelta{}
	l.mu.Unlock()
	if err := l.cfg.Store.AddTicketCounters(c); err != nil {
		l.mu.Lock()
		l.unsaved.Add(&c)
		l.mu.Unlock()
		return fmt.Errorf("flush ticket counters: %w", err)
	}
	return nil
}

// minWinProb is the network minimum (0 without one).
func (l *Ledger) minWinProb() uint64 { return l.minWin.Load() }

// SetMinWinProb sets the network's minimum win probability (the WinProb field), as the contract
// now publishes it.
func (l *Ledger) SetMinWinProb(w uint64) { l.minWin.Store(w) }

// MinWinProb is the network's minimum win probability (the WinProb field) as the ledger knows it.
func (l *Ledger) MinWinProb() uint64 { return l.minWin.Load() }

// outWinProb is the win probability of the tickets this node signs: its setting, never below
// the network minimum.
func (l *Ledger) outWinProb() uint64 {
	var w uint64
	if l.cfg.WinProb != nil {
		w = l.cfg.WinProb()
	}
	m := l.minWinProb()
	switch {
	case w == 0 && m == 0:
		return tickets.MaxWinProb
	case w == 0:
		w = m
	}
	return min(max(w, m), tickets.MaxWinProb)
}

// Statistics are the node's ticket statistics (GET /tickets/statistics). Values are in the
// token's smallest unit; a ticket's value is its face amount, what it pays if it wins.
type Statistics struct {
	// Pending counts tickets received for relayed packets that await the next hop's
	// acknowledgement, and padded tickets received as the recipient until they are stored.
	Pending uint64
	// Unredeemed and UnredeemedValue count acknowledged winning tickets not yet redeemed.
	Unredeemed      uint64
	UnredeemedValue uint256.Int
	// Redeemed and RedeemedValue count tickets the contract paid.
	Redeemed      uint64
	RedeemedValue uint256.Int
	// Winning and WinningValue count acknowledged tickets that won (redeemed or not).
	Winning      uint64
	WinningValue uint256.Int
	// LosingTickets and LosingValue count acknowledged tickets that did not win: they were
	// dropped as soon as their response was known.
	LosingTickets uint64
	LosingValue   uint256.Int
	// WinProportion is Winning / (Winning + LosingTickets), 0 before any acknowledged ticket.
	WinProportion float64
	// Neglected counts tickets never acknowledged in time, or void before redemption.
	Neglected uint64
	// Rejected and RejectedValue count incoming tickets that failed validation.
	Rejected      uint64
	RejectedValue uint256.Int
}

// Statistics returns the ticket statistics. Every count but Pending is read from the store,
// after the counts kept in memory since the last flush are stored: a count once shown never
// drops, also when the process is killed.
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
		Winning:         c.Won,
		WinningValue:    c.WonValue,
		LosingTickets:   c.Losing,
		LosingValue:     c.LosingValue,
		Neglected:       c.Neglected,
		Rejected:        c.Rejected,
		RejectedValue:   c.RejectedValue,
	}
	l.mu.Lock()
	s.Pending = l.pending
	l.mu.Unlock()
	if settled := s.Winning + s.LosingTickets; settled > 0 {
		s.WinProportion = float64(s.Winning) / float64(settled)
	}
	return s, nil
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
