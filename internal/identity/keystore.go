package identity

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ethereum/go-ethereum/accounts/keystore"
)

// Bounds of the key-derivation parameters Load accepts: those of StandardScrypt and of
// go-ethereum's PBKDF2 keystores, with room. A keystore asking for more (a corrupted or
// hostile file) would take the node's memory or minutes to open.
const (
	maxScryptN     = 1 << 18 // StandardScrypt's; 256 MiB with r = 8
	maxScryptR     = 8
	maxScryptP     = 16 // and n·r·p at most StandardScrypt's n·r: a second or so
	maxPBKDF2Iters = 1 << 20
	derivedKeyLen  = 32 // AES-128 key ‖ MAC key, what go-ethereum derives and reads
)

// decryptKey is keystore.DecryptKey for untrusted bytes. go-ethereum trusts a keystore's
// fields: a kdfparams entry of the wrong type or missing panics, a short dklen panics, and the
// KDF cost is whatever the file says. decryptKey checks those first and turns any remaining
// panic into an error, so that Load reports a bad file as ErrBadKeystore.
func decryptKey(data []byte, password string) (k *keystore.Key, err error) {
	if err := checkKDF(data); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			k, err = nil, fmt.Errorf("malformed keystore: %v", r)
		}
	}()
	return keystore.DecryptKey(data, password)
}

// checkKDF checks what DecryptKey reads unchecked: the crypto section's KDF parameters and
// the cipher's IV. It decodes the file as DecryptKey does (both of its layouts name the
// section "crypto", matched without case by encoding/json).
func checkKDF(data []byte) error {
	var f struct {
		Crypto keystore.CryptoJSON `json:"crypto"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	c := f.Crypto
	p := c.KDFParams
	if salt, ok := p["salt"].(string); !ok {
		return fmt.Errorf("kdfparams: no salt")
	} else if _, err := hex.DecodeString(salt); err != nil {
		return fmt.Errorf("kdfparams: salt: %w", err)
	}
	if n, ok := intParam(p, "dklen", derivedKeyLen, derivedKeyLen); !ok {
		return fmt.Errorf("kdfparams: dklen %v, want %d", n, derivedKeyLen)
	}
	switch c.KDF {
	case "scrypt":
		n, okN := intParam(p, "n", 2, maxScryptN)
		r, okR := intParam(p, "r", 1, maxScryptR)
		pp, okP := intParam(p, "p", 1, maxScryptP)
		if !okN || n&(n-1) != 0 || !okR || !okP || n*r*pp > maxScryptN*maxScryptR {
			return fmt.Errorf("kdfparams: scrypt n, r, p %v, %v, %v out of range", p["n"], p["r"], p["p"])
		}
	case "pbkdf2":
		if _, ok := intParam(p, "c", 1, maxPBKDF2Iters); !ok {
			return fmt.Errorf("kdfparams: pbkdf2 c %v out of range", p["c"])
		}
		if _, ok := p["prf"].(string); !ok {
			return fmt.Errorf("kdfparams: no prf")
		}
	default:
		return fmt.Errorf("unsupported kdf %q", c.KDF)
	}
	if iv, err := hex.DecodeString(c.CipherParams.IV); err != nil || len(iv) != 16 {
		return fmt.Errorf("cipherparams: iv is not 16 bytes of hex")
	}
	return nil
}

// intParam returns kdfparams[name] when it is a whole number in [lo, hi].
func intParam(p map[string]any, name string, lo, hi int) (int, bool) {
	v, ok := p[name].(float64)
	if !ok || v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, false
	}
	return int(v), true
}
