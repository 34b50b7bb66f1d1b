//go:build !cgo || gofuzz

package vrf

import "github.com/decred/dcrd/dcrec/secp256k1/v4"

// mul returns k·p. Without cgo it falls back to decred's pure-Go multiplication, which is not
// constant-time, for secret scalars (the key, a nonce) too, as internal/packet's ECDH does. p
// must be on the curve; ok is false if k is 0 or not below n.
func mul(k *[32]byte, p *Point) (Point, bool) {
	var s secp256k1.ModNScalar
	if overflow := s.SetBytes(k); overflow != 0 || s.IsZero() {
		return Point{}, false
	}
	pj := p.jacobian()
	var r secp256k1.JacobianPoint
	secp256k1.ScalarMultNonConst(&s, &pj, &r)
	s.Zero()
	if isInfinity(&r) {
		return Point{}, false
	}
	return affine(&r), true
}

func isInfinity(j *secp256k1.JacobianPoint) bool {
	return j.Z.Normalize().IsZero() || (j.X.Normalize().IsZero() && j.Y.Normalize().IsZero())
}
