package kdf

import (
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

func FuzzHMAC32(f *testing.F) {
	f.Add([]byte(""), []byte(""))
	f.Add([]byte("key"), []byte("message"))
	f.Add(make([]byte, 32), make([]byte, 64))
	f.Fuzz(func(t *testing.T, key, msg []byte) {
		if len(key) > MaxKey || len(msg) > MaxMsg {
			return
		}
		m := hmac.New(sha256.New, key)
		m.Write(msg)
		want := m.Sum(nil)
		if got := HMAC32(key, msg); string(got[:]) != string(want) {
			t.Fatalf("HMAC32(%x, %x) = %x, want %x", key, msg, got, want)
		}
	})
}

func TestHMAC32AllSizes(t *testing.T) {
	for k := 0; k <= MaxKey; k++ {
		for m := 0; m <= MaxMsg; m++ {
			key, msg := make([]byte, k), make([]byte, m)
			for i := range key {
				key[i] = byte(i*7 + k)
			}
			for i := range msg {
				msg[i] = byte(i*13 + m)
			}
			h := hmac.New(sha256.New, key)
			h.Write(msg)
			if got := HMAC32(key, msg); string(got[:]) != string(h.Sum(nil)) {
				t.Fatalf("key %d bytes, msg %d bytes: mismatch", k, m)
			}
		}
	}
}

func TestHMAC32DoesNotAllocate(t *testing.T) {
	key, msg := make([]byte, 32), make([]byte, 40)
	if n := testing.AllocsPerRun(100, func() { HMAC32(key, msg) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}
