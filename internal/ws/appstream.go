package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// MessageBuffer is how many received messages AppStreams keeps for a client
// that reconnects with ?since=<id>.
const MessageBuffer = 1000

// appQueue is how many frames wait for one stream client before it is
// dropped; it holds a whole MessageBuffer replay.
const appQueue = 2 * MessageBuffer

// subscriberQueue is how many hub frames wait for the message stream's own
// reader (Run), which drains them at once.
const subscriberQueue = 4096

// TypeAppMessage is the type of a message stream frame.
const TypeAppMessage = "message"

// AppMessage is one frame of the message stream: a message this node
// received. ID grows with every message, also across restarts while the
// clock does not go back (it is at least the receive time in microseconds
// since 1970, and always one more than the previous); ReceivedAt is
// TimeFormat. Body is the received text exactly, which a client must
// escape before showing it.
type AppMessage struct {
	Type       string `json:"type"`
	ID         int64  `json:"id"`
	Body       string `json:"body"`
	ReceivedAt string `json:"receivedAt"`
}

// AppStreams serves the WebSockets of the REST port: the stream of received
// messages (ServeMessages) and the read-only admin stream (ServeAdmin). Both
// read the Hub: the admin stream is the Hub's frames, as the admin server
// sends them; the message stream is its message frames, numbered by Run.
// The caller authenticates requests before handing them over. Streams end
// when Run returns.
type AppStreams struct {
	hub  *Hub
	log  *slog.Logger
	srv  *Server // for its write loop
	done chan struct{}

	mu      sync.Mutex
	lastID  int64
	buf     []AppMessage // the last MessageBuffer messages, oldest first
	clients map[*client]struct{}
	running bool
}

// NewAppStreams returns the streams over hub; logger may be nil.
func NewAppStreams(hub *Hub, logger *slog.Logger) (*AppStreams, error) {
	if hub == nil {
		return nil, errors.New("ws: Hub is required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &Server{cfg: Config{Hub: hub, QueueSize: appQueue, PingInterval: 30 * time.Second}, log: logger}
	return &AppStreams{hub: hub, log: logger, srv: srv, done: make(chan struct{}), clients: map[*client]struct{}{}}, nil
}

// Run numbers the message frames the hub publishes and passes them to the
// message stream's clients until ctx ends; then every stream closes. It may
// run once.
func (a *AppStreams) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return errors.New("ws: AppStreams already ran")
	}
	a.running = true
	a.mu.Unlock()
	defer close(a.done)
	for {
		sub := newClient(subscriberQueue)
		a.hub.subscribe(sub)
		err := a.consume(ctx, sub)
		a.hub.leave(sub)
		if err != nil {
			return nil // ctx ended
		}
		// The hub dropped the reader: it could not keep up. Messages
		// published meanwhile are lost to the stream.
		a.log.Warn("message stream fell behind the node; some received messages are not on it")
	}
}

// consume reads sub until ctx ends (an error) or the hub drops it (nil).
func (a *AppStreams) consume(ctx context.Context, sub *client) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.slow:
			// Keep what was queued before the drop.
			for {
				select {
				case b := <-sub.queue:
					a.take(b)
				default:
					return nil
				}
			}
		case b := <-sub.queue:
			a.take(b)
		}
	}
}

// messageFramePrefix starts every encoded message frame (Frame.encode: Type is
// the first field).
var messageFramePrefix = []byte(`{"type":"` + TypeMessage + `",`)

// take numbers a hub frame when it is a received message, keeps it and
// offers it to every message stream client.
func (a *AppStreams) take(b []byte) {
	// Most hub frames are log lines (three per received message); the type is
	// the encoding's first field, so they are told apart without decoding.
	if !bytes.HasPrefix(b, messageFramePrefix) {
		return
	}
	var f Frame
	if json.Unmarshal(b, &f) != nil || f.Type != TypeMessage {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id := max(a.lastID+1, a.hub.Now().UnixMicro())
	a.lastID = id
	m := AppMessage{Type: TypeAppMessage, ID: id, Body: f.Msg, ReceivedAt: f.TS}
	if len(a.buf) == MessageBuffer {
		copy(a.buf, a.buf[1:])
		a.buf = a.buf[:MessageBuffer-1]
	}
	a.buf = append(a.buf, m)
	enc, _ := json.Marshal(m) // strings and a number: cannot fail
	for c := range a.clients {
		if !c.offer(enc) {
			delete(a.clients, c)
		}
	}
}

// ServeMessages upgrades r to the message stream: every message received
// from now on, preceded, when since is not nil, by the kept messages whose
// ID is above *since.
func (a *AppStreams) ServeMessages(w http.ResponseWriter, r *http.Request, since *int64) {
	conn, cw, ctx, cancel, ok := a.accept(w, r)
	if !ok {
		return
	}
	defer cancel()
	defer conn.CloseNow()
	c := newClient(appQueue)
	a.mu.Lock()
	if since != nil {
		for _, m := range a.buf {
			if m.ID > *since {
				enc, _ := json.Marshal(m)
				c.offer(enc)
			}
		}
	}
	a.clients[c] = struct{}{}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.clients, c)
		a.mu.Unlock()
	}()
	go discard(conn, cancel)
	a.srv.writeLoop(ctx, cancel, conn, cw, c)
}

// ServeAdmin upgrades r to the admin stream: the frames of the admin
// WebSocket server (the last ReplaySize first, ending with this client's
// connect line), without its commands: what the client sends is ignored.
func (a *AppStreams) ServeAdmin(w http.ResponseWriter, r *http.Request, authEnabled bool) {
	conn, cw, ctx, cancel, ok := a.accept(w, r)
	if !ok {
		return
	}
	defer cancel()
	defer conn.CloseNow()
	state := "ENABLED"
	if !authEnabled {
		state = "DISABLED"
	}
	c := newClient(appQueue)
	a.hub.join(c, "ws client connected [ authentication "+state+" ]")
	defer a.hub.leave(c)
	go discard(conn, cancel)
	a.srv.writeLoop(ctx, cancel, conn, cw, c)
}

// accept upgrades the request; the returned context ends with the
// connection's request or when Run returns.
func (a *AppStreams) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *coalescer, context.Context, context.CancelFunc, bool) {
	conn, cw, err := acceptCoalescing(w, r, writeTimeout)
	if err != nil {
		a.log.Debug("websocket upgrade failed", "err", err)
		return nil, nil, nil, nil, false
	}
	conn.SetReadLimit(MaxLineBytes + 1024)
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		select {
		case <-a.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return conn, cw, ctx, cancel, true
}

// discard reads and drops what the client sends (the streams take no
// input), which also answers its pings, until the connection ends; then it
// calls done. It reads without a deadline: a cancelled read would close the
// connection before the write loop says why.
func discard(conn *websocket.Conn, done context.CancelFunc) {
	defer done()
	for {
		if _, _, err := conn.Read(context.Background()); err != nil {
			return
		}
	}
}

// subscribe registers c for the hub's frames from now on: no replay and no
// connect line.
func (h *Hub) subscribe(c *client) {
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
}
