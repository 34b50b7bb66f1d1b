// Package kdf provides HMAC-SHA256 for the short keys and messages of
// relayd's per-hop key derivation (HKDF in internal/packet and internal/por)
// without allocating: the standard library's crypto/hmac allocates its two
// hash states on every call, which showed in the per-hop profile. It
// composes crypto/sha256 exactly as RFC 2104 defines HMAC and is tested
// against crypto/hmac. It must not import other relayd packages.
package kdf

import "crypto/sha256"

// MaxKey and MaxMsg bound HMAC32's inputs.
const (
	MaxKey = 32
	MaxMsg = 64
)

// HMAC32 returns HMAC-SHA256(key, msg). key must be at most MaxKey bytes and
// msg at most MaxMsg bytes; it panics otherwise (a programming error: every
// caller passes fixed sizes).
func HMAC32(key, msg []byte) [32]byte {
	if len(key) > MaxKey || len(msg) > MaxMsg {
		panic("kdf: HMAC32 input too long")
	}
	const block = 64
	var in [block + MaxMsg]byte
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
	sum := sha256.Sum256(out[:])
	clear(in[:block]) // the key, padded
	clear(out[:block])
	return sum
}
