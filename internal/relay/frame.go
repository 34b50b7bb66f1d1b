package relay

import (
	"fmt"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// Frame layouts (docs/PROTOCOL.md §5.4).
const (
	// FrameVersion is the first byte of every msg and ack frame this node writes and accepts.
	FrameVersion = 1

	// MsgFrameLen is a msg frame without a ticket: version ‖ packet.
	MsgFrameLen = 1 + packet.PacketSize
	// PaidMsgFrameLen is a msg frame with a ticket: version ‖ packet ‖ ticket.
	PaidMsgFrameLen = MsgFrameLen + tickets.EncodedLen

	// AckIDLen is the size of the packet id an ack frame names: bytes 1..16 of the
	// acknowledged packet's ephemeral key (the first 16 bytes of its X coordinate), which
	// both ends of the link have and which is fresh per packet and hop.
	AckIDLen = 16
	// AckFrameLen is an ack frame: version ‖ packet id ‖ ack scalar.
	AckFrameLen = 1 + AckIDLen + 32
)

// packetID is the id an acknowledgement names a packet by.
type packetID [AckIDLen]byte

func idOf(pkt []byte) packetID {
	var id packetID
	copy(id[:], pkt[1:1+AckIDLen])
	return id
}

// decodeMsgFrame splits a msg frame into its packet and its ticket bytes (nil if absent). The
// slices alias b.
func decodeMsgFrame(b []byte) (pkt, ticket []byte, err error) {
	if len(b) != MsgFrameLen && len(b) != PaidMsgFrameLen {
		return nil, nil, fmt.Errorf("msg frame of %d bytes: %w", len(b), ErrFrameSize)
	}
	if b[0] != FrameVersion {
		return nil, nil, fmt.Errorf("msg frame version %d: %w", b[0], ErrFrameVersion)
	}
	pkt = b[1:MsgFrameLen]
	if len(b) == PaidMsgFrameLen {
		ticket = b[MsgFrameLen:]
	}
	return pkt, ticket, nil
}

// appendMsgFrame appends a msg frame to dst; t may be nil.
func appendMsgFrame(dst, pkt []byte, t *tickets.Ticket) ([]byte, error) {
	dst = append(dst, FrameVersion)
	dst = append(dst, pkt...)
	if t == nil {
		return dst, nil
	}
	return t.AppendBinary(dst)
}

// decodeAckFrame returns an ack frame's packet id and ack scalar. It does not check the scalar.
func decodeAckFrame(b []byte) (packetID, por.Scalar, error) {
	var (
		id  packetID
		ack por.Scalar
	)
	if len(b) != AckFrameLen {
		return id, ack, fmt.Errorf("ack frame of %d bytes: %w", len(b), ErrFrameSize)
	}
	if b[0] != FrameVersion {
		return id, ack, fmt.Errorf("ack frame version %d: %w", b[0], ErrFrameVersion)
	}
	copy(id[:], b[1:])
	copy(ack[:], b[1+AckIDLen:])
	return id, ack, nil
}

// ackFrame encodes an ack frame.
func ackFrame(id packetID, ack por.Scalar) [AckFrameLen]byte {
	var f [AckFrameLen]byte
	f[0] = FrameVersion
	copy(f[1:], id[:])
	copy(f[1+AckIDLen:], ack[:])
	return f
}
