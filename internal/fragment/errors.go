package fragment

import (
	"errors"
)

// Errors returned by this package. Match them with errors.Is.
var (
	// ErrMalformed is returned by Decode for a text that is not a well-formed frame (empty,
	// another version, an unknown kind, a short header, an index not below its count, lengths
	// that disagree, bytes after the data, set reserved bits), by Encode for a frame whose
	// fields break the same rules, and by Reassembler.Add for a frame that contradicts what the
	// reassembler holds for its message (another fragment count, body length, block count,
	// block size or chunk size; ack block parts of one round that do not fit together).
	ErrMalformed = errors.New("fragment: malformed frame")

	// ErrTooLarge is returned by Split, SplitReply and AckBlockParts for content that would
	// need more frames than the format or the acknowledgements can count (MaxFragments
	// fragments, MaxParts parts) or a body longer than MaxBodyLen, and by Reassembler.Add for
	// a message that could never fit its limits (more than MaxFragments fragments, or content
	// larger than the Limits' MaxBytes).
	ErrTooLarge = errors.New("fragment: message too large")

	// ErrCapacity is returned by Split, SplitReply and AckBlockParts for a text capacity that
	// leaves no room for data after the frame's header.
	ErrCapacity = errors.New("fragment: text capacity too small for a frame")

	// ErrBlockSize is returned by Split for reply blocks that are not all of one size between
	// 1 and MaxBlockSize bytes, or more than MaxReplyBlocks of them, and by AckBlockParts for
	// an empty block.
	ErrBlockSize = errors.New("fragment: bad reply block size or count")

	// ErrFull is returned by Reassembler.Add when a piece does not fit in the Limits' MaxBytes
	// even after everything else was evicted: the fragments already held for its own message
	// fill the budget (its ack blocks give way first). Only an ack block part can meet it. The
	// piece is not stored.
	ErrFull = errors.New("fragment: reassembly buffer full")

	// ErrKind is returned by Reassembler.Add for an Ack: acknowledgements are the sender's,
	// not the reassembler's.
	ErrKind = errors.New("fragment: frame kind not handled here")

	// ErrLimits is returned by NewReassembler for limits that are not all positive.
	ErrLimits = errors.New("fragment: invalid reassembly limits")
)
