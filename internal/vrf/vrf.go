package vrf

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/crypto"
)

// Domain separation tags: ASCII, hashed as they are (no length, no terminator). doc.go gives the
// hash layouts; contracts/RelayVRF.sol holds the same strings as left-aligned bytes32 words.
const (
	dstHashToCurve = "relayd-vrf-h2c-v1"
	dstChallenge   = "relayd-vrf-challenge-v1"
	dstOutput      = "relayd-vrf-output-v1"
	dstNonce       = "relayd-vrf-nonce-v1"
)

// maxCounter bounds the hash to curve's try-and-increment: its counter is one byte.
const maxCounter = 256

// ProofLen is the length of a proof's encoding (MarshalBinary): nine 32-byte big-endian words
// in the order Gamma.X, Gamma.Y, C, S, SH.X, SH.Y, CGamma.X, CGamma.Y, ZInv, which is also the
// ABI encoding of the contract's RelayVRF.Proof struct.
const ProofLen = 9 * 32

var (
	// fieldP is the secp256k1 field prime p = 2^256 − 2^32 − 977.
	fieldP = mustHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
	// groupN is the secp256k1 group order n.
	groupN = mustHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	// generator is G in affine coordinates.
	generator = Point{
		X: [32]byte(mustHex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798").FillBytes(make([]byte, 32))),
		Y: [32]byte(mustHex("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8").FillBytes(make([]byte, 32))),
	}
)

func mustHex(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("vrf: bad constant " + s)
	}
	return v
}

// Point is an affine secp256k1 point as two 32-byte big-endian coordinates: the layout of the
// contract's uint256 pairs and of an Ethereum public key without its 0x04 prefix. The zero
// value is not on the curve; the point at infinity has no Point.
type Point struct{ X, Y [32]byte }

// Address returns keccak256(X ‖ Y)[12:], the Ethereum address of the point, which is what
// ecrecover returns for it.
func (p Point) Address() [20]byte {
	return [20]byte(crypto.Keccak256(p.X[:], p.Y[:])[12:])
}

// Proof is a VRF proof that Gamma = sk·H(pk, alpha) for the key pk = sk·G, with the witnesses
// that let the contract check it without a modular inverse or a general scalar multiplication
// (doc.go). Prove makes them; Verify checks every field, so a Proof from a peer or from call
// data needs no other validation.
type Proof struct {
	// Gamma is sk·H, the point the output is hashed from.
	Gamma Point
	// C is the challenge, big-endian, in [1, n).
	C [32]byte
	// S is the response k + C·sk mod n, big-endian, in [1, n).
	S [32]byte
	// SH is the witness S·H.
	SH Point
	// CGamma is the witness C·Gamma.
	CGamma Point
	// ZInv is the witness (SH.X − CGamma.X)^-1 mod p, big-endian.
	ZInv [32]byte
}

// Output returns beta = keccak256("relayd-vrf-output-v1" ‖ Gamma.X ‖ Gamma.Y), the VRF output
// the proof commits to. It means something only for a proof that Verify accepted.
func (p Proof) Output() [32]byte { return output(p.Gamma) }

func output(gamma Point) [32]byte {
	return [32]byte(crypto.Keccak256([]byte(dstOutput), gamma.X[:], gamma.Y[:]))
}

// MarshalBinary returns the ProofLen-byte encoding of p (see ProofLen). It never fails.
func (p Proof) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, ProofLen)
	for _, w := range p.words() {
		b = append(b, w[:]...)
	}
	return b, nil
}

// UnmarshalBinary decodes a ProofLen-byte encoding into p; it fails only for another length.
// It checks no field: Verify does.
func (p *Proof) UnmarshalBinary(b []byte) error {
	if len(b) != ProofLen {
		return fmt.Errorf("decode proof: %d bytes, want %d: %w", len(b), ProofLen, ErrMalformed)
	}
	var d Proof
	for i, w := range d.words() {
		copy(w[:], b[32*i:])
	}
	*p = d
	return nil
}

// words returns pointers to p's nine words in encoding order.
func (p *Proof) words() [9]*[32]byte {
	return [9]*[32]byte{&p.Gamma.X, &p.Gamma.Y, &p.C, &p.S, &p.SH.X, &p.SH.Y, &p.CGamma.X, &p.CGamma.Y, &p.ZInv}
}

// HashToCurve returns H, the point the key pk's VRF maps alpha to: for the first counter
// ctr = 0, 1, …, 255 for which x = keccak256("relayd-vrf-h2c-v1" ‖ pk.X ‖ pk.Y ‖ alpha ‖
// uint8(ctr)) mod p has x³ + 7 a square mod p, H = (x, y) with y = (x³ + 7)^((p+1)/4) mod p
// taken even. It fails with ErrBadKey for an unusable key and ErrUnprovable if no counter
// works.
func HashToCurve(pk *ecdsa.PublicKey, alpha []byte) (Point, error) {
	y, err := publicPoint(pk)
	if err != nil {
		return Point{}, err
	}
	return hashToCurve(y, alpha)
}

func hashToCurve(pk Point, alpha []byte) (Point, error) {
	buf := make([]byte, 0, len(dstHashToCurve)+64+len(alpha)+1)
	buf = append(buf, dstHashToCurve...)
	buf = append(buf, pk.X[:]...)
	buf = append(buf, pk.Y[:]...)
	buf = append(buf, alpha...)
	buf = append(buf, 0)
	for ctr := range maxCounter {
		buf[len(buf)-1] = byte(ctr)
		var sum [32]byte
		copy(sum[:], crypto.Keccak256(buf))
		var x, a, y secp256k1.FieldVal
		x.SetBytes(&sum)
		x.Normalize()
		a.SquareVal(&x).Mul(&x).AddInt(7)
		if !y.SquareRootVal(&a) {
			continue
		}
		if y.Normalize().IsOdd() {
			y.Negate(1).Normalize()
		}
		var h Point
		x.PutBytes(&h.X)
		y.PutBytes(&h.Y)
		return h, nil
	}
	return Point{}, ErrUnprovable
}

// Gamma returns sk·H(pk, alpha), the VRF point of sk's key for alpha, without a proof: one hash
// to curve and one constant-time scalar multiplication (with cgo; see mul_nocgo.go).
func Gamma(sk *ecdsa.PrivateKey, alpha []byte) (Point, error) {
	d, pk, err := secretKey(sk)
	if err != nil {
		return Point{}, err
	}
	defer clear(d[:])
	h, err := hashToCurve(pk, alpha)
	if err != nil {
		return Point{}, err
	}
	return gammaOf(&d, h)
}

// OutputOf returns beta, the VRF output of sk's key for alpha, as Proof.Output of Prove's proof
// would, at the cost of Gamma: what a ticket's holder needs to know whether it won.
func OutputOf(sk *ecdsa.PrivateKey, alpha []byte) ([32]byte, error) {
	g, err := Gamma(sk, alpha)
	if err != nil {
		return [32]byte{}, err
	}
	return output(g), nil
}

func gammaOf(d *[32]byte, h Point) (Point, error) {
	g, ok := mul(d, &h)
	if !ok {
		return Point{}, ErrBadKey
	}
	return g, nil
}

// Prove returns the proof that Gamma is sk's VRF point for alpha. The proof is deterministic:
// its nonce is derived from sk and H (doc.go). It fails with ErrBadKey for an unusable key and
// with ErrUnprovable when no proof the contract can check exists (about 2^-127 of inputs).
func Prove(sk *ecdsa.PrivateKey, alpha []byte) (Proof, error) {
	d, pk, err := secretKey(sk)
	if err != nil {
		return Proof{}, err
	}
	defer clear(d[:])
	h, err := hashToCurve(pk, alpha)
	if err != nil {
		return Proof{}, err
	}
	if !ecrecoverable(&h.X) {
		return Proof{}, ErrUnprovable
	}
	gamma, err := gammaOf(&d, h)
	if err != nil {
		return Proof{}, err
	}
	if !ecrecoverable(&gamma.X) {
		return Proof{}, ErrUnprovable
	}
	return prove(&d, pk, h, gamma)
}

// prove makes the proof for the given gamma (which tests set to a wrong point to play a
// cheating holder). It tries nonce counters until c and s are non-zero and SH ≠ ±CGamma, each
// of which fails with probability about 2^-256 (2^-255 for the last). Its four multiplications
// are all mul's: the constant-time one is also the fastest here.
func prove(d *[32]byte, pk, h, gamma Point) (Proof, error) {
	var ds secp256k1.ModNScalar
	ds.SetBytes(d)
	defer ds.Zero()
	for ctr := range maxCounter {
		k := nonce(d, h, byte(ctr))
		u, ok := mul(&k, &generator)
		if !ok {
			continue // k = 0
		}
		v, _ := mul(&k, &h)
		c := challenge(h, pk, gamma, u.Address(), v)
		var cs, ss secp256k1.ModNScalar
		cs.SetBytes(&c)
		ss.SetBytes(&k)
		clear(k[:])
		ss.Add(new(secp256k1.ModNScalar).Mul2(&cs, &ds))
		s := ss.Bytes()
		sH, okS := mul(&s, &h)
		cGamma, okC := mul(&c, &gamma)
		if !okS || !okC || sH.X == cGamma.X {
			continue // c or s is 0, or sH = ±cGamma: no inverse
		}
		var z, t secp256k1.FieldVal
		z.SetBytes(&sH.X)
		t.SetBytes(&cGamma.X)
		z.Add(t.Negate(1)).Normalize()
		z.Inverse().Normalize()
		return Proof{Gamma: gamma, C: c, S: s, SH: sH, CGamma: cGamma, ZInv: *z.Bytes()}, nil
	}
	return Proof{}, ErrUnprovable
}

// nonce returns k = keccak256("relayd-vrf-nonce-v1" ‖ sk ‖ H.X ‖ H.Y ‖ uint8(ctr)) mod n.
func nonce(d *[32]byte, h Point, ctr byte) [32]byte {
	sum := crypto.Keccak256([]byte(dstNonce), d[:], h.X[:], h.Y[:], []byte{ctr})
	var k secp256k1.ModNScalar
	k.SetByteSlice(sum)
	clear(sum)
	b := k.Bytes()
	k.Zero()
	return b
}

// challenge returns keccak256("relayd-vrf-challenge-v1" ‖ H ‖ pk ‖ Gamma ‖ address(U) ‖ V) mod n,
// points as X ‖ Y (64 bytes), the address as its 20 bytes: 299 bytes hashed.
func challenge(h, pk, gamma Point, u [20]byte, v Point) [32]byte {
	sum := crypto.Keccak256([]byte(dstChallenge), h.X[:], h.Y[:], pk.X[:], pk.Y[:],
		gamma.X[:], gamma.Y[:], u[:], v.X[:], v.Y[:])
	var c secp256k1.ModNScalar
	c.SetByteSlice(sum)
	return c.Bytes()
}

// Verify checks that p proves its Gamma to be pk's VRF point for alpha; then p.Output() is the
// VRF output. It follows contracts/RelayVRF.sol's verify step for step, doing its three
// ecrecover checks with go-ethereum's crypto.Ecrecover under the precompile's own input rules,
// so the two accept exactly the same proofs. It fails with ErrBadKey, ErrMalformed,
// ErrUnprovable, ErrWitness or ErrChallenge.
func Verify(pk *ecdsa.PublicKey, alpha []byte, p Proof) error {
	y, err := publicPoint(pk)
	if err != nil {
		return err
	}
	return verify(y, alpha, &p)
}

// verify is RelayVRF.verify, the key's checks included (Verify has done them already for an
// *ecdsa.PublicKey; repeating them keeps the mirror exact).
func verify(pk Point, alpha []byte, p *Proof) error {
	// 1. Ranges and curve membership (RelayVRF._wellFormed).
	if !usableKey(pk) {
		return ErrBadKey
	}
	pkX, pkY := word(&pk.X), word(&pk.Y)
	gX, gY, c, s := word(&p.Gamma.X), word(&p.Gamma.Y), word(&p.C), word(&p.S)
	sHX, sHY, cGX, cGY, zInv := word(&p.SH.X), word(&p.SH.Y), word(&p.CGamma.X), word(&p.CGamma.Y), word(&p.ZInv)
	if !ecrecoverable(&p.Gamma.X) || !belowP(gY) || !scalar(c) || !scalar(s) ||
		!belowP(sHX) || !belowP(sHY) || !belowP(cGX) || !belowP(cGY) || !belowP(zInv) {
		return ErrMalformed
	}
	if !onCurve(gX, gY) || !onCurve(sHX, sHY) || !onCurve(cGX, cGY) {
		return ErrMalformed
	}

	// 2. H, recomputed (RelayVRF.hashToCurve).
	h, err := hashToCurve(pk, alpha)
	if err != nil || !ecrecoverable(&h.X) {
		return ErrUnprovable
	}
	hX := word(&h.X)

	// 3. address(U) = address(s·G − c·pk) = ecrecover(−s·pk.X, v(pk), pk.X, −c·pk.X).
	u := ecrecover(negMulN(s, pkX), parityV(pkY), pkX, negMulN(c, pkX))
	if u == ([20]byte{}) {
		return ErrChallenge
	}

	// 4, 5. SH = s·H and CGamma = c·Gamma: ecrecover(0, v(P), P.X, P.X·k) = address(k·P).
	if ecrecover(new(big.Int), parityV(word(&h.Y)), hX, mulN(hX, s)) != p.SH.Address() {
		return ErrWitness
	}
	if ecrecover(new(big.Int), parityV(gY), gX, mulN(gX, c)) != p.CGamma.Address() {
		return ErrWitness
	}

	// 6. V = SH − CGamma, affine, with zInv = (SH.X − CGamma.X)^-1 checked.
	d := addP(sHX, negP(cGX))
	if mulP(d, zInv).Cmp(big.NewInt(1)) != 0 {
		return ErrWitness
	}
	lambda := mulP(addP(sHY, cGY), zInv)
	var v Point
	vX := addP(mulP(lambda, lambda), negP(addP(sHX, cGX)))
	vY := addP(mulP(lambda, addP(sHX, negP(vX))), negP(sHY))
	vX.FillBytes(v.X[:])
	vY.FillBytes(v.Y[:])

	// 7. The challenge.
	if challenge(h, pk, p.Gamma, u, v) != p.C {
		return ErrChallenge
	}
	return nil
}

// ecrecover is the EVM's precompile 0x01 on (hash, v, r, s): the address of
// r^-1·(s·R − hash·G), R the point with x = r and y of parity v − 27, or the zero address for
// input the precompile refuses (r or s not in [1, n), v not 27 or 28) or a point at infinity.
func ecrecover(hash *big.Int, v byte, r, s *big.Int) [20]byte {
	if !crypto.ValidateSignatureValues(v-27, r, s, false) {
		return [20]byte{}
	}
	var h [32]byte
	hash.FillBytes(h[:]) // callers pass words (below 2^256); libsecp256k1 reduces them mod n
	sig := make([]byte, 65)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:64])
	sig[64] = v - 27
	pub, err := crypto.Ecrecover(h[:], sig)
	if err != nil {
		return [20]byte{}
	}
	return [20]byte(crypto.Keccak256(pub[1:])[12:])
}

// secretKey returns sk's scalar as 32 bytes and its public point, checked as Verify checks a key.
// The key's fields are read through go-ethereum's crypto.FromECDSA and FromECDSAPub (a key
// with a nil scalar panics there, as it would in crypto.Sign).
func secretKey(sk *ecdsa.PrivateKey) ([32]byte, Point, error) {
	var d [32]byte
	if sk == nil || sk.Curve == nil {
		return d, Point{}, ErrBadKey
	}
	pk, err := publicPoint(&sk.PublicKey)
	if err != nil {
		return d, Point{}, err
	}
	b := crypto.FromECDSA(sk)
	defer clear(b)
	if len(b) != 32 {
		return d, Point{}, ErrBadKey
	}
	copy(d[:], b)
	if !ecrecoverable(&d) {
		clear(d[:])
		return d, Point{}, ErrBadKey
	}
	return d, pk, nil
}

// publicPoint returns pk as a Point if the contract can use it: on the curve, coordinates below
// p, x in [1, n).
func publicPoint(pk *ecdsa.PublicKey) (Point, error) {
	b := crypto.FromECDSAPub(pk) // 0x04 ‖ X ‖ Y, or nil without coordinates
	if len(b) != 65 {
		return Point{}, ErrBadKey
	}
	var y Point
	copy(y.X[:], b[1:33])
	copy(y.Y[:], b[33:])
	if !usableKey(y) {
		return Point{}, ErrBadKey
	}
	return y, nil
}

// usableKey reports whether the contract can use pk: x in [1, n), y below p, on the curve.
func usableKey(pk Point) bool {
	x, y := word(&pk.X), word(&pk.Y)
	return ecrecoverable(&pk.X) && belowP(y) && onCurve(x, y)
}

func (p *Point) jacobian() secp256k1.JacobianPoint {
	var j secp256k1.JacobianPoint
	j.X.SetBytes(&p.X)
	j.Y.SetBytes(&p.Y)
	j.Z.SetInt(1)
	return j
}

func affine(j *secp256k1.JacobianPoint) Point {
	j.ToAffine()
	var p Point
	j.X.PutBytes(&p.X)
	j.Y.PutBytes(&p.Y)
	return p
}

// Word arithmetic as the EVM does it (mulmod, addmod), for the verifier's mirror of the contract.

func word(b *[32]byte) *big.Int { return new(big.Int).SetBytes(b[:]) }

// ecrecoverable reports whether x is in [1, n): usable as ecrecover's r.
func ecrecoverable(x *[32]byte) bool { return scalar(word(x)) }

func scalar(v *big.Int) bool { return v.Sign() > 0 && v.Cmp(groupN) < 0 }
func belowP(v *big.Int) bool { return v.Cmp(fieldP) < 0 }

func onCurve(x, y *big.Int) bool {
	rhs := addP(mulP(mulP(x, x), x), big.NewInt(7))
	return mulP(y, y).Cmp(rhs) == 0
}

func parityV(y *big.Int) byte { return 27 + byte(y.Bit(0)) }

func mulN(a, b *big.Int) *big.Int { return new(big.Int).Mod(new(big.Int).Mul(a, b), groupN) }

// negMulN is n − a·b mod n, as the contract computes it (a·b mod n is never 0 for a, b in [1, n)).
func negMulN(a, b *big.Int) *big.Int { return new(big.Int).Sub(groupN, mulN(a, b)) }

func mulP(a, b *big.Int) *big.Int { return new(big.Int).Mod(new(big.Int).Mul(a, b), fieldP) }
func addP(a, b *big.Int) *big.Int { return new(big.Int).Mod(new(big.Int).Add(a, b), fieldP) }

// negP is p − a, as the contract computes it; for a < p it is in [1, p], which addmod reduces.
func negP(a *big.Int) *big.Int { return new(big.Int).Sub(fieldP, a) }
