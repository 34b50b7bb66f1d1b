package carrier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// The carrier's frames (docs/PROTOCOL.md §9.7): family 2 like the session's segment (0x20),
// which it carries as it is forward and wrapped back.
const (
	// KindBlockPart is half a reply block the entry sends the exit: 0x21, the session id, two
	// bytes with the block's number (high 15 bits) and the half (low bit), then 481 bytes of
	// the block as the parts carry it (without its two constant bytes).
	KindBlockPart = 0x21
	// KindAnswer is a segment the exit sends back on a reply block: 0x22, the count of unused
	// blocks the exit holds for the session after this one (at most 255), how many blocks it
	// received for the session in all (2 bytes, modulo 2¹⁶), how many frames it has to send
	// after this one (at most 255), then the segment.
	KindAnswer = 0x22
)

const (
	// partHeader is the size of a block part's header: kind, session id, number and half.
	partHeader = 1 + session.IDSize + 2
	// carriedSize is the size of a reply block as its parts carry it: without its version byte
	// and the first byte of its header (the ephemeral key's SEC1 prefix), which are constant.
	carriedSize = packet.ReplyBlockSize - 2
	// partData is the size of a block part's data: half a carried block.
	partData = carriedSize / 2
	// PartSize is the size of a block part: a whole forward text.
	PartSize = partHeader + partData
	// answerHeader is the size of an answer's header: kind, stock, blocks received and frames
	// to come.
	answerHeader = 5
	// maxByteField is the most an answer's stock or frames to come say.
	maxByteField = 255
	// blockNumbers is how many block numbers there are (15 bits): the parts of at most that many
	// blocks can be told apart while they are on their way.
	blockNumbers = 1 << 15
	// headerAt is where a reply block's header starts; its first byte is the ephemeral key's
	// SEC1 prefix, uncompressedPrefix (packet.ReplyBlock.UnmarshalBinary refuses another).
	headerAt           = packet.ReplyBlockSize - packet.HeaderSize
	uncompressedPrefix = 4
)

// The sizes fit the packet: two parts make a block, a part fills a forward text, and a segment
// back leaves room for the answer's header.
const (
	_ = uint(carriedSize - 2*partData)
	_ = uint(2*partData - carriedSize)
	_ = uint(packet.MaxMessageSize - PartSize)
	_ = uint(PartSize - packet.MaxMessageSize)
)

var (
	// ErrMalformed is a text of the carrier's kinds that breaks its layout.
	ErrMalformed = errors.New("carrier: malformed frame")
	// ErrBlockLayout is a reply block the parts cannot carry: its version byte or the first
	// byte of its header is not the one block parts leave out.
	ErrBlockLayout = errors.New("carrier: reply block of another layout")
)

// part is a decoded block part.
type part struct {
	id     session.ID
	number uint16 // 0 … blockNumbers − 1
	half   uint8  // 0 or 1
	data   []byte
}

func encodePart(id session.ID, number uint16, half uint8, data []byte) []byte {
	b := make([]byte, 0, PartSize)
	b = append(b, KindBlockPart)
	b = append(b, id[:]...)
	b = binary.BigEndian.AppendUint16(b, number<<1|uint16(half&1))
	return append(b, data...)
}

func decodePart(text []byte) (part, error) {
	if len(text) != PartSize || text[0] != KindBlockPart {
		return part{}, fmt.Errorf("%w: block part of %d bytes", ErrMalformed, len(text))
	}
	var p part
	copy(p.id[:], text[1:1+session.IDSize])
	nb := binary.BigEndian.Uint16(text[1+session.IDSize:])
	p.number, p.half, p.data = nb>>1, uint8(nb&1), text[partHeader:]
	return p, nil
}

// carry returns reply block raw as its parts carry it: without its version byte and the first
// byte of its header, both constant (PROTOCOL.md §9.7), or ErrBlockLayout when they are not
// those.
func carry(raw []byte) ([]byte, error) {
	if len(raw) != packet.ReplyBlockSize || raw[0] != packet.ReplyBlockVersion || raw[headerAt] != uncompressedPrefix {
		return nil, ErrBlockLayout
	}
	b := make([]byte, 0, carriedSize)
	b = append(b, raw[1:headerAt]...)
	return append(b, raw[headerAt+1:]...), nil
}

// uncarry returns the reply block whose carried halves are h0 and h1: carry's inverse.
func uncarry(h0, h1 []byte) []byte {
	b := make([]byte, 0, packet.ReplyBlockSize)
	b = append(b, packet.ReplyBlockVersion)
	b = append(b, h0...)
	b = append(b, h1...)
	return slices.Insert(b, headerAt, uncompressedPrefix)
}

// answer is a decoded answer: the exit's report and the segment, which the session's mux decodes.
type answer struct {
	stock    int    // the unused blocks the exit holds after this one (255: 255 or more)
	received uint16 // the blocks it joined for the session, modulo 2¹⁶
	toCome   int    // the frames it has to send after this one (255: 255 or more)
	segment  []byte
}

func encodeAnswer(a answer) []byte {
	b := make([]byte, 0, answerHeader+len(a.segment))
	b = append(b, KindAnswer, byte(min(a.stock, maxByteField)))
	b = binary.BigEndian.AppendUint16(b, a.received)
	b = append(b, byte(min(a.toCome, maxByteField)))
	return append(b, a.segment...)
}

func decodeAnswer(text []byte) (answer, error) {
	if len(text) < answerHeader+session.HeaderSize || text[0] != KindAnswer || text[answerHeader] != session.KindSegment {
		return answer{}, fmt.Errorf("%w: answer of %d bytes", ErrMalformed, len(text))
	}
	return answer{stock: int(text[1]), received: binary.BigEndian.Uint16(text[2:]), toCome: int(text[4]), segment: text[answerHeader:]}, nil
}
