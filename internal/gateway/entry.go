package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/carrier"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// Dialer opens a session to an exit; the node gives the carrier's Dial over its mux.
type Dialer func(ctx context.Context, to peer.ID, mode session.Mode, request []byte) (*session.Conn, error)

// EntryConfig configures an Entry. Self and Dial are required.
type EntryConfig struct {
	Self peer.ID
	Dial Dialer
	// MaxSessions is the most sessions open at once. Default 64.
	MaxSessions int
	// MaxConns is the most connections (TCP) or flows (UDP) a session carries at once; one
	// more is closed at once. Default 256.
	MaxConns int
	// AllowNonLoopback lets a session listen off the loopback interface: anyone who reaches
	// the port uses it.
	AllowNonLoopback bool
	// DialTimeout bounds opening each connection's session (the exit answers once it reached
	// the target). Default 60 s.
	DialTimeout time.Duration
	// UDPIdle is how long a UDP flow lives without a datagram. Default DefaultUDPIdle.
	UDPIdle time.Duration
	// EarlyWait is how long a TCP connection's session waits for the client's first bytes
	// before it dials, to send them with the SYN (session.WithEarlyData): the answer to them
	// then comes a round trip sooner. A client whose server speaks first sends none, and its
	// SYN goes EarlyWait later. Default DefaultEarlyWait; negative: no wait, no early data.
	EarlyWait time.Duration
	// Link, if set, says what the carrier knows of a session's link (carrier.Carrier.Link):
	// why the network last failed one of its sends, for Info.LastError.
	Link   func(session.ID) (carrier.LinkStats, bool)
	Logger *slog.Logger
}

// Entry holds the sessions an operator opened: a local listener each, whose every connection
// (TCP) or flow (UDP) goes to the destination as one session. Its methods are safe for
// concurrent use.
type Entry struct {
	cfg EntryConfig

	mu       sync.Mutex
	closed   bool
	sessions map[string]*local
	order    []string // ids, oldest first
}

// NewEntry checks cfg and returns an Entry; Shutdown closes it.
func NewEntry(cfg EntryConfig) (*Entry, error) {
	if cfg.Self == "" || cfg.Dial == nil {
		return nil, errors.New("gateway: EntryConfig needs Self and Dial")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 64
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 256
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = time.Minute
	}
	if cfg.UDPIdle <= 0 {
		cfg.UDPIdle = DefaultUDPIdle
	}
	if cfg.EarlyWait == 0 {
		cfg.EarlyWait = DefaultEarlyWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Entry{cfg: cfg, sessions: map[string]*local{}}, nil
}

// Open opens a session: it listens on o.Listen and carries every connection to o.Destination.
// The listener lives until Close (ctx bounds only the opening).
func (e *Entry) Open(ctx context.Context, o Open) (Info, error) {
	req, err := e.check(o)
	if err != nil {
		return Info{}, err
	}
	listen := o.Listen
	if listen == "" {
		listen = DefaultListen
	}
	if err := e.checkListen(listen); err != nil {
		return Info{}, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return Info{}, fmt.Errorf("%w: the node is stopping", ErrListen)
	}
	if len(e.sessions) >= e.cfg.MaxSessions {
		e.mu.Unlock()
		return Info{}, fmt.Errorf("%w: %d open", ErrLimit, len(e.sessions))
	}
	e.mu.Unlock()
	var idb [8]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Info{}, err
	}
	l := &local{e: e, info: Info{ID: hex.EncodeToString(idb[:]), Destination: o.Destination, Protocol: o.Protocol,
		Target: o.Target, Service: o.Service, Opened: time.Now()}, request: req.encode(), conns: map[net.Conn]*session.Conn{}}
	var lc net.ListenConfig
	if o.Protocol == UDP {
		pc, err := lc.ListenPacket(ctx, "udp", listen)
		if err != nil {
			return Info{}, fmt.Errorf("%w: %s: %w", ErrListen, listen, unwrapOp(err))
		}
		l.packet, l.info.Listen = pc, pc.LocalAddr().String()
	} else {
		ln, err := lc.Listen(ctx, "tcp", listen)
		if err != nil {
			return Info{}, fmt.Errorf("%w: %s: %w", ErrListen, listen, unwrapOp(err))
		}
		l.listener, l.info.Listen = ln, ln.Addr().String()
	}
	e.mu.Lock()
	if e.closed || len(e.sessions) >= e.cfg.MaxSessions {
		e.mu.Unlock()
		l.closeListener()
		return Info{}, fmt.Errorf("%w: %d open", ErrLimit, e.cfg.MaxSessions)
	}
	e.sessions[l.info.ID] = l
	e.order = append(e.order, l.info.ID)
	e.mu.Unlock()
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if l.packet != nil {
		l.wg.Go(l.serveUDP)
	} else {
		l.wg.Go(l.serveTCP)
	}
	e.cfg.Logger.Info("session opened", "id", l.info.ID, "protocol", string(o.Protocol), "listen", l.info.Listen)
	return l.snapshot(time.Now()), nil
}

// check checks what Open is asked and returns the request for the exit.
func (e *Entry) check(o Open) (request, error) {
	switch {
	case o.Destination == "":
		return request{}, fmt.Errorf("%w: no destination", ErrBadOpen)
	case o.Destination == e.cfg.Self:
		return request{}, ErrSelf
	case o.Protocol != TCP && o.Protocol != UDP:
		return request{}, fmt.Errorf("%w: protocol %q, want tcp or udp", ErrBadOpen, o.Protocol)
	case (o.Target == "") == (o.Service == ""):
		return request{}, fmt.Errorf("%w: give a target or a service", ErrBadOpen)
	case o.Service != "" && !serviceName(o.Service):
		return request{}, fmt.Errorf("%w: not a service name", ErrBadOpen)
	case o.Service != "":
		return request{service: o.Service}, nil
	}
	if err := checkTarget(o.Target); err != nil {
		return request{}, err
	}
	return request{target: o.Target}, nil
}

// checkListen refuses a listen address that is not host:port, or off the loopback interface
// unless allowed.
func (e *Entry) checkListen(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("%w: %q is not host:port", ErrListen, listen)
	}
	if e.cfg.AllowNonLoopback {
		return nil
	}
	if a, err := netip.ParseAddr(host); (err == nil && a.IsLoopback()) || strings.EqualFold(host, "localhost") {
		return nil
	}
	return fmt.Errorf("%w: %s is not on the loopback interface (anyone who reached it would use the session)", ErrListen, listen)
}

// unwrapOp drops the *net.OpError's wrapping, which repeats the address.
func unwrapOp(err error) error {
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Err != nil {
		return oe.Err
	}
	return err
}

// List returns the open sessions, oldest first.
func (e *Entry) List() []Info {
	now := time.Now()
	e.mu.Lock()
	ls := make([]*local, 0, len(e.order))
	for _, id := range e.order {
		ls = append(ls, e.sessions[id])
	}
	e.mu.Unlock()
	out := make([]Info, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.snapshot(now))
	}
	return out
}

// Close closes the session id: its listener and every connection it carries.
func (e *Entry) Close(id string) error {
	e.mu.Lock()
	l := e.sessions[id]
	if l != nil {
		delete(e.sessions, id)
		e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
	}
	e.mu.Unlock()
	if l == nil {
		return ErrUnknownSession
	}
	l.close()
	e.cfg.Logger.Info("session closed", "id", id)
	return nil
}

// Shutdown closes every session and refuses new ones.
func (e *Entry) Shutdown() {
	e.mu.Lock()
	e.closed = true
	ids := slices.Clone(e.order)
	e.mu.Unlock()
	for _, id := range ids {
		_ = e.Close(id)
	}
}

// local is one open session: its listener and the connections it carries.
type local struct {
	e       *Entry
	request []byte
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	listener net.Listener
	packet   net.PacketConn

	out, in atomic.Uint64
	mu      sync.Mutex
	info    Info // ID … Opened, Listen; Active, Total and Retransmits kept here
	conns   map[net.Conn]*session.Conn
	retrans uint64 // of the connections that ended
	samples []sample
	// lastErr is the last failure of a connection (or of its link's sends), at lastErrAt.
	lastErr   Failure
	lastErrAt time.Time
}

// note records failure f at at, unless a later one is recorded. l.mu is held.
func (l *local) note(f Failure, at time.Time) {
	if f != "" && !at.Before(l.lastErrAt) {
		l.lastErr, l.lastErrAt = f, at
	}
}

// noteErr records what a connection's session failed with (nothing for a clean end).
func (l *local) noteErr(err error) {
	if f := failureOf(err); f != "" {
		l.mu.Lock()
		l.note(f, time.Now())
		l.mu.Unlock()
	}
}

// noteLink records the last failed send of sess's link, while the carrier still holds it.
// l.mu is held.
func (l *local) noteLink(sess *session.Conn) {
	if l.e.cfg.Link == nil || sess == nil {
		return
	}
	if st, ok := l.e.cfg.Link(sess.ID()); ok {
		l.note(linkFailure(st.LastFailure), st.LastFailureAt)
	}
}

// watched is a session as splice uses it, telling its session what its reads and writes
// failed with.
type watched struct {
	*session.Conn
	l *local
}

func (w watched) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if err != nil {
		w.l.noteErr(err)
	}
	return n, err
}

func (w watched) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	if err != nil {
		w.l.noteErr(err)
	}
	return n, err
}

// sample is the byte counts at a time, for the rates.
type sample struct {
	at      time.Time
	out, in uint64
}

func (l *local) addOut(n int) { l.out.Add(uint64(n)) }
func (l *local) addIn(n int)  { l.in.Add(uint64(n)) }

// snapshot is the session's Info now, its rates over the last RateWindow.
func (l *local) snapshot(now time.Time) Info {
	out, in := l.out.Load(), l.in.Load()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples = append(l.samples, sample{now, out, in})
	// Keep the newest sample at least RateWindow old, and the ones after it.
	i := 0
	for i+1 < len(l.samples) && now.Sub(l.samples[i+1].at) >= RateWindow {
		i++
	}
	l.samples = l.samples[i:]
	if len(l.samples) > 64 {
		l.samples = append(l.samples[:1], l.samples[len(l.samples)-63:]...)
	}
	info := l.info
	info.BytesOut, info.BytesIn = out, in
	info.Active = len(l.conns)
	info.Retransmits = l.retrans
	for _, s := range l.conns {
		if s != nil {
			info.Retransmits += s.Stats().Retransmits
			l.noteLink(s)
		}
	}
	info.LastError, info.LastErrorAt = l.lastErr, l.lastErrAt
	first := l.samples[0]
	if span := now.Sub(first.at).Seconds(); span > 0 {
		info.RateOut = float64(out-first.out) / span
		info.RateIn = float64(in-first.in) / span
	} else if d := now.Sub(l.info.Opened).Seconds(); d > 0 {
		info.RateOut, info.RateIn = float64(out)/d, float64(in)/d
	}
	return info
}

// closeListener closes the listener or the packet socket.
func (l *local) closeListener() {
	if l.listener != nil {
		_ = l.listener.Close()
	}
	if l.packet != nil {
		_ = l.packet.Close()
	}
}

// close ends the session: the listener, then every connection, and waits for them.
func (l *local) close() {
	l.cancel()
	l.closeListener()
	l.mu.Lock()
	for c, s := range l.conns {
		_ = c.Close()
		if s != nil {
			_ = s.Close()
		}
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// track adds a connection (sess nil until its session is open); false when the session is at
// MaxConns or closing.
func (l *local) track(c net.Conn, sess *session.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return false
	}
	if _, ok := l.conns[c]; !ok {
		if len(l.conns) >= l.e.cfg.MaxConns {
			return false
		}
		l.info.Total++
	}
	l.conns[c] = sess
	return true
}

func (l *local) untrack(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.conns[c]; s != nil {
		l.retrans += s.Stats().Retransmits
		l.noteLink(s)
	}
	delete(l.conns, c)
}

// dial opens one session to the destination; early, if any, are the connection's first bytes
// (TCP mode), sent with the SYN.
func (l *local) dial(mode session.Mode, early []byte) (*session.Conn, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.e.cfg.DialTimeout)
	defer cancel()
	req, err := session.WithEarlyData(l.request, early)
	if err != nil {
		return nil, err
	}
	return l.e.cfg.Dial(ctx, l.info.Destination, mode, req)
}

// DefaultEarlyWait is how long a session's TCP connection waits for its client's first bytes
// to send them with the SYN (EntryConfig.EarlyWait).
const DefaultEarlyWait = 5 * time.Millisecond

// readEarly reads what the client sends within EarlyWait, as many bytes as the SYN carries
// after the request (one read: a request or a TLS ClientHello comes in one write). false: the
// connection failed.
func (l *local) readEarly(c net.Conn) ([]byte, bool) {
	room := session.EarlyRoom(packet.MaxMessageSize, len(l.request))
	if l.e.cfg.EarlyWait < 0 || room == 0 {
		return nil, true
	}
	buf := make([]byte, room)
	if err := c.SetReadDeadline(time.Now().Add(l.e.cfg.EarlyWait)); err != nil {
		return nil, false
	}
	n, err := c.Read(buf)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, io.EOF) {
		return nil, false
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, false
	}
	return buf[:n], true
}

// serveTCP accepts connections and carries each over its own session.
func (l *local) serveTCP() {
	for {
		c, err := l.listener.Accept()
		if err != nil {
			if l.ctx.Err() != nil {
				return
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				continue
			}
			l.e.cfg.Logger.Warn("session listener failed", "id", l.info.ID, "err", err)
			return
		}
		if !l.track(c, nil) {
			_ = c.Close()
			continue
		}
		l.wg.Go(func() {
			defer l.untrack(c)
			defer c.Close()
			early, ok := l.readEarly(c)
			if !ok {
				return
			}
			sess, err := l.dial(session.ModeTCP, early)
			if err != nil {
				l.noteErr(err)
				l.e.cfg.Logger.Debug("session connection not opened", "id", l.info.ID, "err", err)
				return
			}
			defer sess.Close()
			l.addOut(len(early))
			if !l.track(c, sess) {
				return
			}
			splice(c, watched{sess, l}, l)
			l.untrack(c) // before the session closes, while the carrier holds its link
		})
	}
}

// serveUDP reads datagrams from the local socket and carries each client address's flow over
// its own session.
func (l *local) serveUDP() {
	type flow struct{ conn *flowConn }
	flows := map[string]*flow{}
	var mu sync.Mutex
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := l.packet.ReadFrom(buf)
		if err != nil {
			if l.ctx.Err() != nil {
				return
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				continue
			}
			return
		}
		key := addr.String()
		mu.Lock()
		f := flows[key]
		if f == nil {
			fc := &flowConn{pc: l.packet, addr: addr, in: make(chan []byte, 64), done: make(chan struct{})}
			if !l.track(fc, nil) {
				mu.Unlock()
				continue
			}
			f = &flow{conn: fc}
			flows[key] = f
			l.wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(flows, key)
					mu.Unlock()
					l.untrack(fc)
					_ = fc.Close()
				}()
				sess, err := l.dial(session.ModeUDP, nil)
				if err != nil {
					l.noteErr(err)
					return
				}
				defer sess.Close()
				if !l.track(fc, sess) {
					return
				}
				carryDatagrams(sess, fc, l.e.cfg.UDPIdle, l)
				l.untrack(fc) // before the session closes, while the carrier holds its link
			})
		}
		mu.Unlock()
		fc := f.conn
		select {
		case fc.in <- append([]byte(nil), buf[:n]...):
		default: // the flow's queue is full: drop the datagram, as a network would
		}
	}
}

// flowConn is one client's flow on a shared UDP socket as a net.Conn: reads take the datagrams
// the socket received from the client, writes send to it.
type flowConn struct {
	pc   net.PacketConn
	addr net.Addr
	in   chan []byte
	once sync.Once
	done chan struct{}
}

func (f *flowConn) Read(p []byte) (int, error) {
	select {
	case d := <-f.in:
		return copy(p, d), nil
	case <-f.done:
		return 0, net.ErrClosed
	}
}

func (f *flowConn) Write(p []byte) (int, error) { return f.pc.WriteTo(p, f.addr) }
func (f *flowConn) Close() error {
	f.once.Do(func() { close(f.done) })
	return nil
}
func (f *flowConn) LocalAddr() net.Addr              { return f.pc.LocalAddr() }
func (f *flowConn) RemoteAddr() net.Addr             { return f.addr }
func (f *flowConn) SetDeadline(time.Time) error      { return nil }
func (f *flowConn) SetReadDeadline(time.Time) error  { return nil }
func (f *flowConn) SetWriteDeadline(time.Time) error { return nil }
