package session

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/rto"
)

// Mode is how a session carries its application's bytes.
type Mode uint8

const (
	// ModeTCP carries a byte stream, reliable and in order (Conn as a TCP connection).
	ModeTCP Mode = iota
	// ModeUDP carries datagrams, each in one frame, without retransmission; bounded queues
	// drop the oldest.
	ModeUDP
)

// String names the mode.
func (m Mode) String() string {
	if m == ModeUDP {
		return "udp"
	}
	return "tcp"
}

type state uint8

const (
	stateDialing state = iota // entry: SYN sent, no SYN|ACK yet
	statePending              // exit: SYN received, neither Confirm nor Reset yet
	stateOpen
	stateDone // ended: the loop sends what is left (an RST) and leaves the mux
)

// Stats are a session's counters and estimates, for tests, benchmarks and metrics.
type Stats struct {
	FramesSent, FramesReceived uint64
	// SegmentsSent counts TCP-mode segment transmissions (SYN, data, FIN), Retransmits those
	// that were sent before; FastRetransmits and Timeouts count the losses detected by SACK
	// and by the retransmission timer.
	SegmentsSent, Retransmits, FastRetransmits, Timeouts uint64
	// SegmentsReceived counts segments received, Duplicates those already held.
	SegmentsReceived, Duplicates uint64
	// KeepAlives counts keep-alives and window probes sent.
	KeepAlives uint64
	// DatagramsSent counts UDP-mode datagrams sent; DatagramsDropped those dropped from a
	// full queue, either way.
	DatagramsSent, DatagramsDropped uint64
	// EarlyData is how many bytes of the stream the entry's SYN carried (WithEarlyData): at the
	// entry sent with the SYN and acknowledged with the SYN|ACK, at the exit the first bytes
	// its application reads.
	EarlyData int
	// InFlight is how many segments were sent and are not acknowledged; Cwnd the congestion
	// window and PeerWindow the peer's advertised window left, in segments.
	InFlight, Cwnd, PeerWindow int
	// SRTT is the smoothed round trip (0 before a measurement), RTO the retransmission
	// timeout.
	SRTT, RTO time.Duration
	// Queued is how many bytes the application wrote that the peer has not acknowledged
	// (bounded by SendBuffer); Buffered how many arrived in order that it has not read
	// (bounded by Window segments).
	Queued, Buffered int
}

// segment is a sent, unacknowledged TCP-mode segment.
type segment struct {
	seq     uint32
	flags   Flags // SYN, FIN
	payload []byte
	sentAt  time.Time
	xmit    uint64 // order of its last transmission, from 1
	sends   int
	sacked  bool
	lost    bool // to be sent again
}

// rseg is a segment received out of order.
type rseg struct {
	flags   Flags
	payload []byte
}

// Conn is one session: a net.Conn over a Link. In TCP mode it is a byte stream with
// half-close (CloseWrite); in UDP mode each Write sends one datagram and each Read returns one
// (cut to the buffer). A Mux makes Conns (Dial, Accept) and hands them their frames. A Conn is
// safe for concurrent use: one reader and one writer at a time, like a net.Conn.
type Conn struct {
	mux     *Mux
	cfg     *Config
	id      ID
	link    Link
	mode    Mode
	exit    bool
	syn     []byte // the entry's SYN payload: the request and any early data
	request []byte
	segCap  int // payload bytes per frame
	kick    chan struct{}

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change a waiter may care about
	state   state
	err     error  // why the session ended, when not cleanly
	rstOut  Reason // an RST the loop sends before it ends the session
	closed  bool   // Close called
	rdl     time.Time
	wdl     time.Time
	stats   Stats

	// send side (TCP; the SYN of either mode)
	unsent         []byte // written, not yet cut into segments
	finQueued      bool   // CloseWrite: a FIN follows unsent
	finSent        bool
	finAcked       bool
	out            []*segment // segments sndUna … sndNxt-1
	outBytes       int
	sndUna, sndNxt uint32
	peerEdge       uint64 // the peer accepts segments below this
	cwnd, ssthresh int
	caAcc          int
	cwndLimited    bool
	recovering     bool // a loss was answered; no further decrease until recoverUntil is acked
	frozen         bool // fast recovery: cwnd does not grow
	recoverUntil   uint32
	xmits          uint64
	rtt            rto.Estimator
	rtoAt          time.Time
	lossAt         time.Time // when a segment becomes late enough to be lost
	timeouts       int
	probeAt        time.Time // zero-window probe
	probes         int

	// receive side (TCP)
	synRecv  bool
	rcvNxt   uint32
	ooo      map[uint32]rseg
	ready    [][]byte // in-order payloads not read yet; ready[0] from readOff
	readOff  int
	finRecv  bool
	lastSeq  uint32 // the newest segment held out of order
	ackNow   bool
	ackAt    time.Time
	unacked  int
	advEdge  uint64
	advWnd   int
	lastRecv time.Time
	kaAt     time.Time
	kaProbes int
	lingerAt time.Time

	// UDP mode
	dgOut, dgIn [][]byte
	dgSeq       uint32
	synAckOut   bool // send SYN|ACK (on Confirm, and again on a repeated SYN)
	answerOut   bool // answer a keep-alive
	finOut      bool // send a FIN and end
}

// newConn makes a session; syn is the entry's SYN payload (checked: splitSYN), whose early data
// an exit's session holds as the first bytes its application reads.
func newConn(m *Mux, id ID, link Link, mode Mode, exit bool, syn []byte, now time.Time) *Conn {
	request, early, _ := splitSYN(syn, mode == ModeUDP)
	c := &Conn{
		mux:      m,
		cfg:      &m.cfg,
		id:       id,
		link:     link,
		mode:     mode,
		exit:     exit,
		syn:      syn,
		request:  request,
		segCap:   link.MaxFrame() - HeaderSize,
		kick:     make(chan struct{}, 1),
		changed:  make(chan struct{}),
		cwnd:     InitialCwnd,
		ssthresh: 1 << 16,
		rtt:      rto.Estimator{Initial: m.cfg.InitialRTO, Min: m.cfg.MinRTO, Max: m.cfg.MaxRTO},
		ooo:      map[uint32]rseg{},
		lastRecv: now,
		advWnd:   -1,
	}
	c.stats.EarlyData = len(early)
	if exit {
		c.state = statePending
		if len(early) > 0 {
			c.ready = [][]byte{early}
		}
	}
	return c
}

// InitialCwnd is a TCP-mode session's congestion window when it starts, in segments: 10, so
// that an answer does not start slow (RFC 6928).
const InitialCwnd = 10

// ID is the session's ID.
func (c *Conn) ID() ID { return c.id }

// Mode is the session's mode.
func (c *Conn) Mode() Mode { return c.mode }

// Request is what the entry asks the exit to connect to: the payload of its SYN without the
// early data (WithEarlyData), which an exit's application reads as the stream's first bytes.
// The caller must not modify it.
func (c *Conn) Request() []byte { return c.request }

// MaxDatagram is the most bytes one Write sends in UDP mode, and the payload of a full
// segment in TCP mode: the link's MaxFrame less HeaderSize.
func (c *Conn) MaxDatagram() int { return c.segCap }

// Stats returns the session's counters now.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.InFlight = int(c.sndNxt - c.sndUna)
	s.Cwnd = c.cwnd
	s.PeerWindow = int(max(int64(c.peerEdge)-int64(c.sndNxt), 0))
	if srtt, _, ok := c.rtt.Smoothed(); ok {
		s.SRTT = srtt
	}
	s.RTO = c.rtt.Timeout()
	s.Queued = len(c.unsent) + c.outBytes
	for _, p := range c.ready {
		s.Buffered += len(p)
	}
	s.Buffered -= c.readOff
	return s
}

// LocalAddr is the unspecified IPv4 address with port 0, a *net.TCPAddr in TCP mode and a
// *net.UDPAddr in UDP mode: a session has no address, and these types keep consumers that
// switch on them working (the SOCKS5 CONNECT reply wants a *net.TCPAddr).
func (c *Conn) LocalAddr() net.Addr { return c.addr() }

// RemoteAddr is like LocalAddr.
func (c *Conn) RemoteAddr() net.Addr { return c.addr() }

func (c *Conn) addr() net.Addr {
	if c.mode == ModeUDP {
		return &net.UDPAddr{IP: net.IPv4zero}
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl, c.wdl = t, t
	c.broadcast()
	return nil
}

// SetReadDeadline makes a Read waiting at t, or called after, fail with
// os.ErrDeadlineExceeded. The zero time is no deadline.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl = t
	c.broadcast()
	return nil
}

// SetWriteDeadline makes a Write waiting at t, or called after, fail with
// os.ErrDeadlineExceeded; the bytes it queued before stay queued.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	c.broadcast()
	return nil
}

// Confirm accepts an incoming session (from Accept): the exit answers the entry's SYN, and
// the entry's Dial returns. Write confirms an unconfirmed session itself.
func (c *Conn) Confirm() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.confirm()
}

func (c *Conn) confirm() error {
	switch c.state {
	case statePending:
		c.state = stateOpen
		if c.mode == ModeUDP {
			c.synAckOut = true
		}
		c.wake()
		return nil
	case stateDone:
		return c.endErr()
	}
	return nil
}

// Reset ends the session at once and tells the peer why with an RST: a refusal of an
// unconfirmed session (ReasonNotAllowed, ReasonRefused, ReasonUnreachable, ReasonLimit), or an
// abort of an open one. Reason 0 is ReasonReset. Reads and writes then fail with ErrClosed.
func (c *Conn) Reset(reason Reason) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateDone {
		return c.endErr()
	}
	if reason == 0 {
		reason = ReasonReset
	}
	c.fail(ErrClosed, reason)
	return nil
}

// Read reads the stream (TCP mode: io.EOF once the peer's direction ended and all was read)
// or one datagram (UDP mode, cut to len(p)). After a reset it returns what arrived before,
// then the reason's error (ErrRefused, ErrReset, ErrTimeout, …).
func (c *Conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, ErrClosed
		}
		if c.mode == ModeUDP && len(c.dgIn) > 0 {
			if len(p) == 0 {
				return 0, nil
			}
			n := copy(p, c.dgIn[0])
			c.dgIn[0] = nil
			c.dgIn = c.dgIn[1:]
			return n, nil
		}
		if len(c.ready) > 0 {
			if len(p) == 0 {
				return 0, nil
			}
			n := 0
			for n < len(p) && len(c.ready) > 0 {
				k := copy(p[n:], c.ready[0][c.readOff:])
				n += k
				c.readOff += k
				if c.readOff == len(c.ready[0]) {
					c.ready[0] = nil
					c.ready = c.ready[1:]
					c.readOff = 0
				}
			}
			c.windowUpdate()
			return n, nil
		}
		if c.finRecv {
			return 0, io.EOF
		}
		if c.state == stateDone {
			return 0, c.endErr()
		}
		if !c.rdl.IsZero() && !time.Now().Before(c.rdl) {
			return 0, os.ErrDeadlineExceeded
		}
		c.wait(c.rdl)
	}
}

// Write queues p for the peer. In TCP mode it blocks while SendBuffer bytes are
// unacknowledged; in UDP mode p is one datagram of at most MaxFrame − HeaderSize bytes
// (ErrTooLarge), queued at once (the oldest unsent one dropped from a full queue).
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == ModeUDP {
		return c.writeDatagram(p)
	}
	n := 0
	for n < len(p) {
		switch {
		case c.closed:
			return n, ErrClosed
		case c.state == stateDone:
			return n, c.endErr()
		case c.finQueued:
			return n, ErrClosed
		case !c.wdl.IsZero() && !time.Now().Before(c.wdl):
			return n, os.ErrDeadlineExceeded
		}
		if c.state == statePending {
			_ = c.confirm()
		}
		if room := c.cfg.SendBuffer - len(c.unsent) - c.outBytes; room > 0 {
			k := min(room, len(p)-n)
			c.unsent = append(c.unsent, p[n:n+k]...)
			n += k
			c.wake()
			continue
		}
		c.wait(c.wdl)
	}
	return n, nil
}

// CloseWrite ends the session's direction towards the peer once everything written was sent
// (a FIN): the peer reads io.EOF, and may still send. In UDP mode it is Close.
func (c *Conn) CloseWrite() error {
	if c.mode == ModeUDP {
		return c.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return ErrClosed
	case c.state == stateDone:
		return c.endErr()
	}
	if c.state == statePending {
		_ = c.confirm()
	}
	c.finQueued = true
	c.wake()
	return nil
}

// Close ends the session for the application: Read and Write fail with ErrClosed. An
// unconfirmed incoming session is refused (ReasonRefused); otherwise in TCP mode what was
// written is still sent and the direction ended with a FIN, and data the peer sends after the
// Close resets the session (as TCP does); in UDP mode a FIN is sent once.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.closed = true
	switch c.state {
	case statePending:
		c.fail(ErrClosed, ReasonRefused)
	case stateDialing:
		c.fail(ErrClosed, ReasonReset)
	case stateOpen:
		if c.mode == ModeUDP {
			c.finOut = true
			c.dgIn = nil
		} else {
			c.finQueued = true
			clear(c.ready)
			c.ready, c.readOff = nil, 0
		}
	}
	c.broadcast()
	c.wake()
	return nil
}

// endErr is what Read and Write return once the session ended.
func (c *Conn) endErr() error {
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}

// fail ends the session with err (nil: cleanly) and, when reason is not 0, an RST to the peer.
func (c *Conn) fail(err error, reason Reason) {
	if c.state == stateDone {
		return
	}
	c.state = stateDone
	c.err = err
	c.rstOut = reason
	c.out, c.outBytes, c.unsent, c.dgOut = nil, 0, nil, nil
	clear(c.ooo)
	c.broadcast()
	c.wake()
}

// broadcast wakes every Read, Write and Dial waiting on the Conn. c.mu is held.
func (c *Conn) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// wake makes the loop look at the Conn again.
func (c *Conn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// wait releases c.mu until the Conn changes or deadline passes (zero: none).
func (c *Conn) wait(deadline time.Time) {
	ch := c.changed
	c.mu.Unlock()
	defer c.mu.Lock()
	if deadline.IsZero() {
		<-ch
		return
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// waitOpen waits until a dialled session is open or ended, or ctx ends.
func (c *Conn) waitOpen(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.state == stateDialing {
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-ctx.Done():
			c.mu.Lock()
			c.fail(ErrClosed, ReasonReset)
			return ctx.Err()
		}
	}
	if c.state == stateDone {
		return c.endErr()
	}
	return nil
}

// handle takes one frame of this session from the mux.
func (c *Conn) handle(f *Frame, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateDone || (f.Flags&FlagUDP != 0) != (c.mode == ModeUDP) {
		return
	}
	c.stats.FramesReceived++
	c.lastRecv, c.kaAt, c.kaProbes, c.probes = now, time.Time{}, 0, 0
	if f.Flags&FlagRST != 0 {
		c.fail(f.Reason.Err(), 0)
		return
	}
	if c.mode == ModeUDP {
		c.handleUDP(f)
	} else {
		c.handleTCP(f, now)
	}
	c.broadcast()
	c.wake()
}

// run is the session's loop: it sends what the state asks for, runs the timers, and leaves
// the mux when the session ended or ctx (the mux's Run) ends.
func (c *Conn) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		c.mu.Lock()
		frames, next, end := c.step(time.Now())
		reason, backlog := c.rstOut, c.backlog()
		c.mu.Unlock()
		if b, ok := c.link.(Backlogger); ok {
			b.Backlog(backlog)
		}
		for _, f := range frames {
			_ = c.link.Send(ctx, f) // a frame the link fails to send is lost
		}
		if end {
			c.mux.remove(c, reason)
			return
		}
		var tc <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next))
			tc = timer.C
		}
		select {
		case <-c.kick:
		case <-tc:
		case <-ctx.Done():
			c.shutdown(ctx)
			return
		}
		timer.Stop()
	}
}

// backlog is Backlogger.Backlog's count: the frames the session has to send beyond those a step
// returned. c.mu is held.
func (c *Conn) backlog() int {
	if c.mode == ModeUDP {
		return len(c.dgOut)
	}
	n := (len(c.unsent) + c.segCap - 1) / c.segCap
	if c.finQueued && !c.finSent && len(c.unsent) == 0 {
		n++
	}
	for _, s := range c.out {
		if s.lost {
			n++
		}
	}
	return n
}

// shutdown ends the session when the mux stops, with an RST the link gets a second to send.
func (c *Conn) shutdown(ctx context.Context) {
	c.mu.Lock()
	c.fail(ErrClosed, ReasonReset)
	frames, _, _ := c.step(time.Now())
	c.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	for _, f := range frames {
		_ = c.link.Send(sctx, f)
	}
	c.mux.remove(c, 0)
}

// step runs the timers and returns the frames to send now, when to look again (zero: when
// something happens) and whether the session ended. c.mu is held.
func (c *Conn) step(now time.Time) (frames [][]byte, next time.Time, end bool) {
	emit := func(f *Frame) {
		f.ID = c.id
		if c.mode == ModeUDP {
			f.Flags |= FlagUDP
		}
		frames = append(frames, f.encode())
		c.stats.FramesSent++
	}
	if c.state != stateDone {
		if c.mode == ModeUDP {
			c.stepUDP(now, emit)
		} else {
			c.stepTCP(now, emit)
		}
	}
	if c.state == stateDone {
		if c.rstOut != 0 {
			f := Frame{Flags: FlagRST, Seq: c.sndNxt, Reason: c.rstOut}
			emit(&f)
		}
		return frames, time.Time{}, true
	}
	for _, t := range []time.Time{c.rtoAt, c.lossAt, c.ackAt, c.probeAt, c.kaAt, c.lingerAt} {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return frames, next, false
}

// keepAlive runs the keep-alive timer of a session with nothing in flight: after
// KeepAliveIdle without a frame from the peer a keep-alive, then one every
// KeepAliveInterval, and after KeepAliveCount unanswered the session ends (ErrTimeout).
func (c *Conn) keepAlive(now time.Time, eligible bool, emit func(*Frame)) {
	if !eligible || c.cfg.KeepAliveIdle < 0 {
		c.kaAt = time.Time{}
		return
	}
	if c.kaAt.IsZero() {
		c.kaAt = c.lastRecv.Add(c.cfg.KeepAliveIdle)
	}
	if now.Before(c.kaAt) {
		return
	}
	if c.kaProbes >= c.cfg.KeepAliveCount {
		c.fail(ErrTimeout, ReasonTimeout)
		return
	}
	c.kaProbes++
	c.kaAt = now.Add(c.cfg.KeepAliveInterval)
	c.stats.KeepAlives++
	f := Frame{Flags: FlagKeepAlive, Seq: c.sndNxt}
	if c.mode == ModeTCP {
		c.ackFields(&f)
	}
	emit(&f)
}
