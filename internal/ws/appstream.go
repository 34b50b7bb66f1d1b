package ws

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/store"
)

// Inbox is the durable inbox the message stream reads; *courier.Courier implements it.
type Inbox interface {
	// Inbox lists the kept messages with a seq above since, oldest first, at most limit, and how
	// many are kept.
	Inbox(since uint64, limit int) ([]store.InboxMessage, int, error)
}

// inboxBatch is how many kept messages a message stream client reads from the inbox at a time.
const inboxBatch = 100

// EventQueue is how many delivered, failed and incomplete frames wait for one message stream
// client before it is dropped as too slow (the messages themselves wait in the inbox).
const EventQueue = 1000

// appQueue is how many hub frames wait for one admin stream client before it is dropped.
const appQueue = 2000

// Types of the message stream's frames.
const (
	// TypeAppMessage is a message this node received (AppMessage).
	TypeAppMessage = "message"
	// TypeMissed says that messages were received that the inbox no longer keeps (Missed).
	TypeMissed = "missed"
	// TypeDelivered and TypeFailed tell what became of one of this node's own messages sent
	// through the courier; TypeIncomplete that a message to this node arrived incomplete and was
	// given up (MessageEvent).
	TypeDelivered  = "delivered"
	TypeFailed     = "failed"
	TypeIncomplete = "incomplete"
)

// Kinds of the events Event takes: those of courier.Event.
const (
	EventReceived   = "received"
	EventDelivered  = TypeDelivered
	EventFailed     = TypeFailed
	EventIncomplete = TypeIncomplete
)

// AppMessage is one frame of the message stream: a message this node received and keeps in its
// inbox. ID is its inbox seq, which grows with every message and across restarts (the store's
// counter, never reused); ReceivedAt is TimeFormat. Body is the received text exactly (bytes
// that are not UTF-8 read as U+FFFD), which a client must escape before showing it. MessageID is
// the sender's message id (0x and 32 hexadecimal digits); Reply and InReplyTo say it answers one
// of this node's messages; RepliesLeft is how many reply blocks came with it and are unused.
type AppMessage struct {
	Type        string `json:"type"`
	ID          uint64 `json:"id"`
	Body        string `json:"body"`
	ReceivedAt  string `json:"receivedAt"`
	MessageID   string `json:"messageId,omitempty"`
	Reply       bool   `json:"reply,omitempty"`
	InReplyTo   string `json:"inReplyTo,omitempty"`
	RepliesLeft int    `json:"repliesLeft,omitempty"`
}

// Missed is the frame that tells a message stream client that messages it has not seen were
// received but are no longer kept (the app read and deleted them through the REST API or the
// console before this client reached them, or it reconnected with a ?since= older than what is
// kept): those with a seq above After and at most Through. The stream goes on with the next
// message kept.
type Missed struct {
	Type    string `json:"type"`
	After   uint64 `json:"after"`
	Through uint64 `json:"through"`
}

// MessageEvent is the frame of what became of a message: Type TypeDelivered or TypeFailed for
// this node's own message ID (the id POST /messages answered), with Reason for a failure;
// TypeIncomplete for the sender's message ID that arrived incomplete, with Reason. It reaches
// the clients connected when it happens; GET /messages/{id} keeps the outgoing state.
type MessageEvent struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// AppStreams serves the WebSockets of the REST port: the stream of received messages
// (ServeMessages), read from the node's durable inbox and woken by Event, and the read-only
// admin stream (ServeAdmin), which is the Hub's frames as the admin server sends them. A message
// stream client reads the inbox at its own pace: it cannot fall behind and lose a message, and
// one it did not see because the app removed it first is named in a Missed frame. The caller
// authenticates requests before handing them over. Streams end when Run returns.
type AppStreams struct {
	hub   *Hub
	inbox Inbox
	log   *slog.Logger
	srv   *Server // for the admin stream's write loop
	done  chan struct{}

	mu      sync.Mutex
	newest  uint64 // the newest seq received since the node started; 0: none yet
	clients map[*appClient]struct{}
	running bool
}

// appClient is one message stream client's state shared with Event.
type appClient struct {
	wake   chan struct{} // a message was received (capacity 1)
	events chan []byte   // encoded MessageEvent frames
	slow   chan struct{} // closed once events overflowed
	once   sync.Once
	// first is the seq of the first message received after the client connected (0: none yet;
	// guarded by AppStreams.mu).
	first uint64
}

// NewAppStreams returns the streams over hub and inbox; logger may be nil.
func NewAppStreams(hub *Hub, inbox Inbox, logger *slog.Logger) (*AppStreams, error) {
	if hub == nil || inbox == nil {
		return nil, errors.New("ws: Hub and Inbox are required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &Server{cfg: Config{Hub: hub, QueueSize: appQueue, PingInterval: 30 * time.Second}, log: logger}
	return &AppStreams{hub: hub, inbox: inbox, log: logger, srv: srv, done: make(chan struct{}),
		clients: map[*appClient]struct{}{}}, nil
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

// Event takes what happened to a message (courier.Event's fields): EventReceived with the stored
// message m, which wakes the message stream's clients to read it from the inbox; EventDelivered,
// EventFailed and EventIncomplete with the message's id and the reason, sent to every client
// connected now. Other kinds are ignored. It never blocks on a client.
func (a *AppStreams) Event(kind string, id [16]byte, reason string, m store.InboxMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch kind {
	case EventReceived:
		a.newest = max(a.newest, m.Seq)
		for c := range a.clients {
			if c.first == 0 {
				c.first = m.Seq
			}
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	case EventDelivered, EventFailed, EventIncomplete:
		b, _ := json.Marshal(MessageEvent{Type: kind, ID: hexID(id), Reason: reason}) // strings: cannot fail
		for c := range a.clients {
			select {
			case c.events <- b:
			default:
				c.once.Do(func() { close(c.slow) })
			}
		}
	}
}

// hexID writes a message id as the REST API does: 0x and 32 lower-case hexadecimal digits.
func hexID(id [16]byte) string { return "0x" + hex.EncodeToString(id[:]) }

// join registers a client and returns where it starts reading: after *since, or at the newest
// message received (a client without since gets what is received from now on). A since beyond
// the newest seq received names no message of this inbox (an id of another node, or of the
// times before ids were the inbox's seq): the client reads on from the newest.
func (a *AppStreams) join(c *appClient, since *uint64) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients[c] = struct{}{}
	switch {
	case since == nil && a.newest == 0:
		return math.MaxUint64 // the first message received tells (Event sets first)
	case since == nil:
		return a.newest
	case a.newest > 0 && *since > a.newest:
		return a.newest
	}
	return *since
}

func (a *AppStreams) leave(c *appClient) {
	a.mu.Lock()
	delete(a.clients, c)
	a.mu.Unlock()
}

// firstSeen is the seq of the first message received since c joined, 0 if none.
func (a *AppStreams) firstSeen(c *appClient) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return c.first
}

// ServeMessages upgrades r to the message stream: every message received from now on, preceded,
// when since is not nil, by the kept messages whose seq is above *since (and a Missed frame
// before each run of messages after *since that are no longer kept); and the delivered, failed
// and incomplete frames of the events from now on.
func (a *AppStreams) ServeMessages(w http.ResponseWriter, r *http.Request, since *uint64) {
	conn, cw, ctx, cancel, ok := a.accept(w, r)
	if !ok {
		return
	}
	defer cancel()
	defer conn.CloseNow()
	c := &appClient{wake: make(chan struct{}, 1), events: make(chan []byte, EventQueue), slow: make(chan struct{})}
	cursor := a.join(c, since)
	defer a.leave(c)
	go discard(ctx, conn, cancel)
	ping := time.NewTicker(a.srv.cfg.PingInterval)
	defer ping.Stop()
	// settled: the cursor is a message the client read, or was checked against the first message
	// received after it joined. Until then a cursor at or beyond that message names no message
	// the client saw (a since from elsewhere, or none when the stream knew no seq yet): it starts
	// right before that message.
	settled := false
	for {
		if !settled {
			if first := a.firstSeen(c); first > 0 {
				settled = true
				if cursor >= first {
					cursor = first - 1
				}
			}
		}
		more := false
		if cursor != math.MaxUint64 {
			msgs, _, err := a.inbox.Inbox(cursor, inboxBatch)
			if err != nil {
				a.log.Warn("message stream: inbox unavailable", "err", err)
				conn.Close(websocket.StatusInternalError, "inbox unavailable")
				return
			}
			if err := a.write(ctx, conn, cw, cursor, msgs, drain(c.events)); err != nil {
				return
			}
			if len(msgs) > 0 {
				cursor, settled = msgs[len(msgs)-1].Seq, true
			}
			more = len(msgs) == inboxBatch
		} else if err := a.write(ctx, conn, cw, cursor, nil, drain(c.events)); err != nil {
			return
		}
		if more {
			select {
			case <-ctx.Done():
			case <-c.slow:
			default:
				continue // read on at once
			}
		}
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		case <-c.slow:
			a.log.WarnContext(ctx, "message stream client dropped: too slow", aboutConnection)
			conn.Close(websocket.StatusPolicyViolation, "client too slow")
			return
		case <-c.wake:
		case b := <-c.events:
			if err := a.write(ctx, conn, cw, cursor, nil, [][]byte{b}); err != nil {
				return
			}
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

// drain takes the frames waiting in ch without blocking.
func drain(ch chan []byte) [][]byte {
	var out [][]byte
	for {
		select {
		case b := <-ch:
			out = append(out, b)
		default:
			return out
		}
	}
}

// write sends the event frames, then msgs (read after cursor), each run of them that does not
// follow the previous seq preceded by the Missed frame naming the gap, collected into as few
// writes as the coalescer allows.
func (a *AppStreams) write(ctx context.Context, conn *websocket.Conn, cw *coalescer, cursor uint64, msgs []store.InboxMessage, events [][]byte) error {
	if len(msgs) == 0 && len(events) == 0 {
		return nil
	}
	frames := make([][]byte, 0, len(events)+2*len(msgs))
	frames = append(frames, events...)
	last := cursor
	for _, m := range msgs {
		if m.Seq > last+1 {
			b, _ := json.Marshal(Missed{Type: TypeMissed, After: last, Through: m.Seq - 1}) // numbers and a string: cannot fail
			frames = append(frames, b)
		}
		b, _ := json.Marshal(appMessage(m)) // strings, numbers and a bool: cannot fail
		frames = append(frames, b)
		last = m.Seq
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

// appMessage is the frame of a kept message.
func appMessage(m store.InboxMessage) AppMessage {
	f := AppMessage{Type: TypeAppMessage, ID: m.Seq, Body: string(m.Body), ReceivedAt: m.Received.UTC().Format(TimeFormat),
		Reply: m.Reply, RepliesLeft: len(m.ReplyBlocks)}
	if m.ID != ([16]byte{}) {
		f.MessageID = hexID(m.ID)
	}
	if m.Reply {
		f.InReplyTo = hexID(m.InReplyTo)
	}
	return f
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
		a.log.DebugContext(r.Context(), "websocket upgrade failed", "err", err, aboutConnection)
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
