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

	// MsgFrameLen is the one length of every msg frame: version ‖ packet ‖ ticket slot. A frame
	// without a ticket (a direct message) carries the slot all zero, so that an observer of the
	// link cannot tell paid from unpaid packets, or a first hop from a last, by their size.
	MsgFrameLen = ticketOffset + tickets.EncodedLen
	// PaidMsgFrameLen is MsgFrameLen: paid and unpaid msg frames have one size.
	PaidMsgFrameLen = MsgFrameLen

	// ticketOffset is where a msg frame's ticket slot starts, after the version and the packet.
	ticketOffset = 1 + packet.PacketSize

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

// decodeMsgFrame splits a msg frame into its packet and its ticket bytes: nil when the ticket
// slot is all zero, which no ticket encodes to (index 0 is invalid). The slices alias b. A frame
// of any length but MsgFrameLen is refused (ErrFrameSize).
func decodeMsgFrame(b []byte) (pkt, ticket []byte, err error) {
	if len(b) != MsgFrameLen {
		return nil, nil, fmt.Errorf("msg frame of %d bytes: %w", len(b), ErrFrameSize)
	}
	if b[0] != FrameVersion {
		return nil, nil, fmt.Errorf("msg frame version %d: %w", b[0], ErrFrameVersion)
	}
	pkt, ticket = b[1:ticketOffset], b[ticketOffset:]
	if allZero(ticket) {
		ticket = nil
	}
	return pkt, ticket, nil
}

// noTicket is the ticket slot of a msg frame without a ticket.
var noTicket [tickets.EncodedLen]byte

func allZero(b []byte) bool {
	var or byte
	for _, c := range b {
		or |= c
	}
	return or == 0
}

// appendMsgFrame appends a msg frame of MsgFrameLen bytes to dst: pkt (packet.PacketSize bytes)
// and t, or without a ticket (t nil) an all-zero ticket slot.
func appendMsgFrame(dst, pkt []byte, t *tickets.Ticket) ([]byte, error) {
	if len(pkt) != packet.PacketSize {
		return dst, fmt.Errorf("msg frame of a %d-byte packet: %w", len(pkt), ErrFrameSize)
	}
	dst = append(dst, FrameVersion)
	dst = append(dst, pkt...)
	if t == nil {
		return append(dst, noTicket[:]...), nil
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
