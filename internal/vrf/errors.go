package vrf

import "errors"

var (
	// ErrBadKey means a key is nil, not on the curve, has a coordinate not below p, or has an x
	// coordinate of 0 or not below the group order n (the contract's ecrecover checks cannot take
	// such a point; a random key has one with probability about 2^-128).
	ErrBadKey = errors.New("vrf: unusable key")

	// ErrMalformed means a proof field is out of range (a coordinate or zInv not below p, c or s
	// 0 or not below n, Gamma's x 0 or not below n) or one of its points is not on the curve (the
	// point at infinity, which has no affine form, included).
	ErrMalformed = errors.New("vrf: malformed proof")

	// ErrWitness means one of the proof's witnesses is wrong: SH is not S·H, CGamma is not
	// C·Gamma, or ZInv is not the inverse of SH.X − CGamma.X.
	ErrWitness = errors.New("vrf: wrong witness")

	// ErrChallenge means the proof's challenge does not match: Gamma is not the key's VRF point
	// for the input, or the proof is for another key or input, or forged.
	ErrChallenge = errors.New("vrf: challenge mismatch")

	// ErrUnprovable means no proof the contract can check exists for this key and input: the
	// hashed point H or the output point Gamma has an x coordinate not below n (probability
	// about 2^-128 each), or no counter of the hash to curve gave a point (probability 2^-256).
	ErrUnprovable = errors.New("vrf: no verifiable proof for this input")
)
