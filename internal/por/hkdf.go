package por

import "github.com/relayd/relayd/internal/kdf"

// HKDF-SHA256 (RFC 5869) with an empty salt, for the short inputs and 32-byte outputs of this
// package, without allocations: the standard library's crypto/hkdf allocates its HMAC states
// (18 allocations a call), which showed in the per-hop profile. Tested against crypto/hkdf.

// hkdfExtract is HKDF-Extract(salt empty, secret): HMAC with a key of zeros, which HMAC pads
// the same as an empty one.
func hkdfExtract(secret *[32]byte) [32]byte { return kdf.HMAC32(nil, secret[:]) }

// hkdfExpand1 is the first 32 bytes of HKDF-Expand(prk, info): HMAC(prk, info ‖ 0x01).
func hkdfExpand1(prk *[32]byte, info string) [32]byte {
	var msg [63]byte
	n := copy(msg[:], info)
	msg[n] = 1
	return kdf.HMAC32(prk[:], msg[:n+1])
}
