//go:build cgo && !gofuzz

package vrf

import (
	"math/big"

	gsecp "github.com/ethereum/go-ethereum/crypto/secp256k1"
)

// mul returns k·p with libsecp256k1's constant-time multiplication through go-ethereum's cgo
// binding, for secret scalars (the key, a nonce) and public ones alike: it is also faster here
// than decred's variable-time one. p must be on the curve (G, H or Gamma here); ok is false if
// k is 0 or not below n.
func mul(k *[32]byte, p *Point) (r Point, ok bool) {
	rx, ry := gsecp.S256().ScalarMult(new(big.Int).SetBytes(p.X[:]), new(big.Int).SetBytes(p.Y[:]), k[:])
	if rx == nil {
		return Point{}, false
	}
	rx.FillBytes(r.X[:])
	ry.FillBytes(r.Y[:])
	return r, true
}
