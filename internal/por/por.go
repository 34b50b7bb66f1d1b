// Package por implements relayd's proof-of-relay arithmetic, docs/PROTOCOL.md section 2: the
// scalars a hop derives from the secret it shares with a packet's sender, the acknowledgement
// challenge A = ack·G, the ticket challenge address((own + ack_next)·G), the checks a relayer makes
// on an incoming ticket and on an acknowledgement, and the response it redeems a ticket with.
//
// The package is pure: no I/O, no clocks, no randomness. It owns only the math; where the secret
// comes from (internal/packet) and where challenges travel (tickets, acknowledgements) is decided
// elsewhere. It imports no other relayd package but internal/kdf.
//
// Scalars and points are fixed-size byte arrays so they can be compared, copied and put on the
// wire as they are. Functions that take them validate them; none of them keep or share memory.
// Point arithmetic is github.com/decred/dcrd/dcrec/secp256k1/v4's; its scalar multiplication is
// not constant-time, which the package accepts for speed (a hop's own scalar is used once per
// packet, and packet timing is already randomised by the mixing delay).
package por

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/kdf"
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

// DeriveOwnAck returns DeriveOwn(secret) and DeriveAck(secret), sharing the HKDF extraction.
func DeriveOwnAck(secret [32]byte) (own, ack Scalar, err error) {
	prk := hkdfExtract(&secret)
	e := kdf.NewExpander(&prk) // one HMAC state for both expansions
	clear(prk[:])
	if own, err = expandScalar(e.First(infoOwn), infoOwn); err != nil {
		return Scalar{}, Scalar{}, err
	}
	if ack, err = expandScalar(e.First(infoAck), infoAck); err != nil {
		return Scalar{}, Scalar{}, err
	}
	return own, ack, nil
}

func derive(secret [32]byte, info string) (Scalar, error) {
	prk := hkdfExtract(&secret)
	return expandScalar(hkdfExpand1(&prk, info), info)
}

// expandScalar reduces okm, the 32 bytes of HKDF-Expand(prk, info), mod n.
func expandScalar(okm [32]byte, info string) (Scalar, error) {
	var s secp256k1.ModNScalar
	s.SetBytes(&okm) // reduces mod n
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
	k, ok := ack.mod()
	if !ok {
		return false
	}
	var want, p secp256k1.JacobianPoint
	if !a.jacobian(&want) {
		return false
	}
	secp256k1.ScalarBaseMultNonConst(&k, &p)
	return equalAffine(&p, &want.X, &want.Y)
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

// Point is a curve point in affine coordinates, X ‖ Y, 32 bytes each, big-endian (the 64-byte
// form the channels contract's announce takes). Its zero value is not a point.
type Point [64]byte

// Sum returns x + y mod n for valid scalars: ErrInvalidScalar for an invalid input,
// ErrPointAtInfinity when the sum is zero.
func Sum(x, y Scalar) (Scalar, error) { return sum(x, y) }

// MulBase returns k·G for every k in ks, converted to affine coordinates with one shared field
// inversion (Montgomery's trick), so n points cost n base-point multiplications and one
// inversion instead of n. It fails with ErrInvalidScalar if any k is invalid.
func MulBase(ks ...Scalar) ([]Point, error) {
	pts := make([]secp256k1.JacobianPoint, len(ks))
	for i := range ks {
		k, ok := ks[i].mod()
		if !ok {
			return nil, ErrInvalidScalar
		}
		secp256k1.ScalarBaseMultNonConst(&k, &pts[i])
	}
	out := make([]Point, len(ks))
	if len(ks) == 0 {
		return out, nil
	}
	ToAffine(pts)
	for i := range pts {
		pts[i].X.PutBytesUnchecked(out[i][:32])
		pts[i].Y.PutBytesUnchecked(out[i][32:])
	}
	return out, nil
}

// ToAffine normalises Jacobian points (none at infinity) to Z = 1 with one
// field inversion (Montgomery's trick): with a_i = Z_0·…·Z_i,
// Z_i^-1 = a_i^-1 · a_{i-1} and a_{i-1}^-1 = a_i^-1 · Z_i. Up to 8 points it
// does not allocate.
func ToAffine(pts []secp256k1.JacobianPoint) {
	if len(pts) == 0 {
		return
	}
	var stack [8]secp256k1.FieldVal
	acc := stack[:]
	if len(pts) > len(stack) {
		acc = make([]secp256k1.FieldVal, len(pts))
	}
	acc[0].Set(&pts[0].Z)
	for i := 1; i < len(pts); i++ {
		acc[i].Mul2(&acc[i-1], &pts[i].Z)
	}
	var inv secp256k1.FieldVal // (Z_0·…·Z_i)^-1 at step i
	inv.Set(&acc[len(pts)-1]).Inverse()
	for i := len(pts) - 1; i >= 0; i-- {
		p := &pts[i]
		var zInv, zInv2 secp256k1.FieldVal
		if i > 0 {
			zInv.Mul2(&inv, &acc[i-1])
			inv.Mul(&p.Z)
		} else {
			zInv.Set(&inv)
		}
		zInv2.SquareVal(&zInv)
		p.X.Mul(&zInv2)
		p.Y.Mul(zInv2.Mul(&zInv))
		p.Z.SetInt(1)
		p.X.Normalize()
		p.Y.Normalize()
	}
}

// Address returns the challenge q opens: keccak256(X ‖ Y)[12:], the point's Ethereum address.
func (q *Point) Address() Challenge {
	h := crypto.Keccak256Hash(q[:])
	return Challenge(h[12:])
}

// Compress returns q as a 33-byte SEC1 compressed point (for an AckChallenge).
func (q *Point) Compress() AckChallenge {
	var a AckChallenge
	a[0] = 0x02 | q[63]&1
	copy(a[1:], q[:32])
	return a
}

// Valid reports whether q is a point on the curve (coordinates below p, y² = x³ + 7).
func (q *Point) Valid() bool {
	var x, y secp256k1.FieldVal
	return q.field(&x, &y)
}

func (q *Point) field(x, y *secp256k1.FieldVal) bool {
	if x.SetByteSlice(q[:32]) || y.SetByteSlice(q[32:]) {
		return false
	}
	var y2, x3 secp256k1.FieldVal
	y2.SquareVal(y).Normalize()
	x3.SquareVal(x).Mul(x).AddInt(7).Normalize()
	return y2.Equals(&x3)
}

// VerifyResponse reports whether (own + ack)·G == q: whether the response own + ack opens the
// challenge q.Address(), which is what the channels contract checks when the ticket is redeemed.
// A relayer that knows q (PROTOCOL.md §2) checks the next hop's acknowledgement with it: one
// base-point multiplication, compared in Jacobian coordinates (no field inversion, no hash). It
// is false for invalid scalars, a zero sum or a q that is not on the curve.
func VerifyResponse(own, ack Scalar, q *Point) bool {
	r, err := sum(own, ack)
	if err != nil {
		return false
	}
	var x, y secp256k1.FieldVal
	if !q.field(&x, &y) {
		return false
	}
	k, _ := r.mod()
	var p secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&k, &p)
	return equalAffine(&p, &x, &y)
}

// equalAffine reports whether the Jacobian point p (normalized, as ScalarBaseMultNonConst
// returns it) is the affine point (x, y): X == x·Z² and Y == y·Z³, with no inversion.
func equalAffine(p *secp256k1.JacobianPoint, x, y *secp256k1.FieldVal) bool {
	if p.Z.IsZero() {
		return false
	}
	var z2, z3, xz, yz secp256k1.FieldVal
	z2.SquareVal(&p.Z)
	z3.Mul2(&z2, &p.Z)
	xz.Mul2(x, &z2).Normalize()
	yz.Mul2(y, &z3).Normalize()
	return xz.Equals(&p.X) && yz.Equals(&p.Y)
}

// EqualScalars compares two scalars in constant time.
func EqualScalars(a, b Scalar) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }

// AckCommitment is H(ack), the hash by which a packet header commits to the acknowledgement a
// hop must receive (PROTOCOL.md §2).
type AckCommitment [32]byte

// ackCommitLabel separates the commitment from every other use of SHA-256.
const ackCommitLabel = "relayd por ack commitment"

// CommitAck returns SHA-256(ackCommitLabel ‖ ack): the sender puts it in hop i's routing
// information for ack_{i+1}, and hop i accepts an acknowledgement a when CommitAck(a) equals it.
// Finding another scalar with the same commitment is a second preimage of SHA-256.
func CommitAck(ack Scalar) AckCommitment {
	var b [len(ackCommitLabel) + 32]byte
	n := copy(b[:], ackCommitLabel)
	copy(b[n:], ack[:])
	return sha256.Sum256(b[:])
}
