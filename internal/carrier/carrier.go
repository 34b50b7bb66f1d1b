// Package carrier carries sessions' frames over the mixnet (docs/SESSIONS.md, PROTOCOL.md
// §9.7): the entry's segments go to the exit as forward packets, the exit's come back on reply
// blocks, and the entry keeps the exit supplied with those blocks. A reply block is 964 bytes,
// two forward packets (block parts, kind 0x21); the exit tells in every answer (kind 0x22) how
// many unused blocks it holds and how many it received, and the entry sends what the answers
// of the last round trip need beyond those and the ones on their way, from a stock it sends
// with the SYN so that the answer does not start slow; whatever the exit says, it keeps no
// more blocks unanswered than its own bound (blocks sent less answers received), so that an
// exit that lies about its stock cannot make it pay for blocks it never uses. When answers stop coming it sends a
// block now and then (backing off to 30 s), so that an exit that used its last one can answer.
//
// The carrier makes the session.Links of both ends (Dial at the entry, AcceptLink at the
// exit) and hands every frame it receives to the session.Mux (Attach). Each link queues what it
// sends (bounded: beyond, the oldest waiting frame is dropped, which the session takes for a
// loss) and sends a few packets at a time in parallel, so that a slow packet does not hold up
// the others.
//
// Of relayd's packages it imports session (the frames it carries) and packet (the sizes, and
// the reply blocks' epochs). It reaches the network only through Network, which the router
// implements. It never logs a frame's contents.
package carrier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// Network is what the carrier sends through; the router implements it.
type Network interface {
	// SendFrame sends text as a forward packet to the peer, over a path of relayers.
	SendFrame(ctx context.Context, to peer.ID, text []byte) error
	// NewSessionReplyBlock makes a reply block with which from can send one packet back to
	// this node (its keys kept in memory only), and says over which relayers.
	NewSessionReplyBlock(ctx context.Context, from peer.ID) (block []byte, relayers []peer.ID, err error)
	// Down reports whether a peer is down (sending to it failed since its last heartbeat): the
	// blocks through it are useless.
	Down(id peer.ID) bool
	// SendReply sends text on a reply block another node made.
	SendReply(ctx context.Context, block []byte, text []byte) error
}

// Config configures a Carrier; Network is required, every other field has a default.
type Config struct {
	Network Network
	// InitialBlocks is the least stock of reply blocks an entry keeps the exit supplied with:
	// OpeningBlocks go with the SYN, the rest once the exit answered past its SYN|ACK. Default 16.
	InitialBlocks int
	// OpeningBlocks is how many reply blocks go with the SYN (at most InitialBlocks): enough
	// for the SYN|ACK and the first answer, and few, so that the SYN's answer does not queue
	// behind the packets of the rest at the relayers. Default 2.
	OpeningBlocks int
	// MaxStock is the most unused reply blocks the exit keeps for a session (more are
	// dropped) and the most the entry aims for. Default 256 (about 250 KB).
	MaxStock int
	// QueueSize is the most frames a link holds waiting to be sent. Default 256.
	QueueSize int
	// Parallel is how many packets a link sends at once. Default 4.
	Parallel int
	// MaxPending is the most sessions the exit keeps reply blocks for before their SYN came;
	// the oldest is dropped beyond it, and any after PendingFor. Defaults 256 and 1 minute.
	MaxPending int
	PendingFor time.Duration
	// Reason names why the network failed a send (Stats.Failures, LinkStats.LastFailure): a
	// short word for a metric's label, such as "balance" for a channel that ran dry. Default:
	// "canceled" for a context's end, "other" for the rest.
	Reason func(error) string
	Logger *slog.Logger
}

// Carrier carries the frames of the sessions of one node. It is safe for concurrent use.
type Carrier struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	mux     *session.Mux
	entries map[session.ID]*entryLink
	exits   map[session.ID]*exitLink
	pending map[session.ID]*exitLink // blocks that came before their session's SYN
	// ended are the exit links of the sessions that ended last (at most maxEnded, oldest first
	// in endedOrder): the parts that still come for them go to the ended link, which keeps a
	// block for the session's late answers a while and drops the rest, not to a pending one.
	ended      map[session.ID]*exitLink
	endedOrder []session.ID

	statsMu sync.Mutex // taken under the links' locks: never take another lock while held
	stats   Stats
}

// Stats counts what a carrier did, for metrics: an entry's BlocksSent against its
// AnswersReceived, an exit's BlocksReceived against its BlocksUsed, and the Failures by reason
// say why a session stalls (a channel that ran dry refuses the entry's frames and blocks).
type Stats struct {
	// BlocksSent counts the reply blocks entries sent (two packets each), BlocksFailed those
	// an entry could not make or send (Failures says why), BlocksReceived the ones exits
	// assembled, BlocksUsed those an exit sent an answer on (whether or not the network took
	// it), BlocksDropped those an exit dropped (expired, malformed, beyond MaxStock, of a
	// session that ended). HalvesDropped counts the block parts an exit dropped that came too
	// far behind the newest (PROTOCOL.md §9.7), or waited there for their other half: a block
	// lost each.
	BlocksSent, BlocksFailed, BlocksReceived, BlocksUsed, BlocksDropped, HalvesDropped uint64
	// FramesSent counts the session frames sent (forward and back), FramesDropped those
	// dropped from a full queue, or that the network failed to send (Failures).
	FramesSent, FramesDropped uint64
	// FramesReceived counts the session frames received (forward and back); AnswersSent and
	// AnswersReceived the ones back, on reply blocks (an exit's, an entry's).
	FramesReceived, AnswersSent, AnswersReceived uint64
	// Malformed counts the texts of the carrier's kinds it refused.
	Malformed uint64
	// Failures counts the sends the network failed (frames, block parts, answers; a block
	// that could not be made), by Config.Reason.
	Failures map[string]uint64
}

// ErrEnded is a Send on a link whose session ended before it sent its first frame.
var ErrEnded = errors.New("carrier: the session ended")

// New checks cfg and returns a Carrier. Close stops its sends.
func New(cfg Config) (*Carrier, error) {
	if cfg.Network == nil {
		return nil, errors.New("carrier: Network is required")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.InitialBlocks, 16)
	def(&cfg.OpeningBlocks, 2)
	cfg.OpeningBlocks = min(cfg.OpeningBlocks, cfg.InitialBlocks)
	def(&cfg.MaxStock, 256)
	def(&cfg.QueueSize, 256)
	def(&cfg.Parallel, 4)
	def(&cfg.MaxPending, 256)
	if cfg.PendingFor <= 0 {
		cfg.PendingFor = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Reason == nil {
		cfg.Reason = defaultReason
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Carrier{cfg: cfg, ctx: ctx, cancel: cancel, entries: map[session.ID]*entryLink{},
		exits: map[session.ID]*exitLink{}, pending: map[session.ID]*exitLink{}, ended: map[session.ID]*exitLink{}}, nil
}

// Attach sets the mux the carrier hands received frames to; call it once, before Receive.
func (c *Carrier) Attach(m *session.Mux) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mux = m
}

// Close stops every send the carrier runs; links send nothing after it.
func (c *Carrier) Close() { c.cancel() }

// Stats returns the carrier's counters.
func (c *Carrier) Stats() Stats {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	s := c.stats
	s.Failures = maps.Clone(c.stats.Failures)
	return s
}

// defaultReason is Config.Reason's default.
func defaultReason(err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "canceled"
	}
	return "other"
}

// failure is the last send of a link the network failed: why and when.
type failure struct {
	reason string
	at     time.Time
}

// failed counts a send the network failed with err, and returns it as the link's last failure.
func (c *Carrier) failed(err error, f func(*Stats)) failure {
	why := c.cfg.Reason(err)
	c.count(func(s *Stats) {
		f(s)
		if s.Failures == nil {
			s.Failures = map[string]uint64{}
		}
		s.Failures[why]++
	})
	return failure{why, time.Now()}
}

// LinkStats is what the carrier knows of one session's link, to say why a session stalls.
type LinkStats struct {
	// Entry says the link is the entry's (the session was dialled here), else the exit's.
	Entry bool
	// Queued is how many frames wait to be sent (at the exit: for a block), Blocks how many
	// blocks the entry has queued and not sent yet, or the exit holds.
	Queued, Blocks int
	// Stock is the unused blocks the exit said it held in its last answer (the entry's).
	Stock int
	// BlocksSent (made and sent, or under way, or failed: not those still queued) and
	// AnswersReceived count the entry's; BlocksReceived and AnswersSent the exit's.
	BlocksSent, AnswersReceived, BlocksReceived, AnswersSent uint64
	// Outstanding is the entry's own count of the blocks the exit may hold unused (blocks sent
	// less answers received and WrittenOff: failed, through a relayer that is down, or taken
	// for lost), which it keeps within its bound whatever the exit reports (PROTOCOL.md §9.7).
	Outstanding int
	WrittenOff  uint64
	// LastAnswer is when the entry's last answer came (zero: none yet).
	LastAnswer time.Time
	// LastFailure is why the network last failed one of the link's sends (Config.Reason), at
	// LastFailureAt; empty if it never did.
	LastFailure   string
	LastFailureAt time.Time
}

// Link returns what the carrier knows of session id's link, or false when it holds none.
func (c *Carrier) Link(id session.ID) (LinkStats, bool) {
	c.mu.Lock()
	e, x := c.entries[id], c.exits[id]
	c.mu.Unlock()
	switch {
	case e != nil:
		return e.linkStats(), true
	case x != nil:
		return x.linkStats(), true
	}
	return LinkStats{}, false
}

func (c *Carrier) count(f func(*Stats)) {
	c.statsMu.Lock()
	f(&c.stats)
	c.statsMu.Unlock()
}

// Dial opens a session to the exit to over the mixnet (session.Mux.Dial with an entry link).
func (c *Carrier) Dial(ctx context.Context, m *session.Mux, to peer.ID, mode session.Mode, request []byte) (*session.Conn, error) {
	l := &entryLink{c: c, to: to}
	conn, err := m.Dial(ctx, l, mode, request)
	if err != nil {
		l.Ended(0)
		return nil, err
	}
	return conn, nil
}

// AcceptLink is the session.Config.AcceptLink of a node that accepts sessions: the link back
// to the entry of session id, holding the blocks that came before its SYN.
func (c *Carrier) AcceptLink(id session.ID) session.Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.exits[id]; l != nil {
		return l
	}
	l := c.pending[id]
	if l != nil {
		delete(c.pending, id)
	} else {
		l = &exitLink{c: c, id: id}
	}
	l.mu.Lock()
	l.accepted = true
	l.mu.Unlock()
	c.exits[id] = l
	return l
}

// Receive takes a text of the session family (first byte 0x2_) that arrived at this node;
// reply says whether it came on a reply block. Segments forward and block parts go to the exit
// side, answers to the entry side; anything else, or a kind in the wrong direction, is
// ErrMalformed. Errors of the mux (session.ErrUnknownSession, …) are returned as they are.
func (c *Carrier) Receive(text []byte, reply bool) error {
	err := c.receive(text, reply)
	if errors.Is(err, ErrMalformed) {
		c.count(func(s *Stats) { s.Malformed++ })
	}
	return err
}

func (c *Carrier) receive(text []byte, reply bool) error {
	if len(text) == 0 {
		return fmt.Errorf("%w: empty", ErrMalformed)
	}
	c.mu.Lock()
	m := c.mux
	c.mu.Unlock()
	if m == nil {
		return session.ErrClosed
	}
	switch {
	case text[0] == session.KindSegment && !reply:
		c.count(func(s *Stats) { s.FramesReceived++ })
		return m.Receive(text)
	case text[0] == KindBlockPart && !reply:
		p, err := decodePart(text)
		if err != nil {
			return err
		}
		c.exitFor(p.id).addPart(p)
		return nil
	case text[0] == KindAnswer && reply:
		a, err := decodeAnswer(text)
		if err != nil {
			return err
		}
		seg := a.segment
		var id session.ID
		copy(id[:], seg[1:1+session.IDSize])
		c.mu.Lock()
		l := c.entries[id]
		c.mu.Unlock()
		if l != nil {
			l.answered(a)
		}
		c.count(func(s *Stats) { s.FramesReceived++; s.AnswersReceived++ })
		return m.Receive(seg)
	}
	return fmt.Errorf("%w: kind %#02x (reply %v)", ErrMalformed, text[0], reply)
}

// exitFor returns the exit link of session id (an ended one for a session that ended), or the
// pending one that holds its blocks until its SYN comes (made now, evicting the oldest beyond
// MaxPending and any older than PendingFor).
func (c *Carrier) exitFor(id session.ID) *exitLink {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.exits[id]; l != nil {
		return l
	}
	if l := c.ended[id]; l != nil {
		return l
	}
	if l := c.pending[id]; l != nil {
		return l
	}
	now := time.Now()
	var oldest *exitLink
	for pid, l := range c.pending {
		if now.Sub(l.made) > c.cfg.PendingFor {
			delete(c.pending, pid)
			l.endPending()
			continue
		}
		if oldest == nil || l.made.Before(oldest.made) {
			oldest = l
		}
	}
	if len(c.pending) >= c.cfg.MaxPending && oldest != nil {
		delete(c.pending, oldest.id)
		oldest.endPending()
	}
	l := &exitLink{c: c, id: id, made: now}
	c.pending[id] = l
	// Blocks of a session whose SYN never comes (or that ended just before) go after PendingFor.
	time.AfterFunc(c.cfg.PendingFor, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending[id] == l {
			delete(c.pending, id)
			l.endPending()
		}
	})
	return l
}

// maxEnded is how many ended sessions' ids a carrier remembers to drop their late parts.
const maxEnded = 1024

// forgetExit forgets the exit link l of a session that ended, and remembers its id.
func (c *Carrier) forgetExit(l *exitLink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exits[l.id] == l {
		delete(c.exits, l.id)
	}
	if _, ok := c.ended[l.id]; !ok {
		if len(c.endedOrder) >= maxEnded {
			if old := c.ended[c.endedOrder[0]]; old != nil && c.exits[old.id] != old {
				old.letGo()
			}
			delete(c.ended, c.endedOrder[0])
			c.endedOrder = c.endedOrder[1:]
		}
		c.endedOrder = append(c.endedOrder, l.id)
	}
	c.ended[l.id] = l
}

// Sessions is how many entry and exit links the carrier holds, and how many sessions it keeps
// blocks for before their SYN.
func (c *Carrier) Sessions() (entries, exits, pending int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), len(c.exits), len(c.pending)
}

// sender runs a link's sends, Parallel at a time, from a bounded queue.
type sender struct {
	busy int
}

// run starts jobs while there is room; next returns the next job, or nil. mu is the link's
// lock, held by the caller.
func (s *sender) run(c *Carrier, mu *sync.Mutex, next func() func(context.Context)) {
	for s.busy < c.cfg.Parallel {
		job := next()
		if job == nil {
			return
		}
		s.busy++
		go func() {
			job(c.ctx)
			mu.Lock()
			s.busy--
			s.run(c, mu, next)
			mu.Unlock()
		}()
	}
}

// maxAnswerSize is the largest segment an exit sends back: a reply's text less the answer's
// header.
const maxAnswerSize = packet.MaxReplySize - answerHeader
