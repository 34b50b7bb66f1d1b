package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// maxTombs is how many ended sessions a mux remembers: a late or replayed SYN opens none of them
// again, the late frames of one it reset itself are answered with the RST again (so that a
// lost RST still reaches the peer), and a FIN sent again to one that ended cleanly is answered
// with its last acknowledgement (so that a lost acknowledgement does not leave the peer
// sending its FIN until it times out).
const maxTombs = 1024

type tomb struct {
	link   Link
	reason Reason
	mode   Mode
	// final says the session ended cleanly in TCP mode (both FINs in): its last
	// acknowledgement, seq and ack, answers the peer's FIN or data sent again.
	final    bool
	seq, ack uint32
}

type ctrlFrame struct {
	link  Link
	frame []byte
}

// Mux holds sessions by ID: it dials sessions (the entry), accepts them (the exit: a SYN of an
// unknown ID, when Config.AcceptLink is set) and hands each incoming frame to its session.
// NewMux starts nothing; Run runs it. A Mux is safe for concurrent use.
type Mux struct {
	cfg     Config
	backlog chan *Conn
	ctrl    chan ctrlFrame // what Receive answers ended sessions with, sent by Run
	stopped chan struct{}  // closed when Run returns

	mu        sync.Mutex
	state     int // 0 before Run, 1 running, 2 stopped
	ctx       context.Context
	wg        sync.WaitGroup
	sessions  map[ID]*Conn
	tombs     map[ID]tomb
	tombOrder []ID
}

// NewMux checks cfg, fills in its defaults and returns a Mux that runs once Run is called.
func NewMux(cfg Config) (*Mux, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Mux{
		cfg:      cfg,
		backlog:  make(chan *Conn, cfg.Backlog),
		ctrl:     make(chan ctrlFrame, 64),
		stopped:  make(chan struct{}),
		sessions: map[ID]*Conn{},
		tombs:    map[ID]tomb{},
	}, nil
}

// Run runs the mux until ctx ends: the sessions' timers and sending. When it returns every
// session has ended (its reads and writes fail with ErrClosed) and its peer was sent an RST
// (ReasonReset), each given a second. Call it once.
func (m *Mux) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.state != 0 {
		m.mu.Unlock()
		return errors.New("session: Mux.Run called twice")
	}
	m.state, m.ctx = 1, ctx
	m.wg.Go(func() { m.sendCtrl(ctx) })
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	m.state = 2
	m.mu.Unlock()
	m.wg.Wait()
	close(m.stopped)
	return nil
}

// sendCtrl sends what Receive answers the frames of ended sessions with (RSTs, last acknowledgements).
func (m *Mux) sendCtrl(ctx context.Context) {
	for {
		select {
		case c := <-m.ctrl:
			_ = c.link.Send(ctx, c.frame)
		case <-ctx.Done():
			return
		}
	}
}

// start registers c and runs its loop. m.mu is held.
func (m *Mux) start(c *Conn) error {
	if m.state != 1 {
		return ErrClosed
	}
	if len(m.sessions) >= m.cfg.MaxSessions {
		return ErrLimit
	}
	if _, dup := m.sessions[c.id]; dup {
		return fmt.Errorf("%w: session id in use", ErrReset)
	}
	m.sessions[c.id] = c
	ctx := m.ctx
	m.wg.Go(func() { c.run(ctx) })
	return nil
}

// remove forgets c once its loop ended; reason, if not 0, is the RST it sent, which the mux
// sends again for the session's late frames.
func (m *Mux) remove(c *Conn, reason Reason) {
	if e, ok := c.link.(Ender); ok {
		defer e.Ended(reason)
	}
	c.mu.Lock()
	final := c.mode == ModeTCP && c.err == nil && c.finRecv && reason == 0
	seq, ack := c.sndNxt, c.rcvNxt
	c.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions[c.id] == c {
		delete(m.sessions, c.id)
	}
	// Every ended session is remembered, not only the reset ones: a late or duplicated SYN (the
	// mixnet reorders and a forger may replay) must not open it again and make the exit dial
	// its target a second time.
	if _, ok := m.tombs[c.id]; !ok {
		if len(m.tombOrder) >= maxTombs {
			delete(m.tombs, m.tombOrder[0])
			m.tombOrder = slices.Delete(m.tombOrder, 0, 1)
		}
		m.tombOrder = append(m.tombOrder, c.id)
	}
	t := tomb{reason: reason, mode: c.mode, final: final, seq: seq, ack: ack}
	if reason != 0 || final { // a session the mux reset itself, or that ended cleanly, answers again
		t.link = c.link
	}
	m.tombs[c.id] = t
}

// Conns returns the sessions the mux holds now (open, being opened, lingering).
func (m *Mux) Conns() []*Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Conn, 0, len(m.sessions))
	for _, c := range m.sessions {
		out = append(out, c)
	}
	return out
}

// Sessions is how many sessions the mux holds (open, being opened, lingering).
func (m *Mux) Sessions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Dial opens a session over link, which carries its frames to the exit, and waits until the
// exit confirms it (Conn.Confirm), refuses it (the reason's error: ErrNotAllowed, ErrRefused,
// ErrUnreachable, ErrLimit), the SYN goes unanswered (ErrTimeout) or ctx ends. request, what
// the exit is to connect to, travels in the SYN: at most link.MaxFrame() − HeaderSize bytes.
// In TCP mode it may carry early data (WithEarlyData: a request beginning with EarlyMarker
// must be one, else ErrMalformed): the first bytes of the stream, written and acknowledged
// once Dial returned. The exit's application reads them first, once, however often the SYN
// came; a refusal (an RST before the exit confirmed) says it did not take them on. The mux
// hands the session the frames Receive gets for its ID.
func (m *Mux) Dial(ctx context.Context, link Link, mode Mode, request []byte) (*Conn, error) {
	if link.MaxFrame() < MinFrame {
		return nil, ErrLink
	}
	if len(request) > link.MaxFrame()-HeaderSize {
		return nil, fmt.Errorf("%w: request of %d bytes", ErrTooLarge, len(request))
	}
	if _, _, err := splitSYN(request, mode == ModeUDP); err != nil {
		return nil, err
	}
	var id ID
	if _, err := io.ReadFull(m.cfg.Rand, id[:]); err != nil {
		return nil, fmt.Errorf("session: draw an id: %w", err)
	}
	c := newConn(m, id, link, mode, false, slices.Clone(request), time.Now())
	m.mu.Lock()
	err := m.start(c)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := c.waitOpen(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Accept returns the next incoming session, unconfirmed: Request says what the entry asks for,
// and the early data its SYN carried, if any, is what Read returns first; Confirm accepts it
// (or the first Write), Reset refuses it with a reason. A session the entry
// gave up on while it waited is returned too; Confirm then fails. Accept fails with ErrClosed
// once Run returned.
func (m *Mux) Accept(ctx context.Context) (*Conn, error) {
	select {
	case c := <-m.backlog:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-m.stopped:
		return nil, ErrClosed
	}
}

// Receive hands the mux one incoming frame: to its session, or, for a SYN of an unknown ID at a
// mux that accepts sessions, to a new session for Accept (answered with an RST, ReasonLimit,
// beyond MaxSessions or Backlog: ErrLimit). A frame of a session the mux reset itself is
// answered with that RST again. It returns ErrMalformed (wrapped) for a text that is not a
// frame, ErrUnknownSession for a frame of no session, ErrClosed when the mux is not running; no
// frame, however made, does more than that. frame is not kept.
func (m *Mux) Receive(frame []byte) error {
	f, err := Decode(frame)
	if err != nil {
		return err
	}
	now := time.Now()
	m.mu.Lock()
	if m.state != 1 {
		m.mu.Unlock()
		return ErrClosed
	}
	if c := m.sessions[f.ID]; c != nil {
		m.mu.Unlock()
		c.handle(&f, now)
		return nil
	}
	if t, ok := m.tombs[f.ID]; ok {
		m.mu.Unlock()
		switch {
		case f.Flags&FlagRST != 0:
		case t.reason != 0:
			m.answer(t.link, f.ID, t.mode, t.reason)
		case t.final && f.Flags&FlagSYN == 0 && (f.consumes() || f.Flags&FlagKeepAlive != 0):
			// The peer missed the last acknowledgement (it came after this side's Linger):
			// everything up to its FIN arrived, and nothing more is accepted.
			m.send(t.link, Frame{ID: f.ID, Flags: FlagACK, Seq: t.seq, Ack: t.ack})
		}
		return ErrUnknownSession
	}
	m.mu.Unlock()
	if f.Flags&(FlagSYN|FlagACK) != FlagSYN || m.cfg.AcceptLink == nil {
		return ErrUnknownSession
	}
	link := m.cfg.AcceptLink(f.ID)
	if link == nil {
		return ErrUnknownSession
	}
	if link.MaxFrame() < MinFrame {
		return ErrLink
	}
	mode := ModeTCP
	if f.Flags&FlagUDP != 0 {
		mode = ModeUDP
	}
	c := newConn(m, f.ID, link, mode, true, slices.Clone(f.Payload), now)
	c.synRecv, c.rcvNxt, c.peerEdge = true, 1, uint64(f.Window)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions[f.ID] != nil {
		return nil // the same SYN twice at once: the first one made the session
	}
	if len(m.backlog) == cap(m.backlog) {
		m.answer(link, f.ID, mode, ReasonLimit)
		return ErrLimit
	}
	switch err := m.start(c); {
	case errors.Is(err, ErrLimit):
		m.answer(link, f.ID, mode, ReasonLimit)
		return err
	case err != nil:
		return err
	}
	m.backlog <- c // room was checked under m.mu, and only Receive sends
	return nil
}

// answer queues an RST for Run to send, or drops it when the queue is full.
func (m *Mux) answer(link Link, id ID, mode Mode, reason Reason) {
	f := Frame{ID: id, Flags: FlagRST, Reason: reason}
	if mode == ModeUDP {
		f.Flags |= FlagUDP
	}
	m.send(link, f)
}

// send queues f for Run to send over link, or drops it when the queue is full.
func (m *Mux) send(link Link, f Frame) {
	select {
	case m.ctrl <- ctrlFrame{link, f.encode()}:
	default:
	}
}
