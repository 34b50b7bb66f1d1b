// Package por implements relayd's proof-of-relay arithmetic, docs/PROTOCOL.md section 2: the
// scalars a hop derives from the secret it shares with a packet's sender, the acknowledgement
// challenge A = ack·G, the ticket challenge address((own + ack_next)·G), the checks a relayer makes
// on an incoming ticket and on an acknowledgement, and the response it redeems a ticket with.
//
// The package is pure: no I/O, no clocks, no randomness. It owns only the math; where the secret
// comes from (internal/packet) and where challenges travel (tickets, acknowledgements) is decided
// elsewhere. It imports no other relayd package.
//
// Scalars and points are fixed-size byte arrays so they can be compared, copied and put on the
// wire as they are. Functions that take them validate them; none of them keep or share memory.
// Point arithmetic is github.com/decred/dcrd/dcrec/secp256k1/v4's; its scalar multiplication is
// not constant-time, which the package accepts for speed (a hop's own scalar is used once per
// packet, and packet timing is already randomised by the mixing delay).
package por

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/crypto"
)

// HKDF info strings of the three derived scalars (PROTOCOL.md §2).
const (
	infoOwn = "relayd por own"
	infoAck = "relayd por ack"
	infoEnd = "relayd por end"
)

// Scalar is a secp256k1 scalar as 32 big-endian bytes. A valid Scalar is in [1, n-1]; the zero
// value is invalid.
type Scalar [32]byte

// AckChallenge is A = ack·G, the point a hop's acknowledgement must open, as a 33-byte SEC1
// compressed point.
type AckChallenge [33]byte

// Challenge is a ticket's proof-of-relay challenge: the 20-byte Ethereum address of a point,
// keccak256(X ‖ Y)[12:] of its uncompressed coordinates.
type Challenge [20]byte

// DeriveOwn derives own_i = HKDF-SHA256(secret, salt empty, info "relayd por own") mod n, the
// scalar hop i and the sender know from their shared secret.
func DeriveOwn(secret [32]byte) (Scalar, error) { return derive(secret, infoOwn) }

// DeriveAck derives ack_i = HKDF-SHA256(secret, info "relayd por ack") mod n, the scalar hop i
// reveals in its acknowledgement to hop i-1.
func DeriveAck(secret [32]byte) (Scalar, error) { return derive(secret, infoAck) }

// DeriveEnd derives the recipient's "end" scalar HKDF-SHA256(secret, info "relayd por end") mod n,
// which stands in for ack_{i+1} in the challenge of the ticket to the recipient (there is no hop
// after it). Only the sender and the recipient know it.
func DeriveEnd(secret [32]byte) (Scalar, error) { return derive(secret, infoEnd) }

func derive(secret [32]byte, info string) (Scalar, error) {
	okm, err := hkdf.Key(sha256.New, secret[:], nil, info, 32)
	if err != nil {
		return Scalar{}, fmt.Errorf("derive %q: %w", info, err)
	}
	var s secp256k1.ModNScalar
	s.SetByteSlice(okm) // reduces mod n
	if s.IsZero() {
		return Scalar{}, fmt.Errorf("derive %q: %w", info, ErrInvalidScalar)
	}
	return Scalar(s.Bytes()), nil
}

// AckChallengeOf returns A = ack·G, the acknowledgement challenge a packet header carries for the
// hop that owns ack.
func AckChallengeOf(ack Scalar) (AckChallenge, error) {
	k, ok := ack.mod()
	if !ok {
		return AckChallenge{}, ErrInvalidScalar
	}
	var p secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&k, &p)
	p.ToAffine()
	var a AckChallenge
	a[0] = 0x02 | byte(p.Y.IsOddBit())
	p.X.PutBytesUnchecked(a[1:])
	return a, nil
}

// TicketChallenge returns address((own + ackNext)·G), the challenge of the ticket issued to the
// hop that owns own; ackNext is the next hop's ack scalar, or the recipient's end scalar when own
// is the recipient's.
func TicketChallenge(own, ackNext Scalar) (Challenge, error) {
	r, err := sum(own, ackNext)
	if err != nil {
		return Challenge{}, err
	}
	return ChallengeOf(r)
}

// ChallengeOf returns address(r·G): the challenge that the response r opens. It is the check the
// channels contract makes when a ticket is redeemed (its challengeOf view), so a relayer can make it
// before paying for a transaction.
func ChallengeOf(r Scalar) (Challenge, error) {
	k, ok := r.mod()
	if !ok {
		return Challenge{}, ErrInvalidScalar
	}
	var p secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&k, &p)
	return address(&p), nil
}

// VerifyIncoming reports whether an incoming ticket's challenge c is address(own·G + ackNext),
// where own is this hop's own scalar and ackNext the next hop's acknowledgement challenge from
// the packet header. It is false for invalid inputs and when the sum is the point at infinity.
func VerifyIncoming(own Scalar, ackNext AckChallenge, c Challenge) bool {
	k, ok := own.mod()
	if !ok {
		return false
	}
	var a, p, q secp256k1.JacobianPoint
	if !ackNext.jacobian(&a) {
		return false
	}
	secp256k1.ScalarBaseMultNonConst(&k, &p)
	secp256k1.AddNonConst(&p, &a, &q)
	if isInfinity(&q) {
		return false
	}
	return address(&q) == c
}

// VerifyAck reports whether the acknowledgement ack opens the challenge a, i.e. ack·G == a. It is
// false when ack is not a valid scalar or a not a valid point.
func VerifyAck(ack Scalar, a AckChallenge) bool {
	want, err := AckChallengeOf(ack)
	return err == nil && want == a
}

// Response returns own + ackNext mod n, the proof-of-relay response a relayer redeems its ticket
// with once the next hop acknowledged with ackNext. Inputs of n or more are reduced mod n (valid
// inputs never are). The result is zero, which the contract rejects, only if ackNext == -own.
func Response(own, ackNext Scalar) [32]byte {
	var a, b secp256k1.ModNScalar
	a.SetBytes((*[32]byte)(&own))
	b.SetBytes((*[32]byte)(&ackNext))
	return a.Add(&b).Bytes()
}

// sum is Response for valid inputs, with an error for invalid ones and a zero sum.
func sum(x, y Scalar) (Scalar, error) {
	a, ok := x.mod()
	if !ok {
		return Scalar{}, ErrInvalidScalar
	}
	b, ok := y.mod()
	if !ok {
		return Scalar{}, ErrInvalidScalar
	}
	if a.Add(&b).IsZero() {
		return Scalar{}, ErrPointAtInfinity
	}
	return Scalar(a.Bytes()), nil
}

// Valid reports whether s is in [1, n-1].
func (s Scalar) Valid() bool {
	_, ok := s.mod()
	return ok
}

// mod parses s; ok is false when s is 0 or >= n.
func (s *Scalar) mod() (k secp256k1.ModNScalar, ok bool) {
	overflow := k.SetBytes((*[32]byte)(s))
	return k, overflow == 0 && !k.IsZero()
}

// Valid reports whether a is a compressed secp256k1 point.
func (a AckChallenge) Valid() bool {
	var p secp256k1.JacobianPoint
	return a.jacobian(&p)
}

// jacobian decompresses a into p (Z = 1); false if a is not a compressed point on the curve.
func (a *AckChallenge) jacobian(p *secp256k1.JacobianPoint) bool {
	if a[0] != 0x02 && a[0] != 0x03 {
		return false
	}
	if overflow := p.X.SetByteSlice(a[1:]); overflow {
		return false
	}
	if !secp256k1.DecompressY(&p.X, a[0] == 0x03, &p.Y) {
		return false
	}
	p.Z.SetInt(1)
	return true
}

func isInfinity(p *secp256k1.JacobianPoint) bool {
	p.X.Normalize()
	p.Y.Normalize()
	p.Z.Normalize()
	return (p.X.IsZero() && p.Y.IsZero()) || p.Z.IsZero()
}

// address converts p to affine coordinates and returns keccak256(X ‖ Y)[12:].
func address(p *secp256k1.JacobianPoint) Challenge {
	p.ToAffine()
	var xy [64]byte
	p.X.PutBytesUnchecked(xy[:32])
	p.Y.PutBytesUnchecked(xy[32:])
	h := crypto.Keccak256Hash(xy[:])
	return Challenge(h[12:])
}
