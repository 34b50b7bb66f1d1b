package identity

import (
	"crypto/sha256"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestSignMessage: the signature verifies over sha256(prefix + message) with the node's key, for
// any bytes, and a message without the prefix does not verify.
func TestSignMessage(t *testing.T) {
	id, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"hello", "", "\xff\xfe not UTF-8", "  spaced  "} {
		sig, err := id.SignMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := hexutil.Decode(sig)
		if err != nil || len(raw) != 64 {
			t.Fatalf("signature %q", sig)
		}
		digest := sha256.Sum256([]byte(SignMessagePrefix + msg))
		if !crypto.VerifySignature(id.PublicKey(), digest[:], raw) {
			t.Fatalf("%q: signature does not verify", msg)
		}
		bare := sha256.Sum256([]byte(msg))
		if crypto.VerifySignature(id.PublicKey(), bare[:], raw) {
			t.Fatalf("%q: verifies without the prefix", msg)
		}
	}
}
