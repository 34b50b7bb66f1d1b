package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/socks5"
)

// SOCKSDialer is the SOCKS5 entry's dialer (socks5.Dialer): each CONNECT is a TCP session to
// the exit Exit names, which resolves the host itself. Its errors choose the SOCKS5 reply: the
// exit's refusals (not allowed, refused, unreachable), a timeout, or a general failure. With
// Known it is a socks5.EarlyDialer: a CONNECT to a target that worked lately through the same
// exit is answered at once and its first bytes ride the SYN (session.WithEarlyData).
type SOCKSDialer struct {
	Dial Dialer
	// Exit names the exit now (an alias may change).
	Exit func() (peer.ID, error)
	// Known, if not nil, holds the targets that worked lately through each exit: DialContext
	// and DialEarly record what works and what fails there, and Early expects the ones it
	// knows to work. Nil: every CONNECT waits for the exit.
	Known *KnownTargets
}

var _ socks5.EarlyDialer = SOCKSDialer{}

// DialContext opens the session; network must be tcp.
func (d SOCKSDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return d.dial(ctx, network, address, nil)
}

// Early reports whether a CONNECT to address may be answered before the exit answers: the
// target worked through the exit Exit names now, lately (Known). room is the early data the
// SYN then carries: the forward frame less the header, the request and its layout.
func (d SOCKSDialer) Early(network, address string) (room int, ok bool) {
	if network != "tcp" || d.Known == nil || checkTarget(address) != nil {
		return 0, false
	}
	to, err := d.Exit()
	if err != nil || !d.Known.Known(to, address) {
		return 0, false
	}
	return session.EarlyRoom(packet.MaxMessageSize, len(request{target: address}.encode())), true
}

// DialEarly is DialContext with early, the client's first bytes, in the SYN: the exit's
// target reads them first. A failure makes the target unknown (Known.Failed), so the next
// CONNECT waits for the exit's reply code.
func (d SOCKSDialer) DialEarly(ctx context.Context, network, address string, early []byte) (net.Conn, error) {
	return d.dial(ctx, network, address, early)
}

func (d SOCKSDialer) dial(ctx context.Context, network, address string, early []byte) (net.Conn, error) {
	if network != "tcp" {
		return nil, fmt.Errorf("%w: network %s", socks5.ErrNotAllowed, network)
	}
	if err := checkTarget(address); err != nil {
		return nil, fmt.Errorf("%w: %w", socks5.ErrHostUnreachable, err)
	}
	to, err := d.Exit()
	if err != nil {
		return nil, fmt.Errorf("%w: the exit: %w", socks5.ErrNetworkUnreachable, err)
	}
	req, err := session.WithEarlyData(request{target: address}.encode(), early)
	if err != nil {
		return nil, err
	}
	conn, err := d.Dial(ctx, to, session.ModeTCP, req)
	if err != nil {
		if d.Known != nil {
			d.Known.Failed(to, address)
		}
		return nil, socksError(err)
	}
	if d.Known != nil {
		d.Known.Worked(to, address)
	}
	return conn, nil
}

// socksError wraps a session's error in the SOCKS5 error that says the same.
func socksError(err error) error {
	var s error
	switch {
	case errors.Is(err, session.ErrNotAllowed):
		s = socks5.ErrNotAllowed
	case errors.Is(err, session.ErrRefused):
		s = socks5.ErrRefused
	case errors.Is(err, session.ErrUnreachable):
		s = socks5.ErrHostUnreachable
	case errors.Is(err, session.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		s = socks5.ErrTimeout
	case errors.Is(err, session.ErrLimit):
		s = socks5.ErrNetworkUnreachable
	default:
		return err
	}
	return fmt.Errorf("%w: %w", s, err)
}
