package ws

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// Config configures a Server. Hub and Commands are required; Token is
// required unless DisableAuth.
type Config struct {
	Token        string
	DisableAuth  bool
	Hub          *Hub
	Commands     *Commands
	Logger       *slog.Logger
	QueueSize    int           // frames queued per client before it is dropped; default 1024
	PingInterval time.Duration // keepalive; default 30 s
	CommandTime  time.Duration // longest a command may run; default 2 min
}

// Server is the WebSocket admin server; it is an http.Handler serving every
// path.
type Server struct {
	cfg    Config
	log    *slog.Logger
	digest [32]byte
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
	if cfg.QueueSize <= ReplaySize {
		cfg.QueueSize = 1024
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	if cfg.CommandTime <= 0 {
		cfg.CommandTime = 2 * time.Minute
	}
	return &Server{cfg: cfg, log: cfg.Logger, digest: sha256.Sum256([]byte(cfg.Token))}, nil
}

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.DisableAuth {
		return true
	}
	d := sha256.Sum256([]byte(r.URL.Query().Get("apiToken")))
	return subtle.ConstantTimeCompare(d[:], s.digest[:]) == 1
}

// ServeHTTP upgrades the request and serves the client until it leaves, the
// node shuts down (the request's context ends) or it falls behind.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Debug("websocket upgrade failed", "err", err)
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(MaxLineBytes + 1024)
	ctx := r.Context()

	if !s.authorized(r) {
		s.log.Warn("websocket client refused: bad token", "remote", r.RemoteAddr)
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
	defer cancel()
	go s.writeLoop(ctx, cancel, conn, c)
	s.readLoop(ctx, conn)
}

// writeLoop sends queued frames and keepalive pings until ctx ends, the
// connection fails or the client falls behind.
func (s *Server) writeLoop(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, c *client) {
	defer cancel()
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		case <-c.slow:
			s.log.Warn("websocket client dropped: too slow")
			conn.Close(websocket.StatusPolicyViolation, "client too slow")
			return
		case b := <-c.queue:
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Write(wctx, websocket.MessageText, b)
			wcancel()
			if err != nil {
				return
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, s.cfg.PingInterval)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				s.log.Debug("websocket client dropped: no pong", "err", err)
				conn.CloseNow()
				return
			}
		}
	}
}

// readLoop runs each text frame as a command line, one at a time.
func (s *Server) readLoop(ctx context.Context, conn *websocket.Conn) {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			s.cfg.Hub.Log("Invalid command: binary frames are not commands. Type 'help'.")
			continue
		}
		line := string(data)
		s.cfg.Hub.Log("admin > " + line)
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CommandTime)
		for _, out := range s.cfg.Commands.Run(cctx, line) {
			s.cfg.Hub.Log(out)
		}
		cancel()
	}
}
