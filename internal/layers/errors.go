package layers

import "errors"

// Errors of the package. Match them with errors.Is.
var (
	// ErrBadConfig means a required Config field is missing or out of range.
	ErrBadConfig = errors.New("layers: bad configuration")
	// ErrNotDrawn means the current epoch's layers are not drawn yet: the indexer has not read
	// its first block, its hash could not be read, or too few candidates are announced.
	ErrNotDrawn = errors.New("layers: this epoch's layers are not drawn yet")
	// ErrBadStakes means recorded stakes do not decode.
	ErrBadStakes = errors.New("layers: bad recorded stakes")
)
