package ws

import (
	"sync"
	"time"
)

// ReplaySize is how many recent frames a new client receives first: the last
// ReplaySize-1 frames the hub kept, then its own connect line (and, among
// them in the order they were published, up to ConnReplaySize connection
// lines).
const ReplaySize = 100

// ConnReplaySize is how many connection lines (LogConnection) the hub keeps
// apart from the node's frames for clients that connect later.
const ConnReplaySize = 8

// Hub fans frames out to every connected client and keeps the last
// ReplaySize frames for clients that connect later. Publishing never blocks:
// a client whose queue is full is disconnected instead. Command replies do
// not go through the hub: each reaches only the client that sent the
// command. A client's connect line goes live to the clients connected then
// and ends its own replay, but is not kept: a later client's replay shows the
// node's frames, not which other clients connected before it. The other
// lines about the console's own connections (a refused token, a client
// dropped: LogConnection) go live too but are kept in a small ring of their
// own, so that clients coming and going never push the node's events out
// of the replay.
type Hub struct {
	now func() time.Time

	mu      sync.Mutex
	frames  ring
	conns   ring
	seq     uint64 // publication order across both rings
	clients map[*client]struct{}
}

// ring keeps the last len(kept) frames, each with its publication number.
type ring struct {
	kept  []kept
	next  int // index of the next frame
	count int // frames kept
}

type kept struct {
	seq uint64
	b   []byte
}

func newRing(n int) ring { return ring{kept: make([]kept, n)} }

func (r *ring) add(k kept) {
	r.kept[r.next] = k
	r.next = (r.next + 1) % len(r.kept)
	if r.count < len(r.kept) {
		r.count++
	}
}

// last returns the last n frames kept (fewer when it holds fewer), oldest first.
func (r *ring) last(n int) []kept {
	n = min(n, r.count)
	out := make([]kept, 0, n)
	start := (r.next - n + len(r.kept)) % len(r.kept)
	for i := range n {
		out = append(out, r.kept[(start+i)%len(r.kept)])
	}
	return out
}

// NewHub returns an empty hub that stamps frames with now.
func NewHub(now func() time.Time) *Hub {
	if now == nil {
		now = time.Now
	}
	return &Hub{now: now, frames: newRing(ReplaySize), conns: newRing(ConnReplaySize), clients: map[*client]struct{}{}}
}

// Now is the hub's clock.
func (h *Hub) Now() time.Time { return h.now() }

// Log publishes a log frame.
func (h *Hub) Log(msg string) { h.Publish(TypeLog, msg) }

// Publish sends a frame of the given type to every client and keeps it for
// replay. A log frame's text goes out through Escape; a message frame's
// text is sent exactly.
func (h *Hub) Publish(typ, msg string) {
	b := NewFrame(typ, msg, h.now()).encode()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.publishLocked(b)
}

// PublishSeq publishes frames back to back: every client receives them
// consecutively, with no other frame between them.
func (h *Hub) PublishSeq(frames ...Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range frames {
		h.publishLocked(f.encode())
	}
}

func (h *Hub) publishLocked(b []byte) {
	h.seq++
	h.frames.add(kept{h.seq, b})
	h.broadcastLocked(b)
}

// LogConnection publishes a log frame about the console's own connections
// (a client refused or dropped): live to every client, and kept for replay
// apart from the node's frames, only the last ConnReplaySize of them.
func (h *Hub) LogConnection(msg string) {
	b := NewFrame(TypeLog, msg, h.now()).encode()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.conns.add(kept{h.seq, b})
	h.broadcastLocked(b)
}

// broadcastLocked sends b to every client without keeping it for replay.
func (h *Hub) broadcastLocked(b []byte) {
	for c := range h.clients {
		if !c.offer(b) {
			delete(h.clients, c)
		}
	}
}

// join sends the connect line to the clients already connected, without
// keeping it, then registers c and queues for it alone the replay: the last
// ReplaySize-1 kept frames and the kept connection lines in the order they
// were published, then its own connect line, each marked as replayed.
func (h *Hub) join(c *client, connectLine string) {
	b := NewFrame(TypeLog, connectLine, h.now()).encode()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.broadcastLocked(b)
	frames, conns := h.frames.last(ReplaySize-1), h.conns.last(ConnReplaySize)
	for len(frames)+len(conns) > 0 {
		var k kept
		if len(conns) == 0 || (len(frames) > 0 && frames[0].seq < conns[0].seq) {
			k, frames = frames[0], frames[1:]
		} else {
			k, conns = conns[0], conns[1:]
		}
		if !c.offer(markReplay(k.b)) {
			return
		}
	}
	if !c.offer(markReplay(b)) {
		return
	}
	h.clients[c] = struct{}{}
}

func (h *Hub) leave(c *client) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// Clients returns how many clients are connected.
func (h *Hub) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// replyQueue is how many command reply frames wait for a client's writer;
// when it is full the client's next command waits, not the hub.
const replyQueue = 64

// client is one connection's outbound queues: queue holds the hub's frames
// and never blocks the hub (when it is full the client is marked slow and
// its writer closes the connection); replies holds the client's own command
// echoes and output, which only its reader fills and which reach nobody else.
type client struct {
	queue   chan []byte
	replies chan []byte
	slow    chan struct{}
	once    sync.Once
}

func newClient(queueSize int) *client {
	return &client{queue: make(chan []byte, queueSize), replies: make(chan []byte, replyQueue), slow: make(chan struct{})}
}

func (c *client) offer(b []byte) bool {
	select {
	case c.queue <- b:
		return true
	default:
		c.once.Do(func() { close(c.slow) })
		return false
	}
}
