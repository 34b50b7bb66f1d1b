package carrier

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// The carrier's frames (docs/PROTOCOL.md §9.7): family 2 like the session's segment (0x20),
// which it carries as it is forward and wrapped back.
const (
	// KindBlockPart is half a reply block the entry sends the exit: 0x21, the session id, a
	// byte with the block's number (high 7 bits) and the half (low bit), then 482 bytes.
	KindBlockPart = 0x21
	// KindAnswer is a segment the exit sends back on a reply block: 0x22, the count of unused
	// blocks the exit holds for the session after this one (at most 255), how many blocks it
	// received for the session in all (2 bytes, modulo 2¹⁶), then the segment.
	KindAnswer = 0x22
)

const (
	// partHeader is the size of a block part's header: kind, session id, number and half.
	partHeader = 1 + session.IDSize + 1
	// partData is the size of a block part's data: half a reply block.
	partData = packet.ReplyBlockSize / 2
	// PartSize is the size of a block part: a whole forward text.
	PartSize = partHeader + partData
	// answerHeader is the size of an answer's header: kind, stock and blocks received.
	answerHeader = 4
	// maxStockField is the most an answer's stock byte says.
	maxStockField = 255
	// blockNumbers is how many block numbers there are (7 bits): the parts of at most that many
	// blocks can be told apart while they are on their way.
	blockNumbers = 128
)

// The sizes fit the packet: two parts make a block, a part fills a forward text, and a segment
// back leaves room for the answer's header.
const (
	_ = uint(packet.ReplyBlockSize - 2*partData)
	_ = uint(2*partData - packet.ReplyBlockSize)
	_ = uint(packet.MaxMessageSize - PartSize)
	_ = uint(PartSize - packet.MaxMessageSize)
)

// ErrMalformed is a text of the carrier's kinds that breaks its layout.
var ErrMalformed = errors.New("carrier: malformed frame")

// part is a decoded block part.
type part struct {
	id     session.ID
	number uint8 // 0 … 127
	half   uint8 // 0 or 1
	data   []byte
}

func encodePart(id session.ID, number, half uint8, data []byte) []byte {
	b := make([]byte, 0, PartSize)
	b = append(b, KindBlockPart)
	b = append(b, id[:]...)
	b = append(b, number<<1|half&1)
	return append(b, data...)
}

func decodePart(text []byte) (part, error) {
	if len(text) != PartSize || text[0] != KindBlockPart {
		return part{}, fmt.Errorf("%w: block part of %d bytes", ErrMalformed, len(text))
	}
	var p part
	copy(p.id[:], text[1:1+session.IDSize])
	nb := text[1+session.IDSize]
	p.number, p.half, p.data = nb>>1, nb&1, text[partHeader:]
	return p, nil
}

func encodeAnswer(stock int, received uint16, segment []byte) []byte {
	b := make([]byte, 0, answerHeader+len(segment))
	b = append(b, KindAnswer, byte(min(stock, maxStockField)))
	return append(binary.BigEndian.AppendUint16(b, received), segment...)
}

// decodeAnswer returns the stock, the blocks received and the segment of an answer; the
// segment is decoded by the session's mux.
func decodeAnswer(text []byte) (stock int, received uint16, segment []byte, err error) {
	if len(text) < answerHeader+session.HeaderSize || text[0] != KindAnswer || text[answerHeader] != session.KindSegment {
		return 0, 0, nil, fmt.Errorf("%w: answer of %d bytes", ErrMalformed, len(text))
	}
	return int(text[1]), binary.BigEndian.Uint16(text[2:]), text[answerHeader:], nil
}
