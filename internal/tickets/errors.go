package tickets

import "errors"

var (
	// ErrTooShort means an encoded ticket is shorter than EncodedLen bytes.
	ErrTooShort = errors.New("tickets: encoding too short")
	// ErrTooLong means an encoded ticket is longer than EncodedLen bytes.
	ErrTooLong = errors.New("tickets: encoding too long")

	// ErrBadIndex means the index is 0; the first ticket of a channel epoch has index 1.
	ErrBadIndex = errors.New("tickets: index must be at least 1")
	// ErrBadEpoch means the epoch is 0; a channel's first epoch is 1.
	ErrBadEpoch = errors.New("tickets: epoch must be at least 1")
	// ErrBadWinProb means the win probability does not fit in 56 bits.
	ErrBadWinProb = errors.New("tickets: win probability exceeds 56 bits")
	// ErrBadChallenge means the challenge is the zero address, which no response opens.
	ErrBadChallenge = errors.New("tickets: zero challenge")
	// ErrBadSignature means the signature is malformed: v not 27 or 28, r or s out of range, s
	// not in the lower half of the group order, or no key recovers from it.
	ErrBadSignature = errors.New("tickets: malformed signature")
)
