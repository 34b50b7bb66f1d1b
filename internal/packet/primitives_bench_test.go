//go:build cgo && !gofuzz

package packet

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"math/big"
	"testing"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"
	gsecp "github.com/ethereum/go-ethereum/crypto/secp256k1"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/poly1305" //lint:ignore SA1019 the benchmark measures the bare MAC beside the alternatives
)

// BenchmarkPrimitives measures the alternatives behind the choices in
// PROTOCOL.md §3: how a hop gets the ephemeral point, which library
// multiplies, which MAC (over the header since reply blocks, over the whole
// packet before), and what classic Sphinx blinding would add to a hop.
func BenchmarkPrimitives(b *testing.B) {
	rand := newSeededReader(b.Name())
	nodes := newNodes(b, rand, 3)
	priv, _ := dsecp.ParsePubKey(nodes[1].pub.compressed[:])
	comp := priv.SerializeCompressed()
	unc := priv.SerializeUncompressed()
	x, y := gsecp.DecompressPubkey(comp)
	scalar := nodes[0].priv.scalar
	var key [32]byte
	pkt := make([]byte, PacketSize)

	// Getting the ephemeral point: compressed needs a square root.
	b.Run("point/geth-decompress-33", func(b *testing.B) {
		for b.Loop() {
			gsecp.DecompressPubkey(comp)
		}
	})
	b.Run("point/decred-parse-33", func(b *testing.B) {
		for b.Loop() {
			dsecp.ParsePubKey(comp)
		}
	})
	b.Run("point/decred-parse-65", func(b *testing.B) { // chosen
		for b.Loop() {
			dsecp.ParsePubKey(unc)
		}
	})
	// Scalar multiplications.
	b.Run("mult/geth-cgo-variable-base", func(b *testing.B) { // chosen for ECDH
		for b.Loop() {
			gsecp.S256().ScalarMult(x, y, scalar[:])
		}
	})
	b.Run("mult/decred-variable-base", func(b *testing.B) {
		var k dsecp.ModNScalar
		k.SetBytes(&scalar)
		var p, r dsecp.JacobianPoint
		priv.AsJacobian(&p)
		for b.Loop() {
			dsecp.ScalarMultNonConst(&k, &p, &r)
		}
	})
	b.Run("mult/geth-cgo-base", func(b *testing.B) {
		for b.Loop() {
			gsecp.S256().ScalarBaseMult(scalar[:])
		}
	})
	b.Run("mult/decred-precomputed-base", func(b *testing.B) { // chosen for ephemeral keys
		var k dsecp.ModNScalar
		k.SetBytes(&scalar)
		var r dsecp.JacobianPoint
		for b.Loop() {
			dsecp.ScalarBaseMultNonConst(&k, &r)
		}
	})
	b.Run("mult/decred-to-affine", func(b *testing.B) {
		var k dsecp.ModNScalar
		k.SetBytes(&scalar)
		var r, a dsecp.JacobianPoint
		dsecp.ScalarBaseMultNonConst(&k, &r)
		for b.Loop() {
			a = r
			a.ToAffine()
		}
	})
	// Key derivation.
	b.Run("kdf/packet-keys-128", func(b *testing.B) { // chosen: four blocks of one HMAC state
		var s [SecretSize]byte
		for b.Loop() {
			deriveKeys(&s)
		}
	})
	b.Run("kdf/hkdf-sha256-96", func(b *testing.B) {
		for b.Loop() {
			hkdf.Key(sha256.New, key[:], nil, keysLabel, 96)
		}
	})
	b.Run("kdf/hkdf-sha256-3x32", func(b *testing.B) {
		for b.Loop() {
			for _, l := range []string{"h", "p", "t"} {
				hkdf.Key(sha256.New, key[:], nil, l, 32)
			}
		}
	})
	// The header MAC (over E ‖ β) and the payload layer, as a relayer does them.
	b.Run("mac/header-aead-empty+chacha20-payload", func(b *testing.B) { // chosen since reply blocks
		a, _ := chacha20poly1305.New(key[:])
		tag := a.Seal(nil, zeroNonce[:], nil, pkt[:offMAC])
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			a, _ := chacha20poly1305.New(key[:])
			if _, err := a.Open(nil, zeroNonce[:], tag, pkt[:offMAC]); err != nil {
				b.Fatal(err)
			}
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, pkt[offPayload:])
		}
	})
	b.Run("mac/header-aead-empty+aead-keystream-payload", func(b *testing.B) { // not taken: the layer as ChaCha20-Poly1305's keystream (assembly), a wasted tag
		a, _ := chacha20poly1305.New(key[:])
		tag := a.Seal(nil, zeroNonce[:], nil, pkt[:offMAC])
		zeros := make([]byte, PayloadSize)
		ks := make([]byte, PayloadSize+16)
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			a, _ := chacha20poly1305.New(key[:])
			if _, err := a.Open(nil, zeroNonce[:], tag, pkt[:offMAC]); err != nil {
				b.Fatal(err)
			}
			p, _ := chacha20poly1305.New(key[:])
			p.Seal(ks[:0], zeroNonce[:], zeros, nil)
			subtle.XORBytes(dst, pkt[offPayload:], ks[:PayloadSize])
		}
	})
	b.Run("mac/header-poly1305+chacha20-payload", func(b *testing.B) {
		var tag [16]byte
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			poly1305.Sum(&tag, pkt[:offMAC], &key)
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, pkt[offPayload:])
		}
	})
	// The layout before reply blocks: one MAC over the whole packet, and the payload layer.
	b.Run("mac/chacha20poly1305-open", func(b *testing.B) { // chosen before reply blocks: MAC + payload layer
		a, _ := chacha20poly1305.New(key[:])
		ct := a.Seal(nil, zeroNonce[:], pkt[offPayload:], pkt[:offMAC])
		dst := make([]byte, len(ct))
		for b.Loop() {
			a, _ := chacha20poly1305.New(key[:])
			if _, err := a.Open(dst[:0], zeroNonce[:], ct, pkt[:offMAC]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mac/poly1305+chacha20-payload", func(b *testing.B) {
		var tag [16]byte
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			poly1305.Sum(&tag, pkt, &key)
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, pkt[offPayload:])
		}
	})
	b.Run("mac/hmac-sha256+chacha20-payload", func(b *testing.B) {
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			h := hmac.New(sha256.New, key[:])
			h.Write(pkt)
			h.Sum(nil)
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, pkt[offPayload:])
		}
	})
	b.Run("mac/blake2b-keyed+chacha20-payload", func(b *testing.B) {
		dst := make([]byte, PayloadSize)
		for b.Loop() {
			h, _ := blake2b.New256(key[:])
			h.Write(pkt)
			h.Sum(nil)
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, pkt[offPayload:])
		}
	})
	b.Run("stream/chacha20-routing", func(b *testing.B) {
		dst := make([]byte, streamSize)
		for b.Loop() {
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
			c.XORKeyStream(dst, dst)
		}
	})
	// Classic Sphinx blinding: the hop also computes the next ephemeral key
	// b·E with b = H(E ‖ s). This is Peel plus that one multiplication, an
	// estimate of a two-multiplication hop with the same symmetric work.
	b.Run("hop/peel-plus-blinding", func(b *testing.B) {
		pkt, _ := build(b, rand, nodes, Message{Text: make([]byte, MaxMessageSize)})
		ex := new(big.Int).SetBytes(pkt[1:33])
		ey := new(big.Int).SetBytes(pkt[33:65])
		for b.Loop() {
			p, err := Peel(nodes[0].priv, pkt, t0, fresh{})
			if err != nil {
				b.Fatal(err)
			}
			blind := sha256.Sum256(append(pkt[:EphemeralKeySize:EphemeralKeySize], p.Secret[:]...))
			gsecp.S256().ScalarMult(ex, ey, blind[:])
		}
	})
}
