package identity

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// fuzzScrypt keeps each seed's decryption to microseconds.
var fuzzScrypt = Scrypt{N: 16, P: 1}

// FuzzLoadKeystore feeds arbitrary keystore file bytes to Load (a corrupted or hostile file
// in the data directory): it never panics and never runs away with memory or time, answers
// ErrWrongPassword or ErrBadKeystore for anything it cannot open, and what it opens is a key
// that saves and loads back to the same identity.
func FuzzLoadKeystore(f *testing.F) {
	dir := f.TempDir()
	key, err := crypto.ToECDSA(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		f.Fatal(err)
	}
	id, err := FromKey(key)
	if err != nil {
		f.Fatal(err)
	}
	seedPath := filepath.Join(dir, "seed.json")
	if err := id.Save(seedPath, "pw", fuzzScrypt); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(seedPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(bytes.Replace(valid, []byte(`"version":3`), []byte(`"version":"1"`), 1))
	f.Add(bytes.Replace(valid, []byte(`"kdf":"scrypt"`), []byte(`"kdf":"pbkdf2"`), 1))
	f.Add([]byte(`{"crypto":{"kdf":"scrypt","kdfparams":{}}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))

	f.Fuzz(func(t *testing.T, data []byte) {
		if costly(data) {
			// Legal but slow parameters (up to StandardScrypt's): what Load costs then is
			// not the fuzzer's business; TestLoadRefusesMalformedKDF covers the bounds.
			return
		}
		path := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path, "pw")
		if err != nil {
			if errors.Is(err, ErrWrongPassword) == errors.Is(err, ErrBadKeystore) {
				t.Fatalf("Load: %v, want exactly one of ErrWrongPassword and ErrBadKeystore", err)
			}
			return
		}
		if got.Address() != crypto.PubkeyToAddress(got.PrivateKey().PublicKey) {
			t.Fatal("address is not the key's")
		}
		again := filepath.Join(dir, "again.json")
		os.Remove(again)
		if err := got.Save(again, "pw", fuzzScrypt); err != nil {
			t.Fatal(err)
		}
		back, err := Load(again, "pw")
		if err != nil || back.PeerID() != got.PeerID() || back.Address() != got.Address() {
			t.Fatalf("saved identity does not load back: %v", err)
		}
	})
}

// costly reports whether data asks for more key derivation than LightScrypt.
func costly(data []byte) bool {
	var f struct {
		Crypto struct {
			KDFParams map[string]any `json:"kdfparams"`
		} `json:"crypto"`
	}
	if json.Unmarshal(data, &f) != nil {
		return false
	}
	work := 1.0
	for _, k := range []string{"n", "r", "p", "c"} {
		if v, ok := f.Crypto.KDFParams[k].(float64); ok && v > 1 {
			work *= v
		}
	}
	return work > float64(LightScrypt.N*8*LightScrypt.P)
}

// TestLoadRefusesMalformedKDF: keystores that go-ethereum's DecryptKey would panic on, or
// that would take gigabytes or minutes to open, are ErrBadKeystore at once.
func TestLoadRefusesMalformedKDF(t *testing.T) {
	dir := t.TempDir()
	id, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ok.json")
	if err := id.Save(path, "pw", fuzzScrypt); err != nil {
		t.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(c map[string]any)
	}{
		{"no salt", func(c map[string]any) { delete(c["kdfparams"].(map[string]any), "salt") }},
		{"no n", func(c map[string]any) { delete(c["kdfparams"].(map[string]any), "n") }},
		{"short dklen", func(c map[string]any) { c["kdfparams"].(map[string]any)["dklen"] = 16 }},
		{"n of 2^30", func(c map[string]any) { c["kdfparams"].(map[string]any)["n"] = 1 << 30 }},
		{"p of 2^20", func(c map[string]any) { c["kdfparams"].(map[string]any)["p"] = 1 << 20 }},
		{"n·r·p 16 times StandardScrypt's", func(c map[string]any) {
			c["kdfparams"].(map[string]any)["n"] = 1 << 18
			c["kdfparams"].(map[string]any)["p"] = 16
		}},
		{"pbkdf2 without prf", func(c map[string]any) { c["kdf"] = "pbkdf2"; c["kdfparams"].(map[string]any)["c"] = 1 }},
		{"pbkdf2 c of 2^40", func(c map[string]any) {
			c["kdf"] = "pbkdf2"
			c["kdfparams"].(map[string]any)["c"] = 1 << 40
			c["kdfparams"].(map[string]any)["prf"] = "hmac-sha256"
		}},
		// The MAC does not cover the IV: with the right password this reached cipher.NewCTR.
		{"short iv", func(c map[string]any) { c["cipherparams"] = map[string]any{"iv": "00"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ks map[string]any
			if err := json.Unmarshal(valid, &ks); err != nil {
				t.Fatal(err)
			}
			tt.edit(ks["crypto"].(map[string]any))
			b, err := json.Marshal(ks)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(p, "pw"); !errors.Is(err, ErrBadKeystore) {
				t.Fatalf("Load: %v, want ErrBadKeystore", err)
			}
		})
	}
}
