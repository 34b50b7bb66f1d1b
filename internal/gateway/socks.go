package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/socks5"
)

// SOCKSDialer is the SOCKS5 entry's dialer (socks5.Dialer): each CONNECT is a TCP session to
// the exit Exit names, which resolves the host itself. Its errors choose the SOCKS5 reply: the
// exit's refusals (not allowed, refused, unreachable), a timeout, or a general failure.
type SOCKSDialer struct {
	Dial Dialer
	// Exit names the exit now (an alias may change).
	Exit func() (peer.ID, error)
}

var _ socks5.Dialer = SOCKSDialer{}

// DialContext opens the session; network must be tcp.
func (d SOCKSDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
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
	conn, err := d.Dial(ctx, to, session.ModeTCP, request{target: address}.encode())
	if err != nil {
		return nil, socksError(err)
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
