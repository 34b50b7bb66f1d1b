package kdf

import (
	"crypto/hkdf"
	"crypto/sha256"
	"testing"
)

// derive is HKDF-SHA256(secret, salt empty, info) for blocks×32 bytes through this package.
func derive(secret []byte, info string, blocks int) []byte {
	prk := Extract(secret)
	e := NewExpander(&prk)
	var out []byte
	for range blocks {
		b := e.Next(info)
		out = append(out, b[:]...)
	}
	return out
}

func FuzzAgainstCryptoHKDF(f *testing.F) {
	f.Add([]byte(""), "", uint8(1))
	f.Add(make([]byte, 32), "relayd packet keys", uint8(3))
	f.Fuzz(func(t *testing.T, secret []byte, info string, blocks uint8) {
		n := int(blocks%4) + 1
		if len(info) > 40 {
			return
		}
		want, err := hkdf.Key(sha256.New, secret, nil, info, 32*n)
		if err != nil {
			t.Fatal(err)
		}
		if got := derive(secret, info, n); string(got) != string(want) {
			t.Fatalf("HKDF(%x, %q, %d blocks) = %x, want %x", secret, info, n, got, want)
		}
	})
}

func TestAgainstCryptoHKDF(t *testing.T) {
	for size := 0; size <= 64; size++ {
		secret := make([]byte, size)
		for i := range secret {
			secret[i] = byte(i*7 + size)
		}
		for _, info := range []string{"", "relayd por own", "relayd packet keys"} {
			want, _ := hkdf.Key(sha256.New, secret, nil, info, 96)
			if got := derive(secret, info, 3); string(got) != string(want) {
				t.Fatalf("secret %d bytes, info %q: mismatch", size, info)
			}
		}
	}
	// The pooled extract state carries nothing from one secret to the next.
	a := Extract([]byte("one"))
	Extract([]byte("two"))
	if b := Extract([]byte("one")); a != b {
		t.Fatal("Extract depends on an earlier call")
	}
}
