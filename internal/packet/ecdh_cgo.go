//go:build cgo && !gofuzz

package packet

import (
	"math/big"

	gsecp "github.com/ethereum/go-ethereum/crypto/secp256k1"
)

// ecdh returns scalar·(x, y) SEC1 compressed, using libsecp256k1's
// constant-time multiplication through go-ethereum's cgo binding. The point
// must already be validated as on the curve (libsecp256k1 does not check it
// here) and the scalar must be in [1, n-1].
func ecdh(scalar *[32]byte, x, y *[32]byte) ([PublicKeySize]byte, bool) {
	var out [PublicKeySize]byte
	bx := new(big.Int).SetBytes(x[:])
	by := new(big.Int).SetBytes(y[:])
	rx, ry := gsecp.S256().ScalarMult(bx, by, scalar[:])
	if rx == nil {
		return out, false
	}
	out[0] = 2 | byte(ry.Bit(0))
	rx.FillBytes(out[1:])
	return out, true
}
