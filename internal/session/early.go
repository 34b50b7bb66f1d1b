package session

import (
	"encoding/binary"
	"fmt"
)

// EarlyMarker is the first byte of an entry's SYN payload that carries early data
// (docs/PROTOCOL.md §9.8): the marker, the request's length (2 bytes, big-endian), the request,
// then the first bytes of the stream. A request never begins with it (§9.8's kinds are 1 and
// 2), so a payload without it is the request alone, as before early data.
const EarlyMarker = 0x00

// EarlyOverhead is what early data costs a SYN beyond its request and the data: the marker and
// the request's length.
const EarlyOverhead = 1 + 2

// WithEarlyData returns the payload of an entry's SYN that asks for request and carries early,
// the stream's first bytes, after it: the exit's application reads early before anything the
// entry writes later, once, however often the SYN is sent (TCP mode only). Dial takes the
// payload as its request. Without early data it is request itself. request must be 1 to 65,535
// bytes not beginning with EarlyMarker, else ErrMalformed; whether the payload fits a SYN is
// Dial's to say (EarlyRoom).
func WithEarlyData(request, early []byte) ([]byte, error) {
	switch {
	case len(request) == 0 || len(request) > 1<<16-1:
		return nil, fmt.Errorf("%w: a request of %d bytes cannot carry early data", ErrMalformed, len(request))
	case request[0] == EarlyMarker:
		return nil, fmt.Errorf("%w: a request beginning with the early-data marker", ErrMalformed)
	case len(early) == 0:
		return append([]byte(nil), request...), nil
	}
	p := make([]byte, 0, EarlyOverhead+len(request)+len(early))
	p = append(p, EarlyMarker)
	p = binary.BigEndian.AppendUint16(p, uint16(len(request)))
	p = append(p, request...)
	return append(p, early...), nil
}

// EarlyRoom is how many bytes of early data fit a SYN with a request of request bytes over a
// link of maxFrame bytes (0 when none do).
func EarlyRoom(maxFrame, request int) int {
	return max(maxFrame-HeaderSize-EarlyOverhead-request, 0)
}

// splitSYN splits the payload of an entry's SYN into its request and its early data (nil when
// it carries none). A payload beginning with EarlyMarker must be well formed: a request of at
// least one byte that does not begin with the marker itself, then at least one byte of early
// data (without data the payload is the request alone), in TCP mode; else ErrMalformed.
func splitSYN(p []byte, udp bool) (request, early []byte, err error) {
	if len(p) == 0 || p[0] != EarlyMarker {
		return p, nil, nil
	}
	if udp {
		return nil, nil, fmt.Errorf("%w: early data on a UDP-mode SYN", ErrMalformed)
	}
	if len(p) < EarlyOverhead {
		return nil, nil, fmt.Errorf("%w: short early-data request", ErrMalformed)
	}
	n := int(binary.BigEndian.Uint16(p[1:3]))
	switch rest := p[EarlyOverhead:]; {
	case n == 0 || n >= len(rest):
		return nil, nil, fmt.Errorf("%w: early-data request of %d bytes in %d", ErrMalformed, n, len(rest))
	case rest[0] == EarlyMarker:
		return nil, nil, fmt.Errorf("%w: early-data request within early-data request", ErrMalformed)
	default:
		return rest[:n], rest[n:], nil
	}
}
