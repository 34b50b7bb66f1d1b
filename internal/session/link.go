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
