package ws

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// writeTimeout bounds one frame's write (or one release of a coalescer): a client that does not
// read for this long is dropped.
const writeTimeout = 10 * time.Second

// maxCoalesced bounds the bytes a held connection collects before it writes them anyway.
const maxCoalesced = 64 << 10

// coalescer is a WebSocket's hijacked connection. The websocket library writes and flushes each
// frame on its own; while the write loop holds the coalescer, what it writes collects and leaves
// in one write(2) on release, so that frames queued together (a received message is four: three
// log lines and the message) cost one system call instead of one each. Unheld, writes go through.
type coalescer struct {
	net.Conn
	timeout time.Duration // bounds a release's write, as the write loop's context bounds a frame's

	mu     sync.Mutex
	held   bool
	buf    []byte
	writes int // writes to the connection, for tests
}

func (c *coalescer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held && len(c.buf)+len(p) <= maxCoalesced {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	c.writes++
	return c.Conn.Write(p)
}

// hold starts collecting writes.
func (c *coalescer) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// release writes what was collected and stops collecting.
func (c *coalescer) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	return c.flushLocked()
}

func (c *coalescer) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.Conn.Write(c.buf)
	c.writes++
	c.buf = c.buf[:0]
	if err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(time.Time{})
}

// writeCount is how many writes reached the connection.
func (c *coalescer) writeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// coalescingWriter hands the websocket library a coalescer instead of the hijacked connection.
type coalescingWriter struct {
	http.ResponseWriter
	timeout time.Duration
	conn    *coalescer // set by Hijack
}

func (w *coalescingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &coalescer{Conn: conn, timeout: w.timeout}
	// A server-side websocket writes through brw.Writer, which net/http hands over empty (it
	// flushed the 101 response before the hijack): point it at the coalescer.
	brw.Writer.Reset(w.conn)
	return w.conn, brw, nil
}

// acceptCoalescing upgrades r to a WebSocket whose writes go through a coalescer.
func acceptCoalescing(w http.ResponseWriter, r *http.Request, timeout time.Duration) (*websocket.Conn, *coalescer, error) {
	cw := &coalescingWriter{ResponseWriter: w, timeout: timeout}
	conn, err := websocket.Accept(cw, r, nil)
	if err != nil {
		return nil, nil, err
	}
	return conn, cw.conn, nil
}
