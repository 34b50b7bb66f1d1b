// Package courier delivers this node's messages of any length reliably and keeps the messages
// delivered to it until the app reads them (docs/MESSAGES.md). A message that does not fit one
// packet, asks for reply blocks or asks to be reliable becomes a framed message: its content (the
// app's reply blocks, then the body) is split into fragments (internal/fragment) that each fill
// one packet and take their own path; every transmission round carries a fresh acknowledgement
// reply block, on which the recipient answers with a bitmap of what it holds; what is missing is
// sent again over new paths after a timeout drawn from the measured round trips, with
// exponential backoff, for a bounded number of rounds. Outgoing messages and their state, and
// incoming messages until the app reads them, are kept in the store, so a node killed with -9
// loses neither and resumes sending after a restart. The recipient answers anonymously on the
// reply blocks that came with a message (Reply).
//
// Of relayd's packages it imports internal/fragment (the frames), internal/store (the inbox and
// the outbox), internal/packet (capacities) and internal/rto (the retransmission timeout). It must not import internal/node, internal/api,
// internal/ws or internal/admin; it never logs message text, reply blocks or routes.
package courier

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/fragment"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/store"
)

// States of an outgoing message (GET /messages/{id}).
const (
	StateQueued    = store.OutboxQueued
	StateSent      = store.OutboxSent
	StateDelivered = store.OutboxDelivered
	StateFailed    = store.OutboxFailed
)

// Network is how the courier reaches other nodes; the router implements it. Its errors are the
// router's sentinels.
type Network interface {
	// SendFrame sends one framed text to recipient over a path the network picks, a fresh one
	// per call, in its slot of the node's constant-rate stream.
	SendFrame(ctx context.Context, recipient peer.ID, text []byte) error
	// NewReplyBlock builds a reply block over a return path from `from` to this node.
	NewReplyBlock(ctx context.Context, from peer.ID) ([]byte, error)
	// SendReply sends one framed text on a reply block another node made.
	SendReply(ctx context.Context, block []byte, text []byte) error
}

// Store keeps the outbox and the inbox; *store.DB implements it.
type Store interface {
	PutOutbox(m store.OutboxMessage) error
	GetOutbox(id [16]byte) (store.OutboxMessage, bool, error)
	UpdateOutbox(id [16]byte, fn func(*store.OutboxMessage) error) error
	ListOutbox(states ...string) ([]store.OutboxMessage, error)
	PutInboxBatch(ms []store.InboxMessage) ([]store.InboxPut, error)
	GetInbox(seq uint64) (store.InboxMessage, bool, error)
	TakeReplyBlock(seq uint64) (block []byte, left int, err error)
	SeenInbox(id [16]byte) (bool, error)
	ListInbox(since uint64, limit int) ([]store.InboxMessage, int, error)
	PopInbox() (store.InboxMessage, bool, error)
	DeleteInbox(seq uint64) (bool, error)
	ExpireReplyKeys(nowEpoch uint32) (int, error)
	PruneOutbox(before time.Time, keep int) (int, error)
}

// Event is what happened to a message, for the app stream: an outgoing message was delivered or
// failed, or a message arrived.
type Event struct {
	// Kind is "delivered", "failed" or "received".
	Kind string
	// ID names the message: ours for delivered and failed, the sender's for received.
	ID [16]byte
	// Reason says why a message failed.
	Reason string
	// Message is the stored message, for received.
	Message store.InboxMessage
}

// Config configures a Courier. Network, Store and Events are required.
type Config struct {
	Network Network
	Store   Store
	// Events receives every delivered, failed and received event. It must not block.
	Events func(Event)
	// MaxBody is the longest body a message may have (the maxMessageBytes setting).
	MaxBody func() int
	// Capacity is the text one forward packet carries; ReplyCapacity one reply packet.
	Capacity, ReplyCapacity int
	// Rounds bounds the transmission rounds of a message (default 8, at most 16).
	Rounds int
	// MinTimeout and MaxTimeout bound the wait for a round's acknowledgement (defaults 1 s and
	// 60 s); the wait itself comes from the measured round trips.
	MinTimeout, MaxTimeout time.Duration
	// Quiet is how long a recipient waits after a message's last fragment before it
	// acknowledges an incomplete message (default 300 ms).
	Quiet time.Duration
	// IncompleteAfter is how long a recipient keeps an incomplete message without progress
	// before it reports it incomplete (default 2 min).
	IncompleteAfter time.Duration
	Logger          *slog.Logger
	Registerer      prometheus.Registerer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Courier sends and receives framed messages. Its methods are safe for concurrent use.
type Courier struct {
	cfg Config
	log *slog.Logger
	m   metrics
	rtt rttEstimator

	mu      sync.Mutex
	waiting map[[16]byte]chan fragment.Ack // outgoing messages awaiting a round's ack
	running map[[16]byte]bool

	rx     *receiver
	ctx    context.Context
	wg     sync.WaitGroup
	closed bool
}

// New checks cfg and returns a Courier; Run starts it.
func New(cfg Config) (*Courier, error) {
	if cfg.Network == nil || cfg.Store == nil || cfg.Events == nil {
		return nil, errors.New("courier: Network, Store and Events are required")
	}
	if cfg.Capacity <= 0 || cfg.ReplyCapacity <= 0 {
		return nil, errors.New("courier: Capacity and ReplyCapacity are required")
	}
	if cfg.MaxBody == nil {
		cfg.MaxBody = func() int { return DefaultMaxBody }
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 8
	}
	cfg.Rounds = min(cfg.Rounds, fragment.MaxRound+1) // an ack block part names its round in 4 bits
	if cfg.MinTimeout <= 0 {
		cfg.MinTimeout = time.Second
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = time.Minute
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 300 * time.Millisecond
	}
	if cfg.IncompleteAfter <= 0 {
		cfg.IncompleteAfter = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	c := &Courier{cfg: cfg, log: cfg.Logger, m: m, waiting: map[[16]byte]chan fragment.Ack{},
		running: map[[16]byte]bool{}}
	c.rtt = newRTT(cfg.MinTimeout, cfg.MaxTimeout)
	if c.rx, err = newReceiver(c); err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultMaxBody is the default ceiling of a message body: 64 KiB.
const DefaultMaxBody = 64 << 10

// MaxReplies bounds the reply blocks one message may ask for.
const MaxReplies = 16

// Request is an outgoing message as the app asks for it.
type Request struct {
	Recipient peer.ID
	Body      []byte
	// Replies is how many reply blocks to send along, 0 to MaxReplies.
	Replies int
}

// Run resumes the messages the outbox holds unfinished and serves until ctx ends; it waits for
// the messages under way to stop.
func (c *Courier) Run(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	pending, err := c.cfg.Store.ListOutbox(StateQueued, StateSent)
	if err != nil {
		return fmt.Errorf("courier: resume: %w", err)
	}
	for _, m := range pending {
		c.start(m.ID)
	}
	if len(pending) > 0 {
		c.log.Info("resuming outgoing messages", "count", len(pending))
	}
	c.rx.run(ctx)
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// Send accepts a message: it checks it, stores it as queued and starts sending it. It returns
// the message's id at once; Status tells what became of it.
func (c *Courier) Send(req Request) ([16]byte, error) {
	var id [16]byte
	if len(req.Body) == 0 {
		return id, ErrEmpty
	}
	if max := c.cfg.MaxBody(); len(req.Body) > max {
		return id, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(req.Body), max)
	}
	if req.Replies < 0 || req.Replies > MaxReplies {
		return id, fmt.Errorf("%w: %d reply blocks, at most %d", ErrInvalid, req.Replies, MaxReplies)
	}
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("courier: %w", err)
	}
	now := c.cfg.Now()
	m := store.OutboxMessage{ID: id, Recipient: req.Recipient.String(), Body: req.Body, Replies: req.Replies,
		Created: now, Updated: now, State: StateQueued}
	if err := c.cfg.Store.PutOutbox(m); err != nil {
		return id, storeError(err)
	}
	c.m.accepted.Inc()
	c.start(id)
	return id, nil
}

// Status is what the node knows of one of its outgoing messages.
func (c *Courier) Status(id [16]byte) (store.OutboxMessage, error) {
	m, ok, err := c.cfg.Store.GetOutbox(id)
	if err != nil {
		return m, storeError(err)
	}
	if !ok {
		return m, ErrNotFound
	}
	return m, nil
}

// start runs a message's delivery unless it runs already or the courier stopped.
func (c *Courier) start(id [16]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ctx == nil || c.running[id] {
		return
	}
	c.running[id] = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.deliver(c.ctx, id)
		c.mu.Lock()
		delete(c.running, id)
		c.mu.Unlock()
	}()
}

// storeError maps the store's sentinels to the courier's.
func storeError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, store.ErrOutboxFull), errors.Is(err, store.ErrInboxFull), errors.Is(err, store.ErrFull):
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}

// Inbox lists the messages kept for the app with a sequence number above since, oldest first,
// at most limit, and how many are kept.
func (c *Courier) Inbox(since uint64, limit int) ([]store.InboxMessage, int, error) {
	return c.cfg.Store.ListInbox(since, limit)
}

// Pop removes and returns the oldest message kept for the app; false when there is none.
func (c *Courier) Pop() (store.InboxMessage, bool, error) {
	return c.cfg.Store.PopInbox()
}

// Delete removes the kept message seq; false when there is none.
func (c *Courier) Delete(seq uint64) (bool, error) {
	return c.cfg.Store.DeleteInbox(seq)
}

// Finished outgoing messages are kept this long, and at most this many, for Status.
const (
	keepFinished    = 24 * time.Hour
	maxKeptFinished = 10_000
)

// expire forgets the keys of reply blocks no hop accepts any more and the finished outgoing
// messages past their time.
func (c *Courier) expire(now time.Time) {
	if _, err := c.cfg.Store.ExpireReplyKeys(packet.Epoch(now)); err != nil {
		c.log.Warn("reply keys not expired", "err", err)
	}
	if _, err := c.cfg.Store.PruneOutbox(now.Add(-keepFinished), maxKeptFinished); err != nil {
		c.log.Warn("outbox not pruned", "err", err)
	}
}

// The message values the courier hands out, under the courier's names so that the faces (api,
// admin) need not import the store.
type (
	InboxMessage  = store.InboxMessage
	OutboxMessage = store.OutboxMessage
)
