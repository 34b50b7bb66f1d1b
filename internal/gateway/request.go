package gateway

import (
	"fmt"
	"net"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// A request is what an entry asks the exit to connect to: the payload of its SYN
// (docs/PROTOCOL.md §9.8). One byte says what follows: a host:port the exit resolves, or the
// name of a service the exit offers.
const (
	requestTarget  = 1
	requestService = 2
	// maxRequestText is the longest host:port or service name: a DNS name of 253 characters
	// and a port.
	maxRequestText = 253 + 6
)

// request is a decoded request: exactly one of target and service is set.
type request struct {
	target, service string
}

func (r request) encode() []byte {
	if r.service != "" {
		return append([]byte{requestService}, r.service...)
	}
	return append([]byte{requestTarget}, r.target...)
}

// decodeRequest decodes a request strictly: a known kind, UTF-8 text without control
// characters or spaces of at most maxRequestText bytes, a target with a host and a port from 1
// to 65535, a service name that names a service (serviceName).
func decodeRequest(b []byte) (request, error) {
	if len(b) < 2 || len(b) > 1+maxRequestText {
		return request{}, fmt.Errorf("%w: request of %d bytes", ErrBadOpen, len(b))
	}
	text := string(b[1:])
	switch b[0] {
	case requestTarget:
		if err := checkTarget(text); err != nil {
			return request{}, err
		}
		return request{target: text}, nil
	case requestService:
		if !serviceName(text) {
			return request{}, fmt.Errorf("%w: not a service name", ErrBadOpen)
		}
		return request{service: text}, nil
	}
	return request{}, fmt.Errorf("%w: request kind %d", ErrBadOpen, b[0])
}

// checkTarget checks a host:port as the exit will (decodeRequest), so that an entry refuses at
// once what the exit would refuse: at most maxRequestText bytes of UTF-8 without control
// characters or spaces, a host and a decimal port from 1 to 65535 without leading zeros.
func checkTarget(s string) error {
	if len(s) > maxRequestText {
		return fmt.Errorf("%w: target of %d bytes", ErrBadOpen, len(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: target not UTF-8", ErrBadOpen)
	}
	for _, r := range s {
		if r < 0x21 || unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%w: control character or space in the target", ErrBadOpen)
		}
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("%w: target is not host:port", ErrBadOpen)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 || strconv.FormatUint(p, 10) != port {
		return fmt.Errorf("%w: target port not 1 to 65535", ErrBadOpen)
	}
	return nil
}

// serviceName reports whether s can name a service (as --service names them): 1 to 63
// letters, digits, '-' and '_'.
func serviceName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
