package fragment

import (
	"fmt"
)

// Split cuts a message into the texts of its fragments, in index order, each at most capacity
// bytes (the forward text capacity, 500 bytes). The content cut is the application's reply
// blocks, in order, then body; every fragment but the last carries capacity −
// FragmentHeaderSize bytes of it. replyBlocks may be empty; they must all have one size, 1 to
// MaxBlockSize bytes, and number at most MaxReplyBlocks (else ErrBlockSize). A body longer than
// MaxBodyLen, or content needing more than MaxFragments fragments, is ErrTooLarge: the limit
// comes from the acknowledgement, whose bitmap must fit one reply packet. The texts share no
// memory with the arguments. id must be fresh for every message (from crypto/rand).
func Split(id ID, body []byte, replyBlocks [][]byte, capacity int) ([][]byte, error) {
	if len(replyBlocks) > MaxReplyBlocks {
		return nil, fmt.Errorf("%w: %d reply blocks, at most %d", ErrBlockSize, len(replyBlocks), MaxReplyBlocks)
	}
	blockSize := 0
	if len(replyBlocks) > 0 {
		blockSize = len(replyBlocks[0])
	}
	for _, b := range replyBlocks {
		if len(b) != blockSize || blockSize == 0 || blockSize > MaxBlockSize {
			return nil, fmt.Errorf("%w: reply blocks of %d and %d bytes", ErrBlockSize, blockSize, len(b))
		}
	}
	if len(body) > MaxBodyLen {
		return nil, fmt.Errorf("%w: body of %d bytes", ErrTooLarge, len(body))
	}
	content := make([]byte, 0, len(replyBlocks)*blockSize+len(body))
	for _, b := range replyBlocks {
		content = append(content, b...)
	}
	content = append(content, body...)
	pieces, err := cut(content, capacity-FragmentHeaderSize)
	if err != nil {
		return nil, err
	}
	texts := make([][]byte, len(pieces))
	for i, data := range pieces {
		f := Fragment{
			ID:        id,
			Index:     uint16(i),
			Count:     uint16(len(pieces)),
			BodyLen:   uint32(len(body)),
			Blocks:    uint8(len(replyBlocks)),
			BlockSize: uint16(blockSize),
			Data:      data,
		}
		if texts[i], err = f.Encode(); err != nil {
			return nil, err
		}
	}
	return texts, nil
}

// SplitReply cuts an answer to message id into the texts of its Reply frames, in index order,
// each at most capacity bytes (the reply text capacity); each travels on one reply block of
// that message. seq numbers this answer among the answers to id (0 for the first). Limits as
// for Split (ErrTooLarge, ErrCapacity).
func SplitReply(id ID, seq uint8, body []byte, capacity int) ([][]byte, error) {
	if len(body) > MaxBodyLen {
		return nil, fmt.Errorf("%w: body of %d bytes", ErrTooLarge, len(body))
	}
	pieces, err := cut(body, capacity-ReplyHeaderSize)
	if err != nil {
		return nil, err
	}
	texts := make([][]byte, len(pieces))
	for i, data := range pieces {
		r := Reply{ID: id, Seq: seq, Index: uint16(i), Count: uint16(len(pieces)), BodyLen: uint32(len(body)), Data: data}
		if texts[i], err = r.Encode(); err != nil {
			return nil, err
		}
	}
	return texts, nil
}

// AckBlockParts cuts the reply block a sender attaches in transmission round round of message
// id, for the recipient's acknowledgement, into the texts of its parts, each at most capacity
// bytes; every part but the last carries capacity − AckBlockPartHeaderSize bytes (a 964-byte
// block, packet.ReplyBlockSize, takes 2 parts at capacity 500). An empty block is ErrBlockSize; one needing more than
// MaxParts parts is ErrTooLarge.
func AckBlockParts(id ID, round uint16, block []byte, capacity int) ([][]byte, error) {
	if len(block) == 0 {
		return nil, fmt.Errorf("%w: empty ack block", ErrBlockSize)
	}
	chunk := capacity - AckBlockPartHeaderSize
	if chunk < 1 {
		return nil, fmt.Errorf("%w: %d bytes", ErrCapacity, capacity)
	}
	if n := (len(block) + chunk - 1) / chunk; n > MaxParts {
		return nil, fmt.Errorf("%w: ack block of %d bytes needs %d parts", ErrTooLarge, len(block), n)
	}
	pieces, err := cut(block, chunk)
	if err != nil {
		return nil, err
	}
	texts := make([][]byte, len(pieces))
	for i, data := range pieces {
		p := AckBlockPart{ID: id, Round: round, Index: uint8(i), Count: uint8(len(pieces)), Data: data}
		if texts[i], err = p.Encode(); err != nil {
			return nil, err
		}
	}
	return texts, nil
}

// cut cuts content into pieces of chunk bytes, the last 1 to chunk bytes; empty content is one
// empty piece. More than MaxFragments pieces is ErrTooLarge.
func cut(content []byte, chunk int) ([][]byte, error) {
	if chunk < 1 {
		return nil, fmt.Errorf("%w: %d bytes of data per text", ErrCapacity, chunk)
	}
	n := max(1, (len(content)+chunk-1)/chunk)
	if n > MaxFragments {
		return nil, fmt.Errorf("%w: %d bytes need %d fragments of %d, at most %d", ErrTooLarge, len(content), n, chunk, MaxFragments)
	}
	pieces := make([][]byte, n)
	for i := range pieces {
		pieces[i] = content[min(i*chunk, len(content)):min((i+1)*chunk, len(content))]
	}
	return pieces, nil
}
