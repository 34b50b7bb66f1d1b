package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/session"
)

// DefaultUDPIdle is how long an exit keeps a UDP flow that carried nothing either way.
const DefaultUDPIdle = 2 * time.Minute

// ExitConfig configures ServeExit.
type ExitConfig struct {
	// Mux accepts the sessions entries open to this node.
	Mux *session.Mux
	// Policy decides what the exit connects to and dials it.
	Policy *exit.Policy
	// DialTimeout bounds each dial. Default 15 s.
	DialTimeout time.Duration
	// UDPIdle: DefaultUDPIdle when 0.
	UDPIdle time.Duration
	Logger  *slog.Logger
}

// ServeExit accepts the sessions entries open to this node until ctx ends (or the mux stops),
// and serves each: it reads the request, dials it through the policy and carries the bytes
// both ways, or resets the session with the reason the policy gives (not allowed, refused,
// unreachable, limit). It returns when every session it served ended.
func ServeExit(ctx context.Context, cfg ExitConfig) error {
	if cfg.Mux == nil || cfg.Policy == nil {
		return errors.New("gateway: ServeExit needs Mux and Policy")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 15 * time.Second
	}
	if cfg.UDPIdle <= 0 {
		cfg.UDPIdle = DefaultUDPIdle
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := cfg.Mux.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, session.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Go(func() { serveSession(ctx, cfg, conn) })
	}
}

// serveSession serves one incoming session.
func serveSession(ctx context.Context, cfg ExitConfig, conn *session.Conn) {
	defer conn.Close()
	req, err := decodeRequest(conn.Request())
	if err != nil {
		_ = conn.Reset(session.ReasonRefused)
		cfg.Logger.Debug("session refused: malformed request")
		return
	}
	network := "tcp"
	if conn.Mode() == session.ModeUDP {
		network = "udp"
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	var remote net.Conn
	if req.service != "" {
		remote, err = cfg.Policy.DialService(dctx, network, req.service)
	} else {
		remote, err = cfg.Policy.Dial(dctx, network, req.target)
	}
	cancel()
	if err != nil {
		reason := resetReason(exit.ReasonOf(err))
		_ = conn.Reset(reason)
		cfg.Logger.Debug("session refused", "reason", exit.ReasonOf(err).String())
		return
	}
	defer remote.Close()
	stop := context.AfterFunc(ctx, func() { _ = remote.Close(); _ = conn.Reset(session.ReasonReset) })
	defer stop()
	if err := conn.Confirm(); err != nil {
		return
	}
	if conn.Mode() == session.ModeUDP {
		carryDatagrams(conn, remote, cfg.UDPIdle, nil)
		return
	}
	splice(conn, remote, nil)
}

// resetReason is the session's reset reason for the exit policy's.
func resetReason(r exit.Reason) session.Reason {
	switch r {
	case exit.ReasonNotAllowed:
		return session.ReasonNotAllowed
	case exit.ReasonRefused:
		return session.ReasonRefused
	case exit.ReasonLimit:
		return session.ReasonLimit
	}
	return session.ReasonUnreachable
}

// halfCloser is a connection whose writing direction can end alone.
type halfCloser interface{ CloseWrite() error }

// counters counts the bytes a spliced connection carried: out from the local side (the
// application at the entry) towards the target, in back.
type counters interface {
	addOut(n int)
	addIn(n int)
}

// splice carries bytes both ways between the session and a TCP connection, each direction
// ending with a half-close, and returns when both ended. At the entry local is the
// application's connection and remote the session; at the exit local is the session and remote
// the target's connection. count, if not nil, is told the bytes from local to remote (out) and
// back (in).
func splice(local, remote net.Conn, count counters) {
	var wg sync.WaitGroup
	one := func(dst, src net.Conn, add func(int)) {
		_, err := io.Copy(writerFunc(func(p []byte) (int, error) {
			n, err := dst.Write(p)
			if add != nil {
				add(n)
			}
			return n, err
		}), src)
		if hc, ok := dst.(halfCloser); ok && err == nil {
			_ = hc.CloseWrite()
		} else {
			// The direction failed: the other cannot go on meaningfully either.
			_ = dst.Close()
			_ = src.Close()
		}
	}
	var out, in func(int)
	if count != nil {
		out, in = count.addOut, count.addIn
	}
	wg.Go(func() { one(remote, local, out) })
	wg.Go(func() { one(local, remote, in) })
	wg.Wait()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// carryDatagrams carries datagrams both ways between a UDP-mode session and a connected UDP
// socket until either fails or nothing passed for idle. At the entry udp is the application's
// flow and count, if not nil, is told the bytes from it towards the exit (out) and back (in).
func carryDatagrams(sess *session.Conn, udp net.Conn, idle time.Duration, count counters) {
	var mu sync.Mutex
	last := time.Now()
	touch := func() { mu.Lock(); last = time.Now(); mu.Unlock() }
	done := make(chan struct{})
	var wg sync.WaitGroup
	pump := func(dst, src net.Conn, add func(int)) {
		defer func() { _ = dst.Close(); _ = src.Close() }()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if err != nil {
				return
			}
			touch()
			if _, err := dst.Write(buf[:n]); err != nil && !errors.Is(err, session.ErrTooLarge) {
				return
			}
			if add != nil {
				add(n)
			}
		}
	}
	var out, in func(int)
	if count != nil {
		out, in = count.addOut, count.addIn
	}
	wg.Go(func() { pump(sess, udp, out) })
	wg.Go(func() { pump(udp, sess, in) })
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(idle / 4)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			mu.Lock()
			quiet := time.Since(last) >= idle
			mu.Unlock()
			if quiet {
				_ = sess.Close()
				_ = udp.Close()
			}
		}
	}
}
