// Package gateway owns the two ends of sessions as applications see them (issue 28,
// docs/SESSIONS.md): at the entry, the local listeners an operator opens (POST
// /api/v2/sessions) and the SOCKS5 server's connections, each accepted connection or datagram
// flow carried as one session.Conn to the destination; at the exit, the loop that accepts
// incoming sessions, reads what each asks for (the request, PROTOCOL.md §9.7), dials it through
// the exit's policy and splices the bytes both ways.
//
// Stack puts a node's sessions together: the carrier over the router, the mux, the Entry, the
// exit's loop and the SOCKS5 entry.
//
// Of relayd's packages it imports session (the transport), carrier (the frames over the
// mixnet), exit (the policy) and socks5 (the SOCKS5 entry, and the errors its dialer answers a
// CONNECT with). It reaches
// the network only through the session.Mux and the Links node gives it. It never logs a
// target, a request or the bytes it carries.
package gateway

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/session"
)

// Protocol is a session's kind: a TCP connection or a UDP flow.
type Protocol string

// The protocols.
const (
	TCP Protocol = "tcp"
	UDP Protocol = "udp"
)

// Open is what an operator asks to open (POST /api/v2/sessions).
type Open struct {
	// Destination is the exit: the node the sessions go to.
	Destination peer.ID
	// Protocol is TCP or UDP.
	Protocol Protocol
	// Target is the host:port the exit resolves and connects to; Service, a service the
	// destination offers by name. Exactly one is set.
	Target, Service string
	// Listen is the local host:port to listen on; empty: DefaultListen (a free port on the
	// loopback interface). A host off the loopback interface is refused unless the node allows
	// it (anyone who reaches the port uses the session).
	Listen string
}

// DefaultListen is where a session listens when Open.Listen is empty.
const DefaultListen = "127.0.0.1:0"

// Info is one open session as GET /api/v2/sessions shows it.
type Info struct {
	// ID names the session for DELETE: 16 lowercase hex digits the node draws.
	ID          string
	Destination peer.ID
	Protocol    Protocol
	// Target or Service, as opened.
	Target, Service string
	// Listen is the local address it listens on, host:port.
	Listen string
	Opened time.Time
	// Active is how many connections (TCP) or flows (UDP) it carries now; Total, since it opened.
	Active, Total int
	// BytesOut is what the local side sent towards the target, BytesIn what came back.
	BytesOut, BytesIn uint64
	// RateOut and RateIn are those in bytes per second over the last RateWindow.
	RateOut, RateIn float64
	// Retransmits counts the frames its connections sent again.
	Retransmits uint64
	// LastError says why one of its connections last failed, or why the network last failed
	// one of their sends, at LastErrorAt: one of the Failure words; empty when none did.
	LastError   Failure
	LastErrorAt time.Time
}

// Failure is why a session's connection failed or stalls, in a fixed vocabulary.
type Failure string

// The failures. The first three are the network's (a send it failed: the carrier's
// LinkStats.LastFailure, as router.Reason names them), the rest the session's end.
const (
	// FailNoPath: no path to the exit, or none back (router.ErrNoPath).
	FailNoPath Failure = "no_path"
	// FailNoBalance: a channel on the path has too little for its ticket (it ran dry).
	FailNoBalance Failure = "no_balance"
	// FailSendFailed: the network failed a send for another reason.
	FailSendFailed Failure = "send_failed"
	// FailTimeout: the exit did not answer in time (opening, or its keep-alives).
	FailTimeout Failure = "timeout"
	// FailReset: the session was reset.
	FailReset Failure = "reset"
	// FailRefused, FailNotAllowed, FailUnreachable, FailLimit: the exit refused the session,
	// its policy does not allow the target, the target is unreachable, the exit is at a limit.
	FailRefused     Failure = "refused"
	FailNotAllowed  Failure = "not_allowed"
	FailUnreachable Failure = "unreachable"
	FailLimit       Failure = "limit"
)

// failureOf names what a session's dial, read or write failed with; empty for an end that is
// not a failure (EOF, the session closed here).
func failureOf(err error) Failure {
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, session.ErrClosed), errors.Is(err, context.Canceled):
		return ""
	case errors.Is(err, session.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return FailTimeout
	case errors.Is(err, session.ErrNotAllowed):
		return FailNotAllowed
	case errors.Is(err, session.ErrRefused):
		return FailRefused
	case errors.Is(err, session.ErrUnreachable):
		return FailUnreachable
	case errors.Is(err, session.ErrLimit):
		return FailLimit
	case errors.Is(err, session.ErrReset):
		return FailReset
	}
	return FailSendFailed
}

// linkFailure names the carrier's reason for a failed send (carrier.LinkStats.LastFailure).
func linkFailure(reason string) Failure {
	switch f := Failure(reason); f {
	case "":
		return ""
	case FailNoPath, FailNoBalance:
		return f
	}
	return FailSendFailed
}

// RateWindow is the span Info's rates are measured over.
const RateWindow = 10 * time.Second

// The gateway's errors; the REST layer maps them to status codes.
var (
	// ErrUnknownSession: no open session has that id.
	ErrUnknownSession = errors.New("gateway: no such session")
	// ErrBadOpen: the request to open is malformed (no target nor service, both, a bad
	// host:port, an unknown protocol).
	ErrBadOpen = errors.New("gateway: bad session request")
	// ErrListen: the local address cannot be listened on (in use, not local, not allowed).
	ErrListen = errors.New("gateway: cannot listen")
	// ErrLimit: the node holds as many sessions as it may.
	ErrLimit = errors.New("gateway: too many sessions")
	// ErrSelf: the destination is this node.
	ErrSelf = errors.New("gateway: the destination is this node")
)
