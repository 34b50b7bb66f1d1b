package router

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/relay"
)

// Message is a message delivered to this node.
type Message struct {
	// Text is the message text as the sender wrote it (untrusted: escape it before showing it).
	Text string
	// SentAt is the sender's clock when it sent the message (millisecond precision); ReceivedAt
	// this node's when it peeled the packet.
	SentAt, ReceivedAt time.Time
	// Relayed: the message came over relayers; a direct message did not.
	Relayed bool
}

// Latency is how long the message took, by the two clocks.
func (m Message) Latency() time.Duration { return m.ReceivedAt.Sub(m.SentAt) }

// InboxConfig configures an Inbox.
type InboxConfig struct {
	// Own, when set, claims this node's own packets back from a loop (cover traffic): they are
	// counted there and reach no subscriber.
	Own func(relay.Received) bool
	// Frames, when set, takes the frames and answers (relay.Received.Framed or Reply: the
	// courier's, docs/PROTOCOL.md §8); they reach no subscriber. Without it they are dropped.
	Frames func(relay.Received)
	// Relayed, when set, is called for every packet that came over relayers and is not this
	// node's own loop: a message, a frame or an answer (the stream re-emits one for each,
	// docs/TRAFFIC.md).
	Relayed func()
	// Registerer, when set, receives relayd_message_latency_seconds.
	Registerer prometheus.Registerer
}

// Inbox hands the messages the relay delivers to this node to its subscribers: each message to
// every subscriber, in delivery order, one message at a time.
type Inbox struct {
	own     func(relay.Received) bool
	frames  func(relay.Received)
	relayed func()
	latency prometheus.Histogram

	mu   sync.Mutex
	subs []func(Message)
}

// NewInbox returns an Inbox without subscribers.
func NewInbox(cfg InboxConfig) (*Inbox, error) {
	in := &Inbox{own: cfg.Own, frames: cfg.Frames, relayed: cfg.Relayed, latency: prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "relayd", Name: "message_latency_seconds",
		Help:    "Time from the sender's timestamp to delivery at this node, for messages it received.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})}
	if reg := cfg.Registerer; reg != nil {
		if err := reg.Register(in.latency); err != nil {
			return nil, fmt.Errorf("router: register metrics: %w", err)
		}
	}
	return in, nil
}

// Subscribe makes fn receive every message delivered from now on. fn is called from the relay's
// workers, one message at a time, and must not block: a subscriber that needs time queues.
func (in *Inbox) Subscribe(fn func(Message)) {
	in.mu.Lock()
	in.subs = append(in.subs, fn)
	in.mu.Unlock()
}

// Deliver takes a message the relay delivered (relay.Config.Deliver).
func (in *Inbox) Deliver(r relay.Received) {
	if in.own != nil && in.own(r) {
		return
	}
	if r.Relayed && in.relayed != nil {
		in.relayed()
	}
	if r.Framed || r.Reply {
		if in.frames != nil {
			in.frames(r)
		}
		return
	}
	m := Message{Text: r.Text, SentAt: r.SentAt, ReceivedAt: r.ReceivedAt, Relayed: r.Relayed}
	in.latency.Observe(m.Latency().Seconds())
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, fn := range in.subs {
		fn(m)
	}
}
