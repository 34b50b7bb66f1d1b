package packet

import (
	"crypto/sha256"
	"errors"
	"io"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/relayd/relayd/internal/kdf"
	"github.com/relayd/relayd/internal/por"
)

// PublicKey is a parsed secp256k1 node public key. Parse each peer's key once
// with ParsePublicKey and keep it: parsing costs a square root, building a
// route with pre-parsed keys does not. The zero PublicKey is not a key.
type PublicKey struct {
	compressed [PublicKeySize]byte
	x, y       [32]byte // affine coordinates, big-endian
}

// ParsePublicKey parses a 33-byte SEC1 compressed secp256k1 public key. It
// returns ErrBadPoint for anything else, including an uncompressed key.
func ParsePublicKey(b []byte) (*PublicKey, error) {
	if len(b) != PublicKeySize || (b[0] != 2 && b[0] != 3) {
		return nil, ErrBadPoint
	}
	pk, err := dsecp.ParsePubKey(b)
	if err != nil {
		return nil, ErrBadPoint
	}
	p := &PublicKey{}
	copy(p.compressed[:], b)
	pk.X().FillBytes(p.x[:])
	pk.Y().FillBytes(p.y[:])
	return p, nil
}

// Bytes returns the key in SEC1 compressed form.
func (p *PublicKey) Bytes() [PublicKeySize]byte { return p.compressed }

// PrivateKey is a node's secp256k1 key, prepared for Peel. Make it with
// NewPrivateKey; it is safe for concurrent use.
type PrivateKey struct {
	scalar [32]byte
	pub    PublicKey
}

// NewPrivateKey prepares a node key given as a 32-byte big-endian scalar in
// [1, n-1] (for example go-ethereum's crypto.FromECDSA). It returns ErrBadKey
// otherwise. The PrivateKey keeps its own copy of the scalar.
func NewPrivateKey(scalar []byte) (*PrivateKey, error) {
	if len(scalar) != 32 {
		return nil, ErrBadKey
	}
	k := &PrivateKey{}
	copy(k.scalar[:], scalar)
	var s dsecp.ModNScalar
	if overflow := s.SetBytes(&k.scalar); overflow != 0 || s.IsZero() {
		return nil, ErrBadKey
	}
	var p dsecp.JacobianPoint
	dsecp.ScalarBaseMultNonConst(&s, &p)
	s.Zero()
	p.ToAffine()
	p.X.PutBytesUnchecked(k.pub.x[:])
	p.Y.PutBytesUnchecked(k.pub.y[:])
	k.pub.compressed[0] = 2 | byte(p.Y.IsOddBit())
	copy(k.pub.compressed[1:], k.pub.x[:])
	return k, nil
}

// PublicKey returns the key's public half.
func (k *PrivateKey) PublicKey() *PublicKey {
	p := k.pub
	return &p
}

// errRandom is returned when the random source fails to yield a valid scalar
// in a handful of tries (a broken reader: a uniform one fails with
// probability about 2^-128 per try).
var errRandom = errors.New("packet: random source yields no valid scalar")

// newEphemerals draws one fresh ephemeral key per element of scalars from
// rand and returns their public keys 0x04 ‖ X ‖ Y. The base-point
// multiplications are decred's precomputed, variable-time ones (each scalar
// is used for one packet only), and the conversions to affine share one field
// inversion (Montgomery's simultaneous inversion), which would otherwise cost
// about as much as a third of each multiplication.
func newEphemerals(rand io.Reader, scalars [][32]byte) ([MaxHops][EphemeralKeySize]byte, error) {
	var pubs [MaxHops][EphemeralKeySize]byte
	var pts [MaxHops]dsecp.JacobianPoint
	for i := range scalars {
		s, err := drawScalar(rand, &scalars[i])
		if err != nil {
			return pubs, err
		}
		dsecp.ScalarBaseMultNonConst(&s, &pts[i])
		s.Zero()
	}
	por.ToAffine(pts[:len(scalars)])
	for i := range scalars {
		pubs[i][0] = 4
		pts[i].X.PutBytesUnchecked(pubs[i][1:33])
		pts[i].Y.PutBytesUnchecked(pubs[i][33:65])
	}
	return pubs, nil
}

// drawScalar reads a scalar in [1, n-1] from rand into b.
func drawScalar(rand io.Reader, b *[32]byte) (dsecp.ModNScalar, error) {
	var s dsecp.ModNScalar
	for range 4 {
		if _, err := io.ReadFull(rand, b[:]); err != nil {
			return s, err
		}
		if overflow := s.SetBytes(b); overflow == 0 && !s.IsZero() {
			return s, nil
		}
	}
	clear(b[:])
	return s, errRandom
}

// parseEphemeral checks that b is 0x04 ‖ X ‖ Y with X, Y < p on the curve
// and returns the coordinates.
func parseEphemeral(b []byte) (x, y *[32]byte, ok bool) {
	if len(b) != EphemeralKeySize || b[0] != 4 {
		return nil, nil, false
	}
	// X, Y < p and y² = x³ + 7 (what dsecp.ParsePubKey checks, without its allocation).
	var fx, fy, y2, x3 dsecp.FieldVal
	if fx.SetByteSlice(b[1:33]) || fy.SetByteSlice(b[33:65]) {
		return nil, nil, false
	}
	y2.SquareVal(&fy).Normalize()
	x3.SquareVal(&fx).Mul(&fx).AddInt(7).Normalize()
	if !y2.Equals(&x3) {
		return nil, nil, false
	}
	return (*[32]byte)(b[1:33]), (*[32]byte)(b[33:65]), true
}

// ecdhLabel separates the shared-secret hash from every other use of SHA-256.
const ecdhLabel = "relayd packet ecdh"

// sharedSecret hashes a hop's shared point into s_i:
// SHA-256(ecdhLabel ‖ compressed(S) ‖ E ‖ P), binding the ephemeral key E and
// the hop's public key P like HPKE's DHKEM does.
func sharedSecret(point *[PublicKeySize]byte, eph []byte, pub *[PublicKeySize]byte) [SecretSize]byte {
	var in [len(ecdhLabel) + PublicKeySize + EphemeralKeySize + PublicKeySize]byte
	n := copy(in[:], ecdhLabel)
	n += copy(in[n:], point[:])
	n += copy(in[n:], eph)
	copy(in[n:], pub[:])
	return sha256.Sum256(in[:])
}

// keysLabel is the HKDF info string of a hop's symmetric keys.
const keysLabel = "relayd packet keys"

// hopKeys are the symmetric keys a hop derives from its secret.
type hopKeys struct {
	header  [32]byte // ChaCha20 key of the routing-information stream
	payload [32]byte // ChaCha20 key of the payload layer (ChaCha20-Poly1305 at a forward packet's recipient)
	mac     [32]byte // ChaCha20-Poly1305 key of the header MAC
	tag     [TagSize]byte
}

// deriveKeys expands s_i: header ‖ payload ‖ mac ‖ tag = HKDF-SHA256(s_i, salt
// empty, keysLabel, 128 bytes), the same HKDF as PROTOCOL.md §2, as four
// expand blocks of one HMAC state (internal/kdf); TestDeriveKeys checks it
// against crypto/hkdf.
func deriveKeys(secret *[SecretSize]byte) hopKeys {
	prk := kdf.Extract(secret[:])
	e := kdf.NewExpander(&prk)
	clear(prk[:])
	var k hopKeys
	k.header = e.Next(keysLabel)
	k.payload = e.Next(keysLabel)
	k.mac = e.Next(keysLabel)
	k.tag = e.Next(keysLabel)
	return k
}

// clear wipes the symmetric keys (the replay tag is not secret).
func (k *hopKeys) clear() {
	clear(k.header[:])
	clear(k.payload[:])
	clear(k.mac[:])
}
