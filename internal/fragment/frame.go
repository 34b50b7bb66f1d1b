package fragment

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// IDSize is the size of a message ID.
const IDSize = 16

// ID identifies a message between its sender and its recipient: 16 random bytes the sender
// draws from crypto/rand for every message. Replies name the ID of the message they answer.
type ID [IDSize]byte

// Version is the frame format's version: the high nibble of every frame's first byte.
const Version = 1

// Kind is a frame's kind: the low nibble of its first byte.
type Kind uint8

// The frame kinds (docs/PROTOCOL.md §8).
const (
	// KindFragment is a piece of a message's content (Fragment).
	KindFragment Kind = 1
	// KindAckBlockPart is a piece of a reply block attached for acknowledgements
	// (AckBlockPart).
	KindAckBlockPart Kind = 2
	// KindAck is an acknowledgement (Ack).
	KindAck Kind = 3
	// KindReply is a piece of an answer sent on the application's reply blocks (Reply).
	KindReply Kind = 4
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindFragment:
		return "fragment"
	case KindAckBlockPart:
		return "ack block part"
	case KindAck:
		return "ack"
	case KindReply:
		return "reply"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Header sizes and limits of the format.
const (
	// FragmentHeaderSize is a Fragment's overhead in a text: kind 1, ID 16, index 2, count 2,
	// body length 3, reply block count 1, reply block size 2.
	FragmentHeaderSize = 1 + IDSize + 2 + 2 + 3 + 1 + 2

	// AckBlockPartHeaderSize is an AckBlockPart's overhead: kind 1, ID 16, and one byte of
	// round (4 bits), part index (2 bits) and part count less one (2 bits). 18 bytes leave
	// 482 of a 500-byte text: a 964-byte reply block (packet.ReplyBlockSize) in two parts.
	AckBlockPartHeaderSize = 1 + IDSize + 1

	// AckHeaderSize is an Ack's size without its bitmap: kind 1, ID 16, round 2, total 2,
	// flags 1. A complete Ack is this long; an incomplete one adds ⌈total/8⌉ bitmap bytes.
	AckHeaderSize = 1 + IDSize + 2 + 2 + 1

	// ReplyHeaderSize is a Reply's overhead: kind 1, ID 16, reply number 1, index 2, count 2,
	// body length 3.
	ReplyHeaderSize = 1 + IDSize + 1 + 2 + 2 + 3

	// MaxFragments is the most fragments Split makes for one message, and the most a
	// Reassembler accepts: an incomplete Ack for MaxFragments fragments is
	// AckSize(MaxFragments) = 406 bytes, within a reply packet's text (468 bytes or more).
	// The Fragment frame itself counts up to 65,535.
	MaxFragments = 3072

	// MaxBodyLen is the longest body a Fragment or Reply can describe (3 bytes of length).
	MaxBodyLen = 1<<24 - 1

	// MaxReplyBlocks is the most reply blocks a message carries for its application.
	MaxReplyBlocks = 255

	// MaxBlockSize is the longest reply block a message carries for its application.
	MaxBlockSize = 1<<16 - 1

	// MaxParts is the most parts an ack block is cut into.
	MaxParts = 4

	// MaxRound is the highest round an AckBlockPart names: a sender sends at most MaxRound+1
	// rounds of a message.
	MaxRound = 15
)

// AckSize is the length of an incomplete Ack's text for a message of total fragments.
func AckSize(total int) int { return AckHeaderSize + (total+7)/8 }

// Frame is a decoded frame: a Fragment, AckBlockPart, Ack or Reply (values, not pointers).
// Switch on its concrete type or on Kind.
type Frame interface {
	// Kind is the frame's kind.
	Kind() Kind
	// MessageID is the ID of the message the frame belongs to (for a Reply, the message it
	// answers).
	MessageID() ID
	// Encode checks the frame as Decode would and returns its text.
	Encode() ([]byte, error)
	check() error
}

// Fragment is one fixed-size chunk of a message's content: the application's reply blocks
// (Blocks of BlockSize bytes each) followed by the body (BodyLen bytes). Fragment Index of
// Count carries content[Index·chunk : (Index+1)·chunk], where chunk is the sender's text
// capacity minus FragmentHeaderSize; the last one carries the rest (1 to chunk bytes), and a
// message of empty content is one fragment without data.
type Fragment struct {
	ID        ID
	Index     uint16
	Count     uint16 // at least 1
	BodyLen   uint32 // at most MaxBodyLen
	Blocks    uint8  // reply blocks for the application
	BlockSize uint16 // 0 exactly when Blocks is 0
	Data      []byte // aliases the decoded text
}

// Kind is KindFragment.
func (Fragment) Kind() Kind { return KindFragment }

// MessageID is f.ID.
func (f Fragment) MessageID() ID { return f.ID }

// ContentLen is the length of the message's content: reply blocks, then body.
func (f Fragment) ContentLen() int { return int(f.Blocks)*int(f.BlockSize) + int(f.BodyLen) }

// Chunk is the sender's chunk size implied by this fragment alone, or 0 for a message of one
// fragment (which implies none). Only meaningful for a fragment that passes Encode's checks.
func (f Fragment) Chunk() int {
	c, _ := chunkOf(int(f.Index), int(f.Count), f.ContentLen(), len(f.Data))
	return c
}

func (f Fragment) check() error {
	if f.BodyLen > MaxBodyLen {
		return fmt.Errorf("%w: body length %d", ErrMalformed, f.BodyLen)
	}
	if (f.Blocks == 0) != (f.BlockSize == 0) {
		return fmt.Errorf("%w: %d reply blocks of %d bytes", ErrMalformed, f.Blocks, f.BlockSize)
	}
	_, err := chunkOf(int(f.Index), int(f.Count), f.ContentLen(), len(f.Data))
	return err
}

// Encode checks f and returns its text.
func (f Fragment) Encode() ([]byte, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	b := make([]byte, FragmentHeaderSize, FragmentHeaderSize+len(f.Data))
	b[0] = Version<<4 | byte(KindFragment)
	copy(b[1:], f.ID[:])
	binary.BigEndian.PutUint16(b[17:], f.Index)
	binary.BigEndian.PutUint16(b[19:], f.Count)
	putUint24(b[21:], f.BodyLen)
	b[24] = f.Blocks
	binary.BigEndian.PutUint16(b[25:], f.BlockSize)
	return append(b, f.Data...), nil
}

// AckBlockPart is one part of a reply block the sender attaches in a transmission round so the
// recipient can acknowledge: part Index of Count (at most MaxParts) of the block of round
// Round. All parts but the last carry the same number of bytes (the sender's capacity minus
// AckBlockPartHeaderSize); the last carries the rest, at least one byte.
type AckBlockPart struct {
	ID    ID
	Round uint16
	Index uint8
	Count uint8  // 1 to MaxParts
	Data  []byte // aliases the decoded text; not empty
}

// Kind is KindAckBlockPart.
func (AckBlockPart) Kind() Kind { return KindAckBlockPart }

// MessageID is p.ID.
func (p AckBlockPart) MessageID() ID { return p.ID }

func (p AckBlockPart) check() error {
	if p.Count == 0 || p.Count > MaxParts || p.Index >= p.Count || p.Round > MaxRound {
		return fmt.Errorf("%w: ack block part %d of %d, round %d", ErrMalformed, p.Index, p.Count, p.Round)
	}
	if len(p.Data) == 0 {
		return fmt.Errorf("%w: empty ack block part", ErrMalformed)
	}
	return nil
}

// Encode checks p and returns its text.
func (p AckBlockPart) Encode() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	b := make([]byte, AckBlockPartHeaderSize, AckBlockPartHeaderSize+len(p.Data))
	b[0] = Version<<4 | byte(KindAckBlockPart)
	copy(b[1:], p.ID[:])
	b[17] = byte(p.Round)<<4 | p.Index<<2 | (p.Count - 1)
	return append(b, p.Data...), nil
}

// Ack acknowledges the fragments of message ID received so far, sent on the ack block of
// round Round. Bitmap has bit i (byte i/8, mask 1<<(i%8)) set for each fragment i received,
// ⌈Total/8⌉ bytes with the bits past Total clear. A complete Ack (every fragment received)
// carries no bitmap: Bitmap is nil and Has is true for every index. An incomplete Ack never
// has every bit set.
type Ack struct {
	ID       ID
	Round    uint16
	Total    uint16 // the message's fragment count, at least 1
	Complete bool
	Bitmap   []byte // nil when Complete; aliases the decoded text
}

// Kind is KindAck.
func (Ack) Kind() Kind { return KindAck }

// MessageID is a.ID.
func (a Ack) MessageID() ID { return a.ID }

// Has reports whether a acknowledges fragment i.
func (a Ack) Has(i int) bool {
	if i < 0 || i >= int(a.Total) {
		return false
	}
	if a.Complete {
		return true
	}
	return i/8 < len(a.Bitmap) && a.Bitmap[i/8]&(1<<(i%8)) != 0
}

func (a Ack) check() error {
	if a.Total == 0 {
		return fmt.Errorf("%w: ack of 0 fragments", ErrMalformed)
	}
	if a.Complete {
		if a.Bitmap != nil {
			return fmt.Errorf("%w: complete ack with a bitmap", ErrMalformed)
		}
		return nil
	}
	n := int(a.Total)
	if len(a.Bitmap) != (n+7)/8 {
		return fmt.Errorf("%w: ack bitmap of %d bytes for %d fragments", ErrMalformed, len(a.Bitmap), n)
	}
	if n%8 != 0 && a.Bitmap[n/8]>>(n%8) != 0 {
		return fmt.Errorf("%w: ack bitmap bits past its total", ErrMalformed)
	}
	if countBits(a.Bitmap) == n {
		return fmt.Errorf("%w: incomplete ack with every fragment", ErrMalformed)
	}
	return nil
}

// Encode checks a and returns its text: AckHeaderSize bytes when complete, AckSize(Total)
// otherwise.
func (a Ack) Encode() ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	b := make([]byte, AckHeaderSize, AckHeaderSize+len(a.Bitmap))
	b[0] = Version<<4 | byte(KindAck)
	copy(b[1:], a.ID[:])
	binary.BigEndian.PutUint16(b[17:], a.Round)
	binary.BigEndian.PutUint16(b[19:], a.Total)
	if a.Complete {
		b[21] = ackComplete
	}
	return append(b, a.Bitmap...), nil
}

// ackComplete is the Ack flags' only defined bit.
const ackComplete = 0x01

// Reply is one fixed-size chunk of an answer to message ID, sent on one of the reply blocks
// that message carried (one packet per block). Seq numbers the answers to one message (0 for
// the first), so that several answers to it are told apart. Chunks are cut as a Fragment's,
// over the body alone: reply Index of Count carries body[Index·chunk : (Index+1)·chunk], chunk
// being the reply text capacity minus ReplyHeaderSize.
type Reply struct {
	ID      ID
	Seq     uint8
	Index   uint16
	Count   uint16 // at least 1
	BodyLen uint32 // at most MaxBodyLen
	Data    []byte // aliases the decoded text
}

// Kind is KindReply.
func (Reply) Kind() Kind { return KindReply }

// MessageID is r.ID, the ID of the message answered.
func (r Reply) MessageID() ID { return r.ID }

func (r Reply) check() error {
	if r.BodyLen > MaxBodyLen {
		return fmt.Errorf("%w: body length %d", ErrMalformed, r.BodyLen)
	}
	_, err := chunkOf(int(r.Index), int(r.Count), int(r.BodyLen), len(r.Data))
	return err
}

// Encode checks r and returns its text.
func (r Reply) Encode() ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	b := make([]byte, ReplyHeaderSize, ReplyHeaderSize+len(r.Data))
	b[0] = Version<<4 | byte(KindReply)
	copy(b[1:], r.ID[:])
	b[17] = r.Seq
	binary.BigEndian.PutUint16(b[18:], r.Index)
	binary.BigEndian.PutUint16(b[20:], r.Count)
	putUint24(b[22:], r.BodyLen)
	return append(b, r.Data...), nil
}

// chunkOf checks that dl bytes can be piece index of count of content of n bytes cut into
// fixed-size chunks (every piece but the last one chunk long, the last 1 to chunk bytes; empty
// content is one empty piece) and returns the chunk size the piece implies, 0 when count is 1.
func chunkOf(index, count, n, dl int) (int, error) {
	switch {
	case count == 0 || index >= count:
		return 0, fmt.Errorf("%w: piece %d of %d", ErrMalformed, index, count)
	case count == 1:
		if dl != n {
			return 0, fmt.Errorf("%w: single piece of %d bytes for %d", ErrMalformed, dl, n)
		}
		return 0, nil
	case dl == 0:
		return 0, fmt.Errorf("%w: empty piece %d of %d", ErrMalformed, index, count)
	case index < count-1:
		// dl is the chunk: count pieces of it must just cover n.
		if (count-1)*dl >= n || count*dl < n {
			return 0, fmt.Errorf("%w: %d pieces of %d bytes for %d", ErrMalformed, count, dl, n)
		}
		return dl, nil
	default:
		// The last piece: the others share n-dl equally, each at least as long as it.
		rest := n - dl
		if rest < dl*(count-1) || rest%(count-1) != 0 {
			return 0, fmt.Errorf("%w: last piece of %d bytes, %d pieces for %d", ErrMalformed, dl, count, n)
		}
		return rest / (count - 1), nil
	}
}

// Decode reads one frame, strictly: a text of another version or an unknown kind, a short
// header, fields that break the frame's rules (see each type) or a length that disagrees with
// them (data missing or left over) is ErrMalformed. Decoding the result's Encode gives text
// again. The frame's data (and an Ack's bitmap) alias text.
func Decode(text []byte) (Frame, error) {
	if len(text) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	if v := text[0] >> 4; v != Version {
		return nil, fmt.Errorf("%w: version %d", ErrMalformed, v)
	}
	var f Frame
	switch k := Kind(text[0] & 0x0f); k {
	case KindFragment:
		if len(text) < FragmentHeaderSize {
			return nil, fmt.Errorf("%w: short fragment", ErrMalformed)
		}
		f = Fragment{
			ID:        ID(text[1:17]),
			Index:     binary.BigEndian.Uint16(text[17:]),
			Count:     binary.BigEndian.Uint16(text[19:]),
			BodyLen:   uint24(text[21:]),
			Blocks:    text[24],
			BlockSize: binary.BigEndian.Uint16(text[25:]),
			Data:      text[FragmentHeaderSize:],
		}
	case KindAckBlockPart:
		if len(text) < AckBlockPartHeaderSize {
			return nil, fmt.Errorf("%w: short ack block part", ErrMalformed)
		}
		f = AckBlockPart{
			ID:    ID(text[1:17]),
			Round: uint16(text[17] >> 4),
			Index: text[17] >> 2 & 0x03,
			Count: text[17]&0x03 + 1,
			Data:  text[AckBlockPartHeaderSize:],
		}
	case KindAck:
		if len(text) < AckHeaderSize {
			return nil, fmt.Errorf("%w: short ack", ErrMalformed)
		}
		a := Ack{
			ID:    ID(text[1:17]),
			Round: binary.BigEndian.Uint16(text[17:]),
			Total: binary.BigEndian.Uint16(text[19:]),
		}
		switch text[21] {
		case 0:
			a.Bitmap = text[AckHeaderSize:]
		case ackComplete:
			a.Complete = true
			if len(text) != AckHeaderSize {
				return nil, fmt.Errorf("%w: complete ack with a bitmap", ErrMalformed)
			}
		default:
			return nil, fmt.Errorf("%w: ack flags %#x", ErrMalformed, text[21])
		}
		f = a
	case KindReply:
		if len(text) < ReplyHeaderSize {
			return nil, fmt.Errorf("%w: short reply", ErrMalformed)
		}
		f = Reply{
			ID:      ID(text[1:17]),
			Seq:     text[17],
			Index:   binary.BigEndian.Uint16(text[18:]),
			Count:   binary.BigEndian.Uint16(text[20:]),
			BodyLen: uint24(text[22:]),
			Data:    text[ReplyHeaderSize:],
		}
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", ErrMalformed, k)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

func putUint24(b []byte, v uint32) {
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func uint24(b []byte) uint32 {
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

// countBits is the number of set bits in b.
func countBits(b []byte) int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}
