//go:build !cgo || gofuzz

package packet

import dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"

// ecdh returns scalar·(x, y) SEC1 compressed. Without cgo it falls back to
// decred's pure-Go multiplication, about 3× slower and not constant-time. The
// point must be on the curve and the scalar in [1, n-1].
func ecdh(scalar *[32]byte, x, y *[32]byte) ([PublicKeySize]byte, bool) {
	var out [PublicKeySize]byte
	var s dsecp.ModNScalar
	if overflow := s.SetBytes(scalar); overflow != 0 || s.IsZero() {
		return out, false
	}
	var p, r dsecp.JacobianPoint
	p.X.SetBytes(x)
	p.Y.SetBytes(y)
	p.Z.SetInt(1)
	dsecp.ScalarMultNonConst(&s, &p, &r)
	s.Zero()
	if (r.X.IsZero() && r.Y.IsZero()) || r.Z.IsZero() {
		return out, false
	}
	r.ToAffine()
	out[0] = 2 | byte(r.Y.IsOddBit())
	r.X.PutBytesUnchecked(out[1:])
	return out, true
}
