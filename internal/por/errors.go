package por

import "errors"

var (
	// ErrInvalidScalar means a scalar is 0 or not below the secp256k1 group order n. Scalars from
	// Derive* never are (a zero derivation is reported as ErrInvalidScalar too); acknowledgements
	// and responses that arrive from peers may be.
	ErrInvalidScalar = errors.New("por: invalid scalar")

	// ErrPointAtInfinity means a sum of scalars or points is the point at infinity, which has no
	// address. It happens only if the inputs were chosen to cancel out.
	ErrPointAtInfinity = errors.New("por: point at infinity")
)
