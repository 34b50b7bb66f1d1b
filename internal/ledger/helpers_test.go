package ledger

import (
	"crypto/ecdsa"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

const testChainID = 1337

var testContract = common.HexToAddress("0x00000000000000000000000000000000000000cc")

// oneToken is 10^18, the token's unit.
var oneToken = func() uint256.Int { var x uint256.Int; x.SetFromDecimal("1000000000000000000"); return x }()

func newKeyPair(t testing.TB) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey)
}
