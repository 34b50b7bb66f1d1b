package session

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// IDSize is the size of a session ID.
const IDSize = 16

// ID identifies a session between its entry and its exit: 16 random bytes the entry draws from
// crypto/rand (Config.Rand) when it dials.
type ID [IDSize]byte

// String is the ID in hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// KindSegment is the first byte of every session frame (docs/PROTOCOL.md §9): the session
// family's high nibble 2, kind 0. The other values 0x21–0x2f are reserved for the sessions'
// later kinds; Decode refuses them.
const KindSegment = 0x20

// Flags are a frame's flag bits (the low 6 bits of its flags byte).
type Flags uint8

// The flags (docs/PROTOCOL.md §9).
const (
	// FlagSYN opens a session: segment 0 of each direction. The entry's SYN carries the
	// session's request (what to connect to) as its payload, maybe followed by early data
	// (WithEarlyData), and no ACK; the exit's carries ACK and no payload.
	FlagSYN Flags = 1 << 0
	// FlagACK says the Ack, Window and SACK fields acknowledge the peer's segments. Every frame
	// but the entry's SYN carries it in TCP mode.
	FlagACK Flags = 1 << 1
	// FlagFIN ends the sender's direction after this segment (half-close); it may carry the
	// direction's last payload.
	FlagFIN Flags = 1 << 2
	// FlagRST ends the session at once, for a reason (Frame.Reason).
	FlagRST Flags = 1 << 3
	// FlagKeepAlive asks the peer to answer at once with an acknowledgement.
	FlagKeepAlive Flags = 1 << 4
	// FlagUDP marks every frame of a UDP-mode session: datagrams, no retransmission.
	FlagUDP Flags = 1 << 5

	flagsMask Flags = 1<<6 - 1
)

// String lists the flags set, as "SYN|ACK".
func (f Flags) String() string {
	names := []string{"SYN", "ACK", "FIN", "RST", "KEEPALIVE", "UDP"}
	s := ""
	for i, n := range names {
		if f&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if f&^flagsMask != 0 {
		s += fmt.Sprintf("|%#x", uint8(f&^flagsMask))
	}
	if s == "" {
		return "0"
	}
	return s
}

// Reason is why a session was reset: the one byte an RST frame carries after its header.
// Reason 0 is no reason and only appears on frames without RST; an RST with a value this
// package does not name is still a reset (ErrReset).
type Reason uint8

// The reset reasons (docs/PROTOCOL.md §9).
const (
	// ReasonReset: the session was aborted (closed with data still arriving, the mux shut
	// down, a protocol violation, a session the peer no longer knows).
	ReasonReset Reason = 1
	// ReasonRefused: the exit refused, or the destination refused the connection.
	ReasonRefused Reason = 2
	// ReasonNotAllowed: the exit's policy does not allow the destination.
	ReasonNotAllowed Reason = 3
	// ReasonUnreachable: the exit could not reach the destination (no route, no name).
	ReasonUnreachable Reason = 4
	// ReasonLimit: the exit is at a limit (sessions, backlog, rate).
	ReasonLimit Reason = 5
	// ReasonTimeout: the sender gave up on its peer (retransmissions or keep-alives
	// unanswered).
	ReasonTimeout Reason = 6
)

// Err is the sentinel error a reset for r surfaces as: ErrReset, ErrRefused, ErrNotAllowed,
// ErrUnreachable, ErrLimit or ErrTimeout.
func (r Reason) Err() error {
	switch r {
	case ReasonRefused:
		return ErrRefused
	case ReasonNotAllowed:
		return ErrNotAllowed
	case ReasonUnreachable:
		return ErrUnreachable
	case ReasonLimit:
		return ErrLimit
	case ReasonTimeout:
		return ErrTimeout
	}
	return ErrReset
}

// String names the reason.
func (r Reason) String() string {
	switch r {
	case 0:
		return "none"
	case ReasonReset:
		return "reset"
	case ReasonRefused:
		return "refused"
	case ReasonNotAllowed:
		return "not allowed"
	case ReasonUnreachable:
		return "unreachable"
	case ReasonLimit:
		return "limit"
	case ReasonTimeout:
		return "timeout"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Range is a selective acknowledgement: segments Start up to but not including End arrived.
type Range struct {
	Start, End uint32
}

// Sizes and limits of the format.
const (
	// HeaderSize is a frame's size without SACK ranges, reason and payload: kind 1, ID 16,
	// flags and SACK count 1, segment number 4, cumulative ack 4, window 2.
	HeaderSize = 1 + IDSize + 1 + 4 + 4 + 2

	// RangeSize is the size of one SACK range: start 4, end 4.
	RangeSize = 8

	// MaxSACK is the most SACK ranges a frame carries (2 bits of count).
	MaxSACK = 3

	// MaxSeq is the highest segment number a TCP-mode session uses: a direction carries at
	// most 2³²−1 segments (about 1.9 TB at 472 bytes each) and the session is reset before
	// numbers would wrap, so that numbers compare as plain integers.
	MaxSeq = 1<<32 - 2

	// MinFrame is the smallest link frame size a session works over: a header, all SACK
	// ranges and 64 bytes of payload.
	MinFrame = HeaderSize + MaxSACK*RangeSize + 64
)

// Frame is one session frame: the header, then the SACK ranges, then for an RST its reason,
// else its payload. Encode and Decode check the same rules (docs/PROTOCOL.md §9).
type Frame struct {
	ID    ID
	Flags Flags
	// Seq is the frame's segment number. A frame with SYN, FIN or payload (TCP mode) occupies
	// that number; any other frame carries the sender's next unused number and occupies none.
	Seq uint32
	// Ack is the next segment the sender expects: every segment below it arrived. 0 without
	// FlagACK.
	Ack uint32
	// Window is how many segments from Ack on the sender will accept (flow control).
	Window uint16
	// SACK are segments above Ack that arrived, in ascending order, disjoint and not
	// adjacent: each Start is above Ack (or the previous End), each End above its Start. At
	// most MaxSACK, only with FlagACK.
	SACK []Range
	// Reason is why an RST was sent: not 0 with FlagRST, 0 without.
	Reason Reason
	// Payload is the segment's data (TCP mode), the datagram (UDP mode) or the request and any
	// early data (the entry's SYN: WithEarlyData). Empty on RST and keep-alive frames. After
	// Decode it aliases the text.
	Payload []byte
}

// Size is the length of f's encoding.
func (f *Frame) Size() int {
	n := HeaderSize + len(f.SACK)*RangeSize + len(f.Payload)
	if f.Flags&FlagRST != 0 {
		n++
	}
	return n
}

// consumes reports whether f occupies its segment number in TCP mode.
func (f *Frame) consumes() bool {
	return f.Flags&FlagUDP == 0 && (f.Flags&(FlagSYN|FlagFIN) != 0 || len(f.Payload) > 0)
}

func (f *Frame) check() error {
	fl := f.Flags
	switch {
	case fl&^flagsMask != 0:
		return fmt.Errorf("%w: reserved flag bits %#x", ErrMalformed, uint8(fl&^flagsMask))
	case len(f.SACK) > MaxSACK:
		return fmt.Errorf("%w: %d SACK ranges", ErrMalformed, len(f.SACK))
	case fl&FlagACK == 0 && (f.Ack != 0 || len(f.SACK) > 0):
		return fmt.Errorf("%w: ack fields without ACK", ErrMalformed)
	case fl&FlagSYN != 0 && fl&(FlagFIN|FlagRST|FlagKeepAlive) != 0:
		return fmt.Errorf("%w: SYN with %v", ErrMalformed, fl)
	case fl&FlagSYN != 0 && f.Seq != 0:
		return fmt.Errorf("%w: SYN is not segment 0", ErrMalformed)
	case fl&FlagSYN != 0 && fl&FlagACK != 0 && len(f.Payload) > 0:
		return fmt.Errorf("%w: payload on SYN|ACK", ErrMalformed)
	case fl&FlagRST != 0 && fl&(FlagFIN|FlagKeepAlive) != 0:
		return fmt.Errorf("%w: RST with %v", ErrMalformed, fl)
	case fl&FlagRST != 0 && (f.Reason == 0 || len(f.SACK) > 0 || len(f.Payload) > 0):
		return fmt.Errorf("%w: RST needs a reason and carries nothing else", ErrMalformed)
	case fl&FlagRST == 0 && f.Reason != 0:
		return fmt.Errorf("%w: reason without RST", ErrMalformed)
	case fl&FlagKeepAlive != 0 && (fl&FlagFIN != 0 || len(f.Payload) > 0):
		return fmt.Errorf("%w: keep-alive with FIN or payload", ErrMalformed)
	case fl&FlagUDP != 0 && len(f.SACK) > 0:
		return fmt.Errorf("%w: SACK in UDP mode", ErrMalformed)
	case fl&FlagUDP != 0 && fl&FlagFIN != 0 && len(f.Payload) > 0:
		return fmt.Errorf("%w: payload on a UDP-mode FIN", ErrMalformed)
	case f.consumes() && f.Seq > MaxSeq:
		return fmt.Errorf("%w: segment number %d", ErrMalformed, f.Seq)
	}
	if fl&(FlagSYN|FlagACK) == FlagSYN {
		if _, _, err := splitSYN(f.Payload, fl&FlagUDP != 0); err != nil {
			return err
		}
	}
	low := f.Ack
	for _, r := range f.SACK {
		if r.Start <= low || r.End <= r.Start {
			return fmt.Errorf("%w: SACK range [%d, %d) after %d", ErrMalformed, r.Start, r.End, low)
		}
		low = r.End
	}
	return nil
}

// Encode checks f as Decode would and returns its text.
func (f *Frame) Encode() ([]byte, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return f.encode(), nil
}

// encode is Encode without the checks, for frames the session builds itself.
func (f *Frame) encode() []byte {
	b := make([]byte, f.Size())
	b[0] = KindSegment
	copy(b[1:17], f.ID[:])
	b[17] = byte(f.Flags) | byte(len(f.SACK))<<6
	binary.BigEndian.PutUint32(b[18:], f.Seq)
	binary.BigEndian.PutUint32(b[22:], f.Ack)
	binary.BigEndian.PutUint16(b[26:], f.Window)
	off := HeaderSize
	for _, r := range f.SACK {
		binary.BigEndian.PutUint32(b[off:], r.Start)
		binary.BigEndian.PutUint32(b[off+4:], r.End)
		off += RangeSize
	}
	if f.Flags&FlagRST != 0 {
		b[off] = byte(f.Reason)
		off++
	}
	copy(b[off:], f.Payload)
	return b
}

// Decode reads one frame strictly: a text that is not exactly one well-formed frame is
// ErrMalformed. The frame's Payload aliases text.
func Decode(text []byte) (Frame, error) {
	if len(text) == 0 {
		return Frame{}, fmt.Errorf("%w: empty", ErrMalformed)
	}
	if text[0] != KindSegment {
		return Frame{}, fmt.Errorf("%w: kind %#x", ErrMalformed, text[0])
	}
	if len(text) < HeaderSize {
		return Frame{}, fmt.Errorf("%w: short header", ErrMalformed)
	}
	f := Frame{
		ID:     ID(text[1:17]),
		Flags:  Flags(text[17]) & flagsMask,
		Seq:    binary.BigEndian.Uint32(text[18:]),
		Ack:    binary.BigEndian.Uint32(text[22:]),
		Window: binary.BigEndian.Uint16(text[26:]),
	}
	n := int(text[17] >> 6)
	off := HeaderSize
	if len(text) < off+n*RangeSize {
		return Frame{}, fmt.Errorf("%w: short SACK ranges", ErrMalformed)
	}
	if n > 0 {
		f.SACK = make([]Range, n)
		for i := range f.SACK {
			f.SACK[i] = Range{binary.BigEndian.Uint32(text[off:]), binary.BigEndian.Uint32(text[off+4:])}
			off += RangeSize
		}
	}
	if f.Flags&FlagRST != 0 {
		if len(text) != off+1 {
			return Frame{}, fmt.Errorf("%w: RST of %d bytes", ErrMalformed, len(text))
		}
		f.Reason = Reason(text[off])
		off++
	}
	if off < len(text) {
		f.Payload = text[off:]
	}
	if err := f.check(); err != nil {
		return Frame{}, err
	}
	return f, nil
}
