package ws

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// MessageBuffer is how many received messages AppStreams keeps: for a client that reconnects
// with ?since=<id>, and for one that falls behind.
const MessageBuffer = 1000

// appQueue is how many hub frames wait for one admin stream client before it is dropped.
const appQueue = 2 * MessageBuffer

// Types of the message stream's frames.
const (
	// TypeAppMessage is a message this node received (AppMessage).
	TypeAppMessage = "message"
	// TypeMissed says that messages were received that the stream no longer holds (Missed).
	TypeMissed = "missed"
)

// AppMessage is one frame of the message stream: a message this node received. ID grows with
// every message, also across restarts while the clock does not go back (it is at least the time
// the stream took it in microseconds since 1970, and always one more than the previous);
// ReceivedAt is TimeFormat. Body is the received text exactly, which a client must escape
// before showing it.
type AppMessage struct {
	Type       string `json:"type"`
	ID         int64  `json:"id"`
	Body       string `json:"body"`
	ReceivedAt string `json:"receivedAt"`
}

// Missed is the frame that tells a message stream client it missed messages the node received:
// it fell more than MessageBuffer messages behind, or reconnected with a ?since= older than the
// messages kept. The messages missed are those with an ID above After and at most Through; the
// stream goes on with the first message kept after them.
type Missed struct {
	Type    string `json:"type"`
	After   int64  `json:"after"`
	Through int64  `json:"through"`
}

// AppStreams serves the WebSockets of the REST port: the stream of received messages
// (ServeMessages), fed by Deliver, and the read-only admin stream (ServeAdmin), which is the
// Hub's frames as the admin server sends them. A message stream client reads from the messages
// kept, at its own pace: one that falls behind loses no message silently (it is told what it
// missed, Missed). The caller authenticates requests before handing them over. Streams end when
// Run returns.
type AppStreams struct {
	hub  *Hub
	log  *slog.Logger
	srv  *Server // for the admin stream's write loop
	done chan struct{}

	mu      sync.Mutex
	lastID  int64
	buf     []AppMessage // the last MessageBuffer messages, oldest first
	next    uint64       // sequence number of the next message; buf holds next-len(buf) … next-1
	dropped int64        // ID of the newest message no longer in buf; 0: none dropped
	waiting map[chan struct{}]struct{}
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
	return &AppStreams{hub: hub, log: logger, srv: srv, done: make(chan struct{}), waiting: map[chan struct{}]struct{}{}}, nil
}

// Run serves until ctx ends; then every stream closes. It may run once.
func (a *AppStreams) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return errors.New("ws: AppStreams already ran")
	}
	a.running = true
	a.mu.Unlock()
	defer close(a.done)
	<-ctx.Done()
	return nil
}

// Deliver takes a message this node received, numbers it, keeps it and wakes the message stream's
// clients. It never blocks on a client.
func (a *AppStreams) Deliver(body string, receivedAt time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := max(a.lastID+1, a.hub.Now().UnixMicro())
	a.lastID = id
	if len(a.buf) == MessageBuffer {
		a.dropped = a.buf[0].ID
		copy(a.buf, a.buf[1:])
		a.buf = a.buf[:MessageBuffer-1]
	}
	a.buf = append(a.buf, AppMessage{Type: TypeAppMessage, ID: id, Body: body, ReceivedAt: receivedAt.UTC().Format(TimeFormat)})
	a.next++
	for w := range a.waiting {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// after returns the kept messages from sequence number seq on, and the Missed frame to send
// first when some messages from seq on are no longer kept (lastID: the last ID the client has).
func (a *AppStreams) after(seq uint64, lastID int64) ([]AppMessage, *Missed, uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	first := a.next - uint64(len(a.buf))
	var missed *Missed
	if seq < first {
		missed = &Missed{Type: TypeMissed, After: lastID, Through: a.dropped}
		seq = first
	}
	return append([]AppMessage(nil), a.buf[seq-first:]...), missed, a.next
}

// cursor is where a client starts: after the kept message with the largest ID not above *since,
// or at the next message without since. It also returns the ID the client has last.
func (a *AppStreams) cursor(since *int64) (uint64, int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if since == nil {
		return a.next, a.lastID
	}
	first := a.next - uint64(len(a.buf))
	if *since < a.dropped {
		return first - 1, *since // before the first kept: after reports the dropped ones missed
	}
	seq := first
	for _, m := range a.buf {
		if m.ID > *since {
			break
		}
		seq++
	}
	return seq, *since
}

// ServeMessages upgrades r to the message stream: every message received from now on, preceded,
// when since is not nil, by the kept messages whose ID is above *since (and a Missed frame when
// messages after *since are no longer kept).
func (a *AppStreams) ServeMessages(w http.ResponseWriter, r *http.Request, since *int64) {
	conn, cw, ctx, cancel, ok := a.accept(w, r)
	if !ok {
		return
	}
	defer cancel()
	defer conn.CloseNow()
	wake := make(chan struct{}, 1)
	a.mu.Lock()
	a.waiting[wake] = struct{}{}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, wake)
		a.mu.Unlock()
	}()
	go discard(ctx, conn, cancel)
	seq, lastID := a.cursor(since)
	ping := time.NewTicker(a.srv.cfg.PingInterval)
	defer ping.Stop()
	for {
		msgs, missed, next := a.after(seq, lastID)
		if err := a.write(ctx, conn, cw, msgs, missed); err != nil {
			return
		}
		seq = next
		if len(msgs) > 0 {
			lastID = msgs[len(msgs)-1].ID
		}
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		case <-wake:
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, a.srv.cfg.PingInterval)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				return
			}
		}
	}
}

// write sends missed (when not nil) and msgs, collected into as few writes as the coalescer
// allows.
func (a *AppStreams) write(ctx context.Context, conn *websocket.Conn, cw *coalescer, msgs []AppMessage, missed *Missed) error {
	if len(msgs) == 0 && missed == nil {
		return nil
	}
	frames := make([][]byte, 0, len(msgs)+1)
	if missed != nil {
		b, _ := json.Marshal(missed) // numbers and a string: cannot fail
		frames = append(frames, b)
	}
	for _, m := range msgs {
		b, _ := json.Marshal(m) // strings and a number: cannot fail
		frames = append(frames, b)
	}
	if cw != nil {
		cw.hold()
	}
	var err error
	for _, b := range frames {
		wctx, wcancel := context.WithTimeout(ctx, writeTimeout)
		err = conn.Write(wctx, websocket.MessageText, b)
		wcancel()
		if err != nil {
			break
		}
	}
	if cw != nil {
		if rerr := cw.release(); err == nil {
			err = rerr
		}
	}
	return err
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
	go discard(ctx, conn, cancel)
	a.srv.writeLoop(ctx, cancel, conn, cw, c, nil)
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
// connection before the write loop says why. A client breaking the protocol is closed with 1002.
func discard(ctx context.Context, conn *websocket.Conn, done context.CancelFunc) {
	defer done()
	for {
		if _, _, err := conn.Read(context.Background()); err != nil {
			if protocolViolation(ctx, err) {
				conn.Close(websocket.StatusProtocolError, "protocol error")
			}
			return
		}
	}
}
