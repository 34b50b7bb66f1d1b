package socks5

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// The reply codes of RFC 1928 §6 that a CONNECT can end with.
const (
	ReplySucceeded           uint8 = 0x00 // succeeded
	ReplyGeneralFailure      uint8 = 0x01 // general SOCKS server failure
	ReplyNotAllowed          uint8 = 0x02 // connection not allowed by ruleset
	ReplyNetworkUnreachable  uint8 = 0x03 // network unreachable
	ReplyHostUnreachable     uint8 = 0x04 // host unreachable
	ReplyConnectionRefused   uint8 = 0x05 // connection refused
	ReplyTTLExpired          uint8 = 0x06 // TTL expired
	ReplyCommandNotSupported uint8 = 0x07 // command not supported
	ReplyAddressNotSupported uint8 = 0x08 // address type not supported
)

// The errors a Dialer returns (wrapped with %w as it likes) to choose the reply a CONNECT gets;
// ReplyCode gives the mapping.
var (
	// ErrNotAllowed says the exit's policy does not allow the target: reply 0x02, "connection
	// not allowed by ruleset".
	ErrNotAllowed = errors.New("socks5: connection not allowed")
	// ErrRefused says the target refused the connection: reply 0x05.
	ErrRefused = errors.New("socks5: connection refused")
	// ErrHostUnreachable says the target could not be reached (its name did not resolve at the
	// exit, or no route to it): reply 0x04.
	ErrHostUnreachable = errors.New("socks5: host unreachable")
	// ErrNetworkUnreachable says the exit has no route to the target's network: reply 0x03.
	ErrNetworkUnreachable = errors.New("socks5: network unreachable")
	// ErrTimeout says the connection was not made in time (the dial timed out, or the session
	// to the exit expired): reply 0x06, "TTL expired".
	ErrTimeout = errors.New("socks5: timed out")
)

// The errors of the server itself.
var (
	// ErrConfig reports a Config that New refuses; the message names the field.
	ErrConfig = errors.New("socks5: bad config")
	// ErrNotLoopback reports a listen address off the loopback interface while
	// Config.AllowNonLoopback is false: the listener has no authentication.
	ErrNotLoopback = errors.New("socks5: listen address is not loopback")
	// ErrClosed is what Listen and Run return once Close was called.
	ErrClosed = errors.New("socks5: server closed")
)

// Replier is an error that names its SOCKS5 reply code itself; ReplyCode prefers it to every
// other rule, so a dialer can give any code (0x01–0x08) without using the sentinels.
type Replier interface {
	error
	SOCKSReply() uint8
}

// ReplyCode maps the error of a Dialer to the reply code a CONNECT gets, first rule that
// matches (through wrapping, errors.Is and errors.As):
//
//	nil                                            0x00 succeeded
//	a Replier in the chain                         its SOCKSReply() (0x01 if it says 0x00)
//	ErrNotAllowed                                  0x02 connection not allowed by ruleset
//	ErrRefused, ECONNREFUSED                       0x05 connection refused
//	ErrHostUnreachable, EHOSTUNREACH, *net.DNSError 0x04 host unreachable
//	ErrNetworkUnreachable, ENETUNREACH             0x03 network unreachable
//	ErrTimeout, context.DeadlineExceeded,
//	os.ErrDeadlineExceeded, a net.Error timeout    0x06 TTL expired
//	anything else (context.Canceled too)           0x01 general SOCKS server failure
func ReplyCode(err error) uint8 {
	if err == nil {
		return ReplySucceeded
	}
	if r, ok := errors.AsType[Replier](err); ok {
		if c := r.SOCKSReply(); c != ReplySucceeded {
			return c
		}
		return ReplyGeneralFailure
	}
	switch {
	case errors.Is(err, ErrNotAllowed):
		return ReplyNotAllowed
	case errors.Is(err, ErrRefused), errors.Is(err, syscall.ECONNREFUSED):
		return ReplyConnectionRefused
	case errors.Is(err, ErrHostUnreachable), errors.Is(err, syscall.EHOSTUNREACH):
		return ReplyHostUnreachable
	case errors.Is(err, ErrNetworkUnreachable), errors.Is(err, syscall.ENETUNREACH):
		return ReplyNetworkUnreachable
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ReplyTTLExpired
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return ReplyHostUnreachable
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return ReplyTTLExpired
	}
	return ReplyGeneralFailure
}
