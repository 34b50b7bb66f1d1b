package ws

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/origin"
	"github.com/relayd/relayd/internal/webui"
)

// MaxLineBytes is the longest command line the server reads.
const MaxLineBytes = 4096

// Interpreter runs an operator's command line; internal/admin's Commands implements it.
type Interpreter interface {
	Run(ctx context.Context, line string) Reply
}

// Reply is a command line's answer: its output lines, each sent as one log frame; whether the
// command failed (the frame that ends the reply then carries "error":true, so a script can
// tell); and After, when set, run once the reply has been queued for the client (e.g. to stop
// the node after saying so).
type Reply struct {
	Lines  []string
	Failed bool
	After  func()
}

// Config configures a Server. Hub and Commands are required; Token is
// required unless DisableAuth.
type Config struct {
	Token        string
	DisableAuth  bool
	Hub          *Hub
	Commands     Interpreter
	Logger       *slog.Logger
	QueueSize    int           // hub frames queued per client before it is dropped; default 1024
	PingInterval time.Duration // keepalive; default 30 s
	CommandTime  time.Duration // longest a command may run; default 2 min
	CommandRate  float64       // commands per second each client may send on average; default 10
	CommandBurst int           // commands a client may send back to back; default 20
	// APIPort is the REST API's port, which the web console served on
	// plain HTTP requests calls; 0: the console's login form asks for it.
	APIPort int
	// Origins decides the Host names the server answers to and the other origins whose pages
	// may open the admin WebSocket; nil: IP literals and localhost, and the server's own origin.
	Origins *origin.Policy
}

// Server is the WebSocket admin server; it is an http.Handler serving the
// WebSocket on every path, and the web console (package webui) on requests
// that do not ask for a WebSocket.
type Server struct {
	cfg     Config
	log     *slog.Logger
	digest  [32]byte
	console http.Handler

	accepted func(*coalescer) // tests: called with each admin connection's coalescer
}

// New builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Hub == nil || cfg.Commands == nil {
		return nil, errors.New("ws: Hub and Commands are required")
	}
	if !cfg.DisableAuth && cfg.Token == "" {
		return nil, errors.New("ws: Token is required unless DisableAuth")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.QueueSize <= ReplaySize+ConnReplaySize {
		cfg.QueueSize = 1024
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	if cfg.CommandTime <= 0 {
		cfg.CommandTime = 2 * time.Minute
	}
	if cfg.CommandRate <= 0 {
		cfg.CommandRate = 10
	}
	if cfg.CommandBurst <= 0 {
		cfg.CommandBurst = 20
	}
	if cfg.Origins == nil {
		var err error
		if cfg.Origins, err = origin.New(origin.Config{TokenRequired: !cfg.DisableAuth}); err != nil {
			return nil, fmt.Errorf("ws: %w", err)
		}
	}
	console, err := webui.New(webui.Config{APIPort: cfg.APIPort})
	if err != nil {
		return nil, fmt.Errorf("ws: console: %w", err)
	}
	return &Server{cfg: cfg, log: cfg.Logger, digest: sha256.Sum256([]byte(cfg.Token)), console: console}, nil
}

// isUpgrade reports whether r asks for a WebSocket: its Upgrade header
// names websocket. Anything else is a browser asking for the console.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "websocket") {
				return true
			}
		}
	}
	return false
}

// authorized reports whether r carries the token: in the apiToken query
// parameter, or in an X-Auth-Token cookie (either spelling; the original web
// admin logged in that way), taken as it is or URL-decoded.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.DisableAuth {
		return true
	}
	if q := r.URL.Query(); q.Has("apiToken") && s.matches(q.Get("apiToken")) {
		return true
	}
	for _, c := range r.Cookies() {
		if c.Name != "X-Auth-Token" && c.Name != "x-auth-token" {
			continue
		}
		if s.matches(c.Value) {
			return true
		}
		if v, err := url.QueryUnescape(c.Value); err == nil && s.matches(v) {
			return true
		}
	}
	return false
}

// matches compares token with the configured one in constant time.
func (s *Server) matches(token string) bool {
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], s.digest[:]) == 1
}

// ServeHTTP upgrades the request and serves the client until it leaves, the
// node shuts down (the request's context ends) or it falls behind. A
// request that does not ask for a WebSocket gets the web console: its
// static page needs no token (it holds none), and everything it shows comes
// through this WebSocket and the REST API, which both do.
//
// A request that names the node by a name it does not answer to (DNS rebinding), or a WebSocket
// from a page of an origin the node does not allow, is refused (403, the REST API's JSON error
// envelope) before anything else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Origins.Host(r.Host) {
		refuse(w, "INVALID_HOST", "this node does not answer to the name "+strconv.Quote(r.Host)+
			": address it by IP or localhost, or add the name to --allowedHosts if it is the node's")
		return
	}
	if !isUpgrade(r) {
		s.console.ServeHTTP(w, r)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !origin.SameOrigin(r) {
		if !s.cfg.Origins.Origin(o) {
			refuse(w, "FORBIDDEN_ORIGIN", "pages of "+strconv.Quote(o)+
				" may not open this node's admin WebSocket: add the origin to --corsOrigins if you trust it")
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Origin") // allowed: the upgrade's same-origin check must not refuse it
	}
	conn, cw, err := acceptCoalescing(w, r, writeTimeout)
	if err != nil {
		s.log.DebugContext(r.Context(), "websocket upgrade failed", "err", err, aboutConnection)
		return
	}
	if s.accepted != nil {
		s.accepted(cw)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(MaxLineBytes + 1024)
	ctx := r.Context()

	if !s.authorized(r) {
		s.log.WarnContext(ctx, "websocket client refused: bad token", "remote", r.RemoteAddr, aboutConnection)
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = conn.Write(wctx, websocket.MessageText, NewFrame(TypeAuthFailed, "authentication failed", time.Now()).encode())
		conn.Close(websocket.StatusPolicyViolation, "authentication failed")
		return
	}

	state := "ENABLED"
	if s.cfg.DisableAuth {
		state = "DISABLED"
	}
	c := newClient(s.cfg.QueueSize)
	s.cfg.Hub.join(c, fmt.Sprintf("ws client connected [ authentication %s ]", state))
	defer s.cfg.Hub.leave(c)

	ctx, cancel := context.WithCancel(ctx)
	wrote := make(chan struct{})
	var violation atomic.Pointer[string] // set by the reader when the client broke the protocol
	go func() {
		defer close(wrote)
		s.writeLoop(ctx, cancel, conn, cw, c, &violation)
	}()
	if err := s.readLoop(ctx, conn, c); protocolViolation(ctx, err) {
		msg := err.Error()
		violation.Store(&msg)
	}
	cancel()
	<-wrote // the writer flushes the queued replies and closes
}

// writeLoop sends queued frames and keepalive pings until ctx ends, the
// connection fails or the client falls behind. The hub's frames go first, so
// a new client gets its whole replay before the reply to its first command.
// When ctx ends, the replies already queued are still sent (the last words
// of a command that stops the node reach its client) before the close.
//
// The close says why: 1002 (protocol error) when the client broke the WebSocket protocol
// (violation, when not nil: an unmasked frame, say), else 1001 (going away).
func (s *Server) writeLoop(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, cw *coalescer, c *client, violation *atomic.Pointer[string]) {
	defer cancel()
	defer conn.CloseNow() // ends the reader's Read, whatever ended the writer
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	write := func(b []byte) error {
		// Not bound to ctx, so that queued replies still go out at shutdown.
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer wcancel()
		return conn.Write(wctx, websocket.MessageText, b)
	}
	for {
		select {
		case <-c.slow:
			s.log.WarnContext(ctx, "websocket client dropped: too slow", aboutConnection)
			conn.Close(websocket.StatusPolicyViolation, "client too slow")
			return
		default:
		}
		if ctx.Err() != nil {
			for flushed := false; !flushed; {
				select {
				case b := <-c.replies:
					if write(b) != nil {
						conn.CloseNow()
						return
					}
				default:
					flushed = true
				}
			}
			if v := violation; v != nil && v.Load() != nil {
				s.log.DebugContext(ctx, "websocket client broke the protocol", "err", *v.Load(), aboutConnection)
				conn.Close(websocket.StatusProtocolError, "protocol error")
				return
			}
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		}
		var b []byte
		select {
		case b = <-c.queue:
		default:
			select {
			case <-ctx.Done():
				continue // replies flushed and closed at the top of the loop
			case <-c.slow:
				continue // dropped at the top of the loop
			case b = <-c.queue:
			case b = <-c.replies:
			case <-ping.C:
				pctx, pcancel := context.WithTimeout(ctx, s.cfg.PingInterval)
				err := conn.Ping(pctx)
				pcancel()
				if err != nil {
					s.log.DebugContext(ctx, "websocket client dropped: no pong", "err", err, aboutConnection)
					conn.CloseNow()
					return
				}
				continue
			}
		}
		if err := writeQueued(write, cw, b, c); err != nil {
			return
		}
	}
}

// maxFramesPerWrite bounds the hub frames one write carries.
const maxFramesPerWrite = 64

// writeQueued writes b and, when more hub frames wait, those too, collected by cw into one
// write(2) (a received message is four frames, published together).
func writeQueued(write func([]byte) error, cw *coalescer, b []byte, c *client) error {
	n := min(len(c.queue), maxFramesPerWrite-1)
	if n == 0 || cw == nil {
		return write(b)
	}
	cw.hold()
	err := write(b)
	for ; n > 0 && err == nil; n-- {
		err = write(<-c.queue) // only this loop takes from the queue
	}
	if rerr := cw.release(); err == nil {
		err = rerr
	}
	return err
}

// readLoop runs each text frame as a command line, one at a time, within
// the client's rate limit. The echo "admin > <line>" and the command's output
// go to this client only, marked as its reply (the last frame ReplyEnd); a
// command beyond the limit is echoed and answered with one line saying it was
// not run, a command without output with "Done.".
//
// It returns the read's error that ended it (nil when the connection ended otherwise).
func (s *Server) readLoop(ctx context.Context, conn *websocket.Conn, c *client) error {
	limit := newTokenBucket(s.cfg.CommandRate, s.cfg.CommandBurst, s.cfg.Hub.Now())
	limited := fmt.Sprintf("Rate limited: at most %d commands at once and %g per second; this command was not run.",
		s.cfg.CommandBurst, s.cfg.CommandRate)
	// A read bound to ctx would close the connection when ctx ends, before
	// the writer has flushed the queued replies; the writer closes it.
	rctx := context.WithoutCancel(ctx)
	for {
		typ, data, err := conn.Read(rctx)
		if err != nil {
			return err
		}
		var rep Reply
		switch {
		case typ != websocket.MessageText:
			rep = Reply{Lines: []string{"Invalid command: binary frames are not commands. Type 'help'."}, Failed: true}
		case !limit.take(s.cfg.Hub.Now()):
			if !s.reply(ctx, c, ReplyEcho, "admin > "+string(data), false) {
				return nil
			}
			rep = Reply{Lines: []string{limited}, Failed: true}
		default:
			line := string(data)
			if !s.reply(ctx, c, ReplyEcho, "admin > "+line, false) {
				return nil
			}
			cctx, cancel := context.WithTimeout(ctx, s.cfg.CommandTime)
			rep = s.cfg.Commands.Run(cctx, line)
			cancel()
			if ctx.Err() != nil {
				return nil // cut short by the shutdown: no reply, the client sees the node going away
			}
		}
		out := rep.Lines
		if len(out) == 0 {
			out = []string{"Done."}
		}
		for i, l := range out {
			kind := ReplyOutput
			if i == len(out)-1 {
				kind = ReplyEnd
			}
			if !s.reply(ctx, c, kind, l, rep.Failed && kind == ReplyEnd) {
				return nil
			}
		}
		if rep.After != nil && !rep.Failed {
			rep.After()
		}
	}
}

// reply queues one log frame of the given Reply kind for c alone, marked as a failure's end
// when failed, waiting while its reply queue is full; it reports false when the connection
// ended first.
func (s *Server) reply(ctx context.Context, c *client, kind, msg string, failed bool) bool {
	f := NewFrame(TypeLog, msg, s.cfg.Hub.Now())
	f.Reply, f.Error = kind, failed
	b := f.encode()
	select {
	case c.replies <- b: // room in the queue: taken even while shutting down
		return true
	default:
	}
	select {
	case c.replies <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// tokenBucket limits one client's commands: it holds up to burst tokens,
// refilled at rate per second; each command takes one. It is used by one
// reader goroutine only.
type tokenBucket struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate float64, burst int, now time.Time) *tokenBucket {
	return &tokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// take reports whether a command may run at now, spending a token if so.
func (b *tokenBucket) take(now time.Time) bool {
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// refuse answers 403 with the REST API's error envelope.
func refuse(w http.ResponseWriter, status, msg string) {
	body, _ := json.Marshal(struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}{status, msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	w.Write(body)
}

// protocolViolation reports whether err, which ended a client's reads, is the client breaking
// the WebSocket protocol (an unmasked frame, a bad opcode or continuation): not a close the
// client sent, the connection failing or ending, or the server stopping.
func protocolViolation(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || websocket.CloseStatus(err) != -1 {
		return false
	}
	var ne net.Error
	return !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ne)
}
