//go:build cgo && !gofuzz

package packet

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"math/big"
	"testing"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"
	gsecp "github.com/ethereum/go-ethereum/crypto/secp256k1"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/poly1305"
)

func BenchmarkPrimitives(b *testing.B) {
	priv, _ := dsecp.GeneratePrivateKey()
	pub := priv.PubKey()
	comp := pub.SerializeCompressed()
	unc := pub.SerializeUncompressed()
	x, y := gsecp.DecompressPubkey(comp)
	scalar := priv.Serialize()
	msg := make([]byte, 1100)
	key := [32]byte{1}
	b.Run("geth-scalarmult", func(b *testing.B) {
		for b.Loop() {
			gsecp.S256().ScalarMult(x, y, scalar)
		}
	})
	b.Run("geth-decompress", func(b *testing.B) {
		for b.Loop() {
			gsecp.DecompressPubkey(comp)
		}
	})
	b.Run("decred-parse-compressed", func(b *testing.B) {
		for b.Loop() {
			dsecp.ParsePubKey(comp)
		}
	})
	b.Run("decred-parse-uncompressed+bigint", func(b *testing.B) {
		for b.Loop() {
			p, _ := dsecp.ParsePubKey(unc)
			new(big.Int).SetBytes(unc[1:33])
			new(big.Int).SetBytes(unc[33:])
			_ = p
		}
	})
	b.Run("geth-isoncurve", func(b *testing.B) {
		for b.Loop() {
			gsecp.S256().IsOnCurve(x, y)
		}
	})
	b.Run("decred-ecdh", func(b *testing.B) {
		for b.Loop() {
			dsecp.GenerateSharedSecret(priv, pub)
		}
	})
	b.Run("decred-basemult+compress", func(b *testing.B) {
		var k dsecp.ModNScalar
		k.SetByteSlice(scalar)
		for b.Loop() {
			var j dsecp.JacobianPoint
			dsecp.ScalarBaseMultNonConst(&k, &j)
			j.ToAffine()
			dsecp.NewPublicKey(&j.X, &j.Y).SerializeCompressed()
		}
	})
	b.Run("geth-basemult", func(b *testing.B) {
		for b.Loop() {
			gsecp.S256().ScalarBaseMult(scalar)
		}
	})
	b.Run("hkdf-3x32", func(b *testing.B) {
		for b.Loop() {
			prk, _ := hkdf.Extract(sha256.New, key[:], nil)
			hkdf.Expand(sha256.New, prk, "relayd packet header", 32)
			hkdf.Expand(sha256.New, prk, "relayd packet payload", 32)
			hkdf.Expand(sha256.New, prk, "relayd packet replay", 32)
		}
	})
	b.Run("hkdf-1x96", func(b *testing.B) {
		for b.Loop() {
			hkdf.Key(sha256.New, key[:], nil, "relayd packet keys", 96)
		}
	})
	b.Run("sha256-99", func(b *testing.B) {
		for b.Loop() {
			sha256.Sum256(msg[:99])
		}
	})
	b.Run("chacha20-675", func(b *testing.B) {
		buf := make([]byte, 675)
		for b.Loop() {
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, 12))
			c.XORKeyStream(buf, buf)
		}
	})
	b.Run("chacha20-1100", func(b *testing.B) {
		buf := make([]byte, 1100)
		for b.Loop() {
			c, _ := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, 12))
			c.XORKeyStream(buf, buf)
		}
	})
	b.Run("poly1305-1100", func(b *testing.B) {
		var out [16]byte
		for b.Loop() {
			poly1305.Sum(&out, msg, &key)
		}
	})
	b.Run("hmacsha256-1100", func(b *testing.B) {
		for b.Loop() {
			h := hmac.New(sha256.New, key[:])
			h.Write(msg)
			h.Sum(nil)
		}
	})
	b.Run("blake2b-keyed-1100", func(b *testing.B) {
		for b.Loop() {
			h, _ := blake2b.New256(key[:])
			h.Write(msg)
			h.Sum(nil)
		}
	})
	b.Run("aead-open-ad600-ct500", func(b *testing.B) {
		a, _ := chacha20poly1305.New(key[:])
		nonce := make([]byte, 12)
		ct := a.Seal(nil, nonce, msg[:500], msg[500:1100])
		dst := make([]byte, 600)
		for b.Loop() {
			a, _ := chacha20poly1305.New(key[:])
			if _, err := a.Open(dst[:0], nonce, ct, msg[500:1100]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("aead-open-ad33-ct1067", func(b *testing.B) {
		a, _ := chacha20poly1305.New(key[:])
		nonce := make([]byte, 12)
		ct := a.Seal(nil, nonce, msg[:1067], msg[1067:])
		dst := make([]byte, 1100)
		for b.Loop() {
			a, _ := chacha20poly1305.New(key[:])
			if _, err := a.Open(dst[:0], nonce, ct, msg[1067:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
