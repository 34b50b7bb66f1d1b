package session

import (
	"crypto/rand"
	"fmt"
	"io"
	"time"
)

// Config configures a Mux and the sessions it holds. Every field is optional: the zero value
// takes the default named in its comment.
type Config struct {
	// AcceptLink returns the link back to the peer of an incoming session id (at the exit, the
	// reply blocks the entry sends). Nil: the mux accepts no sessions (an entry only).
	AcceptLink func(id ID) Link

	// Rand is where Dial draws session IDs from. Default crypto/rand.Reader.
	Rand io.Reader

	// MaxSessions is the most sessions the mux holds at once, dialled, accepted and lingering
	// after their close; a SYN beyond it is answered with an RST (ReasonLimit). Default 1024.
	MaxSessions int
	// Backlog is the most incoming sessions waiting for Accept; a SYN beyond it is answered
	// with an RST (ReasonLimit). Default 64.
	Backlog int

	// Window is the receive window in segments: the most segments a TCP-mode session holds
	// that its application has not read, out of order or in order. It bounds a session's
	// receive memory to Window·MaxFrame bytes. 1 … 65,535, default 128.
	Window int
	// SendBuffer is the most bytes a TCP-mode session holds that its peer has not acknowledged
	// (sent or not): Write blocks beyond it. Default 128 KiB.
	SendBuffer int
	// DatagramQueue is the most datagrams a UDP-mode session queues each way (unsent, unread);
	// a new one beyond it drops the oldest. Default 64.
	DatagramQueue int

	// InitialRTO, MinRTO and MaxRTO bound the retransmission timeout (RFC 6298, srtt +
	// 4·rttvar, doubled on each expiry): before the first round trip is measured, and its
	// bounds after (InitialRTO is kept within them). Defaults 3 s, 1 s and 60 s: a mixnet
	// round trip at the defaults is about 0.5–1 s.
	InitialRTO, MinRTO, MaxRTO time.Duration
	// MaxRetries is how many timeouts in a row (retransmissions of the same oldest segment, or
	// window probes unanswered) end a session with ErrTimeout. Default 8 (about 4.5 minutes
	// from a 3 s timeout doubling to 60 s).
	MaxRetries int
	// AckDelay is how long a receiver may hold back the acknowledgement of a lone in-order
	// segment, to piggyback it or acknowledge two at once; below MinRTO. Default 100 ms.
	AckDelay time.Duration
	// AckEvery is how many segments a receiver takes, in order or not, before it acknowledges
	// them (sooner: AckDelay, a duplicate, a FIN, a frame it sends anyway). Every
	// acknowledgement is a packet, and one back costs a reply block too. Default 4; 1
	// acknowledges every segment.
	AckEvery int

	// KeepAliveIdle is how long a session with nothing in flight may hear nothing from its peer
	// before it sends a keep-alive; KeepAliveInterval is the wait between keep-alives, and
	// after KeepAliveCount unanswered ones the session ends with ErrTimeout. Defaults 30 s,
	// 10 s and 3. A negative KeepAliveIdle turns keep-alives off.
	KeepAliveIdle, KeepAliveInterval time.Duration
	KeepAliveCount                   int

	// Linger is how long a TCP-mode session stays in the mux after both directions ended (or
	// after a local Close once its FIN was acknowledged, when the peer's FIN has not come: it
	// is then reset), to acknowledge a FIN sent again. Default 15 s.
	Linger time.Duration
}

// withDefaults returns c with every zero field set to its default, or ErrConfig.
func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	def(&c.MaxSessions, 1024)
	def(&c.Backlog, 64)
	def(&c.Window, 128)
	def(&c.SendBuffer, 128<<10)
	def(&c.DatagramQueue, 64)
	defD(&c.InitialRTO, 3*time.Second)
	defD(&c.MinRTO, time.Second)
	defD(&c.MaxRTO, 60*time.Second)
	def(&c.MaxRetries, 8)
	defD(&c.AckDelay, 100*time.Millisecond)
	def(&c.AckEvery, 4)
	defD(&c.KeepAliveIdle, 30*time.Second)
	defD(&c.KeepAliveInterval, 10*time.Second)
	def(&c.KeepAliveCount, 3)
	defD(&c.Linger, 15*time.Second)
	switch {
	case c.MaxSessions < 0, c.Backlog < 0, c.SendBuffer < 0, c.DatagramQueue < 0, c.MaxRetries < 0,
		c.KeepAliveCount < 0, c.AckEvery < 0:
		return c, fmt.Errorf("%w: a negative limit", ErrConfig)
	case c.Window < 1 || c.Window > 1<<16-1:
		return c, fmt.Errorf("%w: window %d segments", ErrConfig, c.Window)
	case c.MinRTO < 0 || c.MaxRTO < c.MinRTO:
		return c, fmt.Errorf("%w: retransmission timeouts from %v to %v", ErrConfig, c.MinRTO, c.MaxRTO)
	case c.AckDelay < 0 || c.KeepAliveInterval < 0 || c.Linger < 0:
		return c, fmt.Errorf("%w: a negative duration", ErrConfig)
	case c.AckDelay >= c.MinRTO:
		return c, fmt.Errorf("%w: ack delay %v not below the minimum timeout %v (every lone segment would be sent twice)",
			ErrConfig, c.AckDelay, c.MinRTO)
	}
	c.InitialRTO = min(max(c.InitialRTO, c.MinRTO), c.MaxRTO)
	return c, nil
}
