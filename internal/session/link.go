package session

import (
	"context"
)

// Link carries one session's frames to its peer: in the node, forward packets from the entry to
// the exit, reply blocks from the exit back. It is a datagram link: a frame arrives whole or
// not at all, maybe late, out of order or twice; the session makes up for all of it.
type Link interface {
	// Send sends one frame of at most MaxFrame bytes. The link may keep frame; the session
	// does not touch it again. A frame Send fails on counts as lost; Send may block (ctx
	// bounds it) but should not wait for the frame to arrive.
	Send(ctx context.Context, frame []byte) error
	// MaxFrame is the largest frame the link carries: 500 bytes forward and 472 back in the
	// node (packet.MaxReplySize). The session never sends a larger one. It must not change
	// during a session and be at least MinFrame.
	MaxFrame() int
}

// Ender is a Link that wants to know when its session ended: the mux calls Ended once, when
// the session leaves it (after its linger), so that the link can let go of what it holds for
// the session. reset is the RST the session sent, 0 if none: the mux then keeps the link a
// while to answer the session's late frames with that RST again (Receive).
type Ender interface {
	Ended(reset Reason)
}

// Backlogger is a Link that wants to know how many frames its session has still to send: the
// session tells it before it hands it each turn's frames. In the node the exit's link says it in
// its answers, so that the entry sends reply blocks for what is still to come, not for a rate
// that has ended (docs/PROTOCOL.md §9.7).
type Backlogger interface {
	// Backlog says how many frames the session has to send after the ones it hands the link
	// next: its written data not yet cut into segments (in frames), its FIN, its segments taken
	// for lost and not sent again, and its datagrams queued (UDP).
	Backlog(frames int)
}
