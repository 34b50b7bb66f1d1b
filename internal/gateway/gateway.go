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
	"errors"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
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
