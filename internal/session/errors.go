package session

import (
	"errors"
	"fmt"
	"net"
)

// Errors returned by this package. Match them with errors.Is.
var (
	// ErrMalformed is returned by Decode for a text that is not exactly one well-formed
	// session frame, by Encode for a frame that breaks the same rules, and (wrapped) by
	// Mux.Receive for such a text.
	ErrMalformed = errors.New("session: malformed frame")

	// ErrUnknownSession is returned by Mux.Receive for a frame of no session it holds: not a
	// SYN, or a SYN at a mux that accepts no sessions. The frame changes nothing.
	ErrUnknownSession = errors.New("session: unknown session")

	// ErrClosed is returned by a Mux that is not running (Run not called yet or returned),
	// and by Read, Write and Close of a Conn closed locally or ended by its mux's shutdown.
	// It wraps net.ErrClosed.
	ErrClosed = fmt.Errorf("session: closed: %w", net.ErrClosed)

	// ErrTooLarge is returned by Dial for a request that does not fit one frame, by Write in
	// UDP mode for a datagram that does not fit one frame, and when a TCP-mode direction would
	// pass MaxSeq segments.
	ErrTooLarge = errors.New("session: too large for a frame")

	// ErrLink is returned by Dial for a link whose MaxFrame is below MinFrame, and by
	// Mux.Receive for a SYN whose AcceptLink is such a link.
	ErrLink = errors.New("session: link frames too small")

	// ErrConfig is returned by NewMux for a configuration it cannot use.
	ErrConfig = errors.New("session: invalid config")

	// ErrReset is a session reset by its peer without a more specific reason (ReasonReset or
	// a reason this package does not name), or reset locally because the peer broke the
	// protocol.
	ErrReset = errors.New("session: reset by peer")

	// ErrRefused is a session the exit refused (ReasonRefused): it declined it, or the
	// destination refused the connection.
	ErrRefused = errors.New("session: refused")

	// ErrNotAllowed is a session the exit's policy does not allow (ReasonNotAllowed).
	ErrNotAllowed = errors.New("session: destination not allowed")

	// ErrUnreachable is a session whose destination the exit could not reach
	// (ReasonUnreachable).
	ErrUnreachable = errors.New("session: destination unreachable")

	// ErrLimit is a session the exit turned away at one of its limits (ReasonLimit). Mux.Receive
	// returns it for a SYN it so answered, and Dial for a session beyond the mux's own
	// MaxSessions.
	ErrLimit = errors.New("session: exit at its limit")

	// ErrTimeout is a session given up on: its retransmissions, window probes or keep-alives
	// went unanswered MaxRetries or KeepAliveCount times, locally or at the peer
	// (ReasonTimeout).
	ErrTimeout = errors.New("session: peer timed out")
)
