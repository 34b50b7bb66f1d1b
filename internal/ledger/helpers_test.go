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

// acknowledge accepts tickets 1 … n from source at PricePerHop on the open channel and
// acknowledges each with its response, as a relayer does for n relayed packets.
func (e *ledgerEnv) acknowledge(t *testing.T, n uint64) {
	t.Helper()
	for i := uint64(1); i <= n; i++ {
		tk := e.incoming(t, i, PricePerHop)
		if err := e.l.AcceptTicket(e.sourceAddr, &tk, false); err != nil {
			t.Fatal(err)
		}
		if err := e.l.Acknowledge(t.Context(), []AckedTicket{{Source: e.sourceAddr, Ticket: tk, Response: responseFor(i)}}); err != nil {
			t.Fatal(err)
		}
	}
}
