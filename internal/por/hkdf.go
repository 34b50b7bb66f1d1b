package por

import "crypto/sha256"

// HKDF-SHA256 (RFC 5869) with an empty salt, for the short inputs and 32-byte outputs of this
// package, without allocations: the standard library's crypto/hkdf allocates its HMAC states
// (18 allocations a call), which showed in the per-hop profile. Tested against crypto/hkdf.

// hmac32 returns HMAC-SHA256(key, msg) for a key of at most 32 bytes and a msg of at most
// 64 bytes.
func hmac32(key []byte, msg []byte) [32]byte {
	const block = 64
	var in [block + 64]byte
	for i := range block {
		in[i] = 0x36
	}
	for i, b := range key {
		in[i] ^= b
	}
	n := copy(in[block:], msg)
	inner := sha256.Sum256(in[:block+n])
	var out [block + 32]byte
	for i := range block {
		out[i] = 0x5c
	}
	for i, b := range key {
		out[i] ^= b
	}
	copy(out[block:], inner[:])
	return sha256.Sum256(out[:])
}

// hkdfExtract is HKDF-Extract(salt empty, secret): HMAC with a key of zeros, which HMAC pads
// the same as an empty one.
func hkdfExtract(secret *[32]byte) [32]byte { return hmac32(nil, secret[:]) }

// hkdfExpand1 is the first 32 bytes of HKDF-Expand(prk, info): HMAC(prk, info ‖ 0x01).
func hkdfExpand1(prk *[32]byte, info string) [32]byte {
	var msg [63]byte
	n := copy(msg[:], info)
	msg[n] = 1
	return hmac32(prk[:], msg[:n+1])
}
