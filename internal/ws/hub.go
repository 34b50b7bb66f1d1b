package ws

import (
	"sync"
	"time"
)

// ReplaySize is how many recent frames a new client receives first: the last
// ReplaySize-1 frames the hub kept, then its own connect line.
const ReplaySize = 100

// Hub fans frames out to every connected client and keeps the last
// ReplaySize frames for clients that connect later. Publishing never blocks:
// a client whose queue is full is disconnected instead. Command replies do
// not go through the hub: each reaches only the client that sent the
// command. A client's connect line goes live to the clients connected then
// and ends its own replay, but is not kept: a later client's replay shows the
// node's frames, not which other clients connected before it.
type Hub struct {
	now func() time.Time

	mu      sync.Mutex
	ring    [ReplaySize][]byte
	next    int // ring index of the next frame
	count   int // frames in the ring
	clients map[*client]struct{}
}

// NewHub returns an empty hub that stamps frames with now.
func NewHub(now func() time.Time) *Hub {
	if now == nil {
		now = time.Now
	}
	return &Hub{now: now, clients: map[*client]struct{}{}}
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
	h.ring[h.next] = b
	h.next = (h.next + 1) % ReplaySize
	if h.count < ReplaySize {
		h.count++
	}
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
// ReplaySize-1 kept frames and its own connect line, each marked as replayed.
func (h *Hub) join(c *client, connectLine string) {
	b := NewFrame(TypeLog, connectLine, h.now()).encode()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.broadcastLocked(b)
	n := min(h.count, ReplaySize-1)
	start := (h.next - n + ReplaySize) % ReplaySize
	for i := range n {
		if !c.offer(markReplay(h.ring[(start+i)%ReplaySize])) {
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
