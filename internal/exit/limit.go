package exit

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The limits' defaults (Config's zero values).
const (
	// DefaultMaxConns is the most connections an exit holds open at once.
	DefaultMaxConns = 256
	// DefaultConnRate is the most new connections a second an exit opens, in bursts of
	// DefaultConnBurst.
	DefaultConnRate  = 10
	DefaultConnBurst = 20
	// DefaultSessionRate is the most bytes a second one session's connection carries, both ways
	// together, in bursts of DefaultSessionBurst: far above what a session's packets carry at
	// the defaults (docs/SESSIONS.md), a bound on what one session can draw from the exit.
	DefaultSessionRate  = 1 << 20
	DefaultSessionBurst = 64 << 10
)

// limits are an exit's limits on its connections: how many are open, how fast new ones come.
type limits struct {
	now      func() time.Time
	maxConns int
	newConns *rate.Limiter

	mu   sync.Mutex
	open int
}

// acquire takes one connection of the limits, or refuses with ErrLimit; release gives it back
// (once, whatever calls it more).
func (l *limits) acquire() (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.maxConns {
		return nil, refuse(ErrLimit, "as many connections open as the exit may hold")
	}
	if !l.newConns.AllowN(l.now(), 1) {
		return nil, refuse(ErrLimit, "new connections come faster than the exit may open them")
	}
	l.open++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.open--
			l.mu.Unlock()
		})
	}, nil
}

// LimitConn returns c with its reads and writes, together, held to lim's rate in bytes a second:
// a write waits for its bytes' tokens before it goes (a datagram whole), a read for the tokens of
// what it read before it returns. Closing the returned conn closes c and ends the waits; a wait
// ended so returns net.ErrClosed (a read with the bytes it had read). Read and write deadlines
// bound c's own reads and writes, not the waits.
func LimitConn(c net.Conn, lim *rate.Limiter) net.Conn {
	return limitConn(c, lim, func() {})
}

func limitConn(c net.Conn, lim *rate.Limiter, release func()) *limitedConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &limitedConn{Conn: c, lim: lim, ctx: ctx, cancel: cancel, release: release}
}

// limitedConn is a connection held to a rate, which gives back its place in the exit's limits
// when closed.
type limitedConn struct {
	net.Conn
	lim     *rate.Limiter
	ctx     context.Context
	cancel  context.CancelFunc
	release func()
	once    sync.Once
}

func (c *limitedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if werr := c.wait(n); werr != nil && err == nil {
		err = werr
	}
	return n, err
}

func (c *limitedConn) Write(b []byte) (int, error) {
	if err := c.wait(len(b)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// wait takes n tokens, at most a burst at a time.
func (c *limitedConn) wait(n int) error {
	if c.lim.Limit() == rate.Inf {
		return nil
	}
	for n > 0 {
		k := min(n, max(c.lim.Burst(), 1)) // a burst of 0 refuses every wait: WaitN says so
		if err := c.lim.WaitN(c.ctx, k); err != nil {
			if c.ctx.Err() != nil {
				return net.ErrClosed
			}
			return err
		}
		n -= k
	}
	return nil
}

// CloseWrite half-closes the connection (TCP: a FIN, the session's end of one direction), when
// the connection can; errors.ErrUnsupported when it cannot.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// CloseRead shuts the reading side, when the connection can; errors.ErrUnsupported when it
// cannot.
func (c *limitedConn) CloseRead() error {
	if cr, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return cr.CloseRead()
	}
	return errors.ErrUnsupported
}

func (c *limitedConn) Close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		c.cancel()
		c.release()
		err = c.Conn.Close()
	})
	return err
}
