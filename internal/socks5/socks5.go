// Package socks5 is the SOCKS5 entry of sessions (docs/SESSIONS.md, issue 28): a local listener,
// served by github.com/things-go/go-socks5, that hands every CONNECT to a Dialer it is given,
// with the target as the client sent it: a name stays a name (remote DNS, what curl calls
// socks5h; this package never resolves one), an address an address. BIND and UDP ASSOCIATE are
// answered "command not supported". The server bounds the connections it serves at once and
// the time a handshake may take, maps the dialer's errors to reply codes (ReplyCode), and
// closes every connection when it stops. A dialer that is also an EarlyDialer gets its
// CONNECTs to addresses it expects to work answered before the dial, with the client's first
// bytes carried by the dial (as TCP Fast Open); every other CONNECT waits for its dial, so that
// a refusal reaches the client as a reply code. It has no authentication, so it listens on loopback
// unless its Config says otherwise.
//
// It imports no relayd package: node gives it a Dialer that opens a session to an exit. It
// never logs a target, at any level (the names are what the user visits): it counts (Stats).
package socks5

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gosocks5 "github.com/things-go/go-socks5"
	"github.com/things-go/go-socks5/statute"
)

// Defaults for the Config fields left zero.
const (
	DefaultListenAddr       = "127.0.0.1:1080"
	DefaultMaxConns         = 256
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultDialTimeout      = 60 * time.Second
	DefaultEarlyWait        = 5 * time.Millisecond
)

// Dialer makes the connection a CONNECT asks for. network is "tcp"; address is host:port with
// the host exactly as the client sent it: a name, unresolved (letters, digits, '-', '_' and
// '.': other names are answered 0x04 without a dial), or an IP literal (IPv6 in brackets). DialContext must return when ctx ends. Its error chooses the reply the client
// gets (ReplyCode): wrap ErrNotAllowed, ErrRefused, ErrHostUnreachable, ErrNetworkUnreachable
// or ErrTimeout, or return a Replier.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// EarlyDialer is a Dialer that can also dial optimistically, as TCP Fast Open does: for an
// address it expects to work (Early), the server answers the CONNECT "succeeded" at once, waits
// up to Config.EarlyWait for the client's first bytes (a client whose server speaks first sends
// none) and hands them to DialEarly, which sends them with its dial. The client then learns of
// a dial that fails only as its connection closing: DialEarly should expect the address to work
// no longer, so that the next CONNECT waits for the dial and gets the reply code.
type EarlyDialer interface {
	Dialer
	// Early reports whether a dial to address is expected to work, and how many of the
	// client's first bytes (at most) DialEarly can carry then.
	Early(network, address string) (room int, ok bool)
	// DialEarly is DialContext sending early, the client's first bytes (maybe none, at most
	// Early's room), with the dial: the target reads them before anything the client sends
	// after.
	DialEarly(ctx context.Context, network, address string, early []byte) (net.Conn, error)
}

// Config is what New needs. Dialer is required; every other field has a default.
type Config struct {
	// Dialer carries every CONNECT (required).
	Dialer Dialer
	// ListenAddr is the host:port to listen on, DefaultListenAddr if empty. Port 0 picks a
	// free port (Addr tells which).
	ListenAddr string
	// AllowNonLoopback lets ListenAddr be off the loopback interface (a name other than
	// localhost, or an empty host, counts as off it). The listener has no authentication:
	// anyone who reaches it uses this node's sessions.
	AllowNonLoopback bool
	// MaxConns bounds the client connections served at once, DefaultMaxConns if zero; one
	// beyond it is closed as soon as it is accepted.
	MaxConns int
	// HandshakeTimeout bounds the time from accepting a connection to having read its
	// request, DefaultHandshakeTimeout if zero.
	HandshakeTimeout time.Duration
	// DialTimeout bounds each Dialer.DialContext, DefaultDialTimeout if zero; running out of it
	// answers 0x06 (TTL expired).
	DialTimeout time.Duration
	// EarlyWait is how long a CONNECT answered before its dial (EarlyDialer) waits for the
	// client's first bytes to send with the dial, DefaultEarlyWait if zero; negative: every
	// CONNECT waits for its dial.
	EarlyWait time.Duration
	// Logger receives the server's few logs (none names a target); nil discards them.
	Logger *slog.Logger
}

// Stats counts what the server did since New. It holds counts only, never a target.
type Stats struct {
	Active          int64  // client connections being served now
	Accepted        uint64 // client connections taken on
	OverLimit       uint64 // client connections closed at once: MaxConns were being served
	HandshakeFailed uint64 // greetings or requests malformed, timed out or without a method we offer
	Unsupported     uint64 // BIND and UDP ASSOCIATE requests, refused with 0x07
	Connected       uint64 // CONNECTs the dialer made
	DialFailed      uint64 // CONNECTs the dialer failed (the client got ReplyCode of its error)
	Early           uint64 // CONNECTs answered before their dial (EarlyDialer); Connected counts those whose dial worked
	EarlyFailed     uint64 // of those, dials that failed: the client's connection was closed
	EarlyBytes      uint64 // client bytes sent with the dials (included in BytesUp)
	BytesUp         uint64 // bytes carried from clients to their targets
	BytesDown       uint64 // bytes carried from targets to their clients
}

type counters struct {
	active                                            atomic.Int64
	accepted, overLimit, handshakeFailed, unsupported atomic.Uint64
	connected, dialFailed, bytesUp, bytesDown         atomic.Uint64
	early, earlyFailed, earlyBytes                    atomic.Uint64
}

// Server is the SOCKS5 entry. New builds it and starts nothing; Listen binds its address; Run
// serves until its context ends or Close is called.
type Server struct {
	cfg   Config
	log   *slog.Logger
	lib   *gosocks5.Server
	sem   chan struct{} // a slot per connection served
	stats counters
	wg    sync.WaitGroup // the connections' goroutines

	mu       sync.Mutex
	ln       net.Listener
	running  bool
	closed   bool
	draining bool               // Drain closed the listener: Run waits for the connections
	cancel   context.CancelFunc // ends Run's context; set while running
	done     chan struct{}      // closed when Run returns
}

// New checks cfg, fills in its defaults and returns a server that has started nothing. A
// listen address off loopback fails with ErrNotLoopback unless cfg.AllowNonLoopback is set;
// other bad fields fail with ErrConfig.
func New(cfg Config) (*Server, error) {
	if cfg.Dialer == nil {
		return nil, fmt.Errorf("%w: Dialer is required", ErrConfig)
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = DefaultListenAddr
	}
	host, _, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("%w: ListenAddr %q: %w", ErrConfig, cfg.ListenAddr, err)
	}
	if !cfg.AllowNonLoopback && !isLoopback(host) {
		return nil, fmt.Errorf("%w: %q (set AllowNonLoopback to listen there)", ErrNotLoopback, cfg.ListenAddr)
	}
	if cfg.MaxConns < 0 || cfg.HandshakeTimeout < 0 || cfg.DialTimeout < 0 {
		return nil, fmt.Errorf("%w: MaxConns %d, HandshakeTimeout %s, DialTimeout %s: none may be negative",
			ErrConfig, cfg.MaxConns, cfg.HandshakeTimeout, cfg.DialTimeout)
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.EarlyWait == 0 {
		cfg.EarlyWait = DefaultEarlyWait
	}
	s := &Server{
		cfg:  cfg,
		log:  cfg.Logger,
		sem:  make(chan struct{}, cfg.MaxConns),
		done: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	// The library negotiates "no authentication", parses the request and answers unknown
	// commands 0x07 itself; CONNECT, BIND and UDP ASSOCIATE come to the handlers below. Its
	// default rule set permits every command (so BIND reaches s.unsupported rather than a
	// 0x02), and its default logger discards.
	s.lib = gosocks5.NewServer(
		gosocks5.WithResolver(keepName{}),
		gosocks5.WithConnectHandle(s.connect),
		gosocks5.WithBindHandle(s.unsupported),
		gosocks5.WithAssociateHandle(s.unsupported),
	)
	return s, nil
}

// isLoopback reports whether a listen host is surely on the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// keepName is the library's resolver: it resolves nothing, so the request keeps the name the
// client sent and the Dialer receives it (remote DNS).
type keepName struct{}

func (keepName) Resolve(ctx context.Context, _ string) (context.Context, net.IP, error) {
	return ctx, nil, nil
}

// Listen binds the listen address; Run calls it when it was not called before, so calling it
// first only surfaces a bind error early and makes Addr known. A bound address off loopback
// fails with ErrNotLoopback unless Config.AllowNonLoopback is set.
func (s *Server) Listen(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.draining {
		return ErrClosed
	}
	if s.ln != nil {
		return nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("socks5: listen: %w", err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); !s.cfg.AllowNonLoopback && (!ok || !ta.IP.IsLoopback()) {
		_ = ln.Close()
		return fmt.Errorf("%w: bound to %s", ErrNotLoopback, ln.Addr())
	}
	s.ln = ln
	s.log.Info("socks5 listening", "addr", ln.Addr().String(), "maxConns", s.cfg.MaxConns)
	return nil
}

// Addr is the address the server listens on, nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Run serves until ctx ends or Close is called, then closes the listener and every client
// and target connection (cancelling the dials under way) and returns once all of their
// goroutines have: nil then. It returns ErrClosed after Close, and is called at most once.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.running {
		s.mu.Unlock()
		return errors.New("socks5: Run called twice")
	}
	s.running, s.cancel = true, cancel
	ln := s.ln
	s.mu.Unlock()
	defer close(s.done)

	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	err := s.serve(ctx, ln)
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	if draining && errors.Is(err, net.ErrClosed) {
		// Drain: the connections being served go on until they end, or ctx or Close ends them.
		err = nil
		ended := make(chan struct{})
		go func() { s.wg.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-ctx.Done():
		}
	}
	cancel()
	_ = ln.Close()
	s.wg.Wait()
	s.log.Info("socks5 stopped")
	return err
}

// Close stops the server: Run, if it runs, closes everything and returns, and Close returns
// after it. Close is idempotent; after it Listen and Run return ErrClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	first := !s.closed
	s.closed = true
	ln, running, cancel := s.ln, s.running, s.cancel
	s.mu.Unlock()
	if running {
		if first {
			cancel()
		}
		<-s.done
		return nil
	}
	if first && ln != nil {
		return ln.Close()
	}
	return nil
}

// Drain stops taking connections: it closes the listener (its address is free at once) and lets
// the connections being served go on; Run returns once they have all ended (or when its context
// ends, or Close is called, which close them). A server that does not run just lets go of its
// listener. Drain is idempotent; after it Listen returns ErrClosed.
func (s *Server) Drain() {
	s.mu.Lock()
	first := !s.draining && !s.closed
	s.draining = true
	ln, running := s.ln, s.running
	if !running {
		s.closed = true
	}
	s.mu.Unlock()
	if first && ln != nil {
		_ = ln.Close()
	}
}

// Stats returns the server's counts so far.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Active:          c.active.Load(),
		Accepted:        c.accepted.Load(),
		OverLimit:       c.overLimit.Load(),
		HandshakeFailed: c.handshakeFailed.Load(),
		Unsupported:     c.unsupported.Load(),
		Connected:       c.connected.Load(),
		DialFailed:      c.dialFailed.Load(),
		Early:           c.early.Load(),
		EarlyFailed:     c.earlyFailed.Load(),
		EarlyBytes:      c.earlyBytes.Load(),
		BytesUp:         c.bytesUp.Load(),
		BytesDown:       c.bytesDown.Load(),
	}
}

// serve accepts until ctx ends; a failing Accept (out of file descriptors, say) is retried
// after a pause that doubles up to a second.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	var pause time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("socks5: accept: %w", err)
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.log.Warn("socks5 accept failed", "err", err, "retryIn", pause)
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
			continue
		}
		pause = 0
		select {
		case s.sem <- struct{}{}:
		default:
			s.stats.overLimit.Add(1)
			s.log.Debug("socks5 connection refused: at the limit", "maxConns", s.cfg.MaxConns)
			_ = conn.Close()
			continue
		}
		s.stats.accepted.Add(1)
		s.stats.active.Add(1)
		s.wg.Add(1)
		go s.handle(ctx, conn)
	}
}

// clientConn is a client connection with the server's context: the library hands it back to
// the command handlers as their writer.
type clientConn struct {
	net.Conn
	ctx context.Context
}

// handle serves one client connection and gives its slot back.
func (s *Server) handle(ctx context.Context, conn net.Conn) {
	defer func() {
		_ = conn.Close()
		s.stats.active.Add(-1)
		<-s.sem
		s.wg.Done()
	}()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	s.serveConn(ctx, conn)
}

// serveConn runs the library on one connection: it reads the greeting and the request within
// the handshake timeout and calls a command handler. It returns when the connection is done;
// the caller closes it.
func (s *Server) serveConn(ctx context.Context, conn net.Conn) {
	if err := conn.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout)); err != nil {
		return
	}
	// The command handlers return nil; an error here is the handshake's (bad version, no
	// acceptable method, a malformed or unknown request, the timeout), and at this pinned
	// version of the library none of those texts contains the target.
	if err := s.lib.ServeConn(&clientConn{Conn: conn, ctx: ctx}); err != nil {
		s.stats.handshakeFailed.Add(1)
		s.log.Debug("socks5 handshake failed", "err", err)
	}
}

// unsupported answers BIND and UDP ASSOCIATE: 0x07, command not supported.
func (s *Server) unsupported(_ context.Context, w io.Writer, _ *gosocks5.Request) error {
	s.stats.unsupported.Add(1)
	_ = gosocks5.SendReply(w, ReplyCommandNotSupported, nil)
	return nil
}

// unspecified is the bound address a successful reply names: the connection leaves from the
// exit, so no local address would mean anything to the client (and it would tell it about
// this node).
var unspecified = &net.TCPAddr{IP: net.IPv4zero, Port: 0}

// connect serves a CONNECT: it dials the target through the Dialer, replies, and carries bytes
// both ways until both are done (a half-close is passed on) or one fails.
func (s *Server) connect(_ context.Context, w io.Writer, req *gosocks5.Request) error {
	cc, ok := w.(*clientConn)
	if !ok {
		return fmt.Errorf("socks5: connect handler given a %T", w)
	}
	// The request is read: the handshake is over. The dial has its own timeout, the
	// connection none.
	if err := cc.SetDeadline(time.Time{}); err != nil {
		return nil
	}
	addr, ok := dialAddress(req.DestAddr)
	if !ok {
		s.stats.dialFailed.Add(1)
		_ = gosocks5.SendReply(cc, ReplyHostUnreachable, nil)
		return nil
	}
	if ed, ok := s.cfg.Dialer.(EarlyDialer); ok && s.cfg.EarlyWait > 0 {
		if room, ok := ed.Early("tcp", addr); ok {
			s.connectEarly(cc, req, ed, addr, room)
			return nil
		}
	}
	dctx, cancel := context.WithTimeout(cc.ctx, s.cfg.DialTimeout)
	remote, err := s.cfg.Dialer.DialContext(dctx, "tcp", addr)
	if err == nil && remote == nil {
		err = errors.New("socks5: dialer returned no connection")
	}
	timedOut := errors.Is(dctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		code := ReplyCode(err)
		if code == ReplyGeneralFailure && timedOut {
			code = ReplyTTLExpired
		}
		s.stats.dialFailed.Add(1)
		s.log.Debug("socks5 connect failed", "reply", code)
		_ = gosocks5.SendReply(cc, code, nil)
		return nil
	}
	defer func() { _ = remote.Close() }()
	stop := context.AfterFunc(cc.ctx, func() { _ = remote.Close() })
	defer stop()
	if err := gosocks5.SendReply(cc, ReplySucceeded, unspecified); err != nil {
		return nil
	}
	s.stats.connected.Add(1)
	s.carry(cc.Conn, req.Reader, remote)
	return nil
}

// connectEarly serves a CONNECT to an address the dialer expects to work: it replies
// "succeeded" at once, reads what the client sends within EarlyWait (one read, at most room
// bytes: a request or a TLS ClientHello comes in one write), dials with it, and carries bytes
// both ways. A dial that fails closes the client's connection (the caller closes it).
func (s *Server) connectEarly(cc *clientConn, req *gosocks5.Request, d EarlyDialer, addr string, room int) {
	if err := gosocks5.SendReply(cc, ReplySucceeded, unspecified); err != nil {
		return
	}
	s.stats.early.Add(1)
	buf := make([]byte, room)
	if err := cc.SetReadDeadline(time.Now().Add(s.cfg.EarlyWait)); err != nil {
		return
	}
	n, err := req.Reader.Read(buf)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, io.EOF) {
		s.stats.earlyFailed.Add(1)
		return
	}
	if err := cc.SetReadDeadline(time.Time{}); err != nil {
		return
	}
	dctx, cancel := context.WithTimeout(cc.ctx, s.cfg.DialTimeout)
	remote, err := d.DialEarly(dctx, "tcp", addr, buf[:n])
	cancel()
	if err == nil && remote == nil {
		err = errors.New("socks5: dialer returned no connection")
	}
	if err != nil {
		s.stats.earlyFailed.Add(1)
		s.log.Debug("socks5 early connect failed: closing the client", "reply", ReplyCode(err))
		return
	}
	defer func() { _ = remote.Close() }()
	stop := context.AfterFunc(cc.ctx, func() { _ = remote.Close() })
	defer stop()
	s.stats.connected.Add(1)
	s.stats.earlyBytes.Add(uint64(n))
	s.stats.bytesUp.Add(uint64(n))
	s.carry(cc.Conn, req.Reader, remote)
}

// dialAddress is the address a request names, the name kept as sent; false when it names no
// host, port 0, or a name that no host can have (validName).
func dialAddress(a *statute.AddrSpec) (string, bool) {
	if a == nil || a.Port <= 0 || a.Port > 65535 {
		return "", false
	}
	host := a.FQDN
	if host == "" && len(a.IP) != 0 {
		host = a.IP.String()
	} else if !validName(host) {
		return "", false
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port)), true
}

// validName reports whether a request's name is an IP literal without a zone, or a host name
// of at most 253 letters, digits, '-', '_' and '.' (plus a final dot): international names
// travel as punycode. Anything else (a ']', a space, a NUL) no exit could resolve, and could
// make the address unparsable.
func validName(name string) bool {
	if strings.Contains(name, ":") {
		ip, err := netip.ParseAddr(name)
		return err == nil && ip.Zone() == ""
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// carry copies client → remote in a goroutine and remote → client here. The end of one
// direction is passed on as a half-close where the connection supports one (CloseWrite); an
// error in either closes both. It returns when both directions are done.
func (s *Server) carry(client net.Conn, fromClient io.Reader, remote net.Conn) {
	up := make(chan struct{})
	go func() {
		defer close(up)
		n, err := io.Copy(remote, fromClient)
		s.stats.bytesUp.Add(uint64(n))
		if err != nil {
			_ = client.Close()
			_ = remote.Close()
			return
		}
		closeWrite(remote)
	}()
	n, err := io.Copy(client, remote)
	s.stats.bytesDown.Add(uint64(n))
	if err != nil {
		_ = client.Close()
		_ = remote.Close()
	} else {
		closeWrite(client)
	}
	<-up
}

// closeWrite half-closes c if it can; a connection without CloseWrite stays open until the
// other direction ends.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
