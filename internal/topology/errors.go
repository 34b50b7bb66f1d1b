package topology

import "errors"

// Errors returned by Draw. Match them with errors.Is.
var (
	// ErrBadParams means Params is out of range (no layer, no width, a negative threshold).
	ErrBadParams = errors.New("topology: bad parameters")
	// ErrTooFewCandidates means fewer eligible candidates than layers: no layer can be filled.
	ErrTooFewCandidates = errors.New("topology: too few eligible candidates")
)
