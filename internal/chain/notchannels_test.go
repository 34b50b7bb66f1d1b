package chain_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/wait"
)

// TestDialNotChannels: a channels address that holds a contract other than RelayChannels fails
// Dial with ErrNoContract and a message that says so, naming the view it lacks, and, when the
// contract is a token, that the token's address was given.
func TestDialNotChannels(t *testing.T) {
	e := newEnv(t)
	key, _ := crypto.GenerateKey()
	stub := deployStub(t, e)
	for _, tt := range []struct {
		name    string
		address common.Address
		want    []string
	}{
		{"the token", e.chain.TokenAddress(), []string{
			e.chain.TokenAddress().Hex() + " on chain 1337 is a contract, but it is not a RelayChannels contract: it has no token()",
			"it is the token RELAY: did you pass the token's address instead of the RelayChannels contract's?"}},
		{"a contract that answers nothing", stub, []string{
			stub.Hex() + " on chain 1337 is a contract, but it is not a RelayChannels contract: it has no token()",
			"did you pass the token's or another contract's address"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chain.Dial(t.Context(), chain.Config{ProviderURL: e.chain.RPCURL(), Key: key, Channels: tt.address})
			if !errors.Is(err, chain.ErrNoContract) {
				t.Fatalf("Dial: %v, want ErrNoContract", err)
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Dial: %q\nwant it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "no contract at address") {
				t.Errorf("Dial: %q says there is no contract where there is one", err)
			}
		})
	}
	// Without code at the address the error says there is none.
	_, err := chain.Dial(t.Context(), chain.Config{ProviderURL: e.chain.RPCURL(), Key: key, Channels: common.Address{0x42}})
	if !errors.Is(err, chain.ErrNoContract) || !strings.Contains(err.Error(), "no contract at address") {
		t.Fatalf("no code: %v", err)
	}
}

// deployStub deploys, from the dev chain's deployer, a contract whose code is one STOP: every
// call to it succeeds and returns nothing.
func deployStub(t *testing.T, e *env) common.Address {
	t.Helper()
	eth, err := ethclient.DialContext(t.Context(), e.chain.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	key := e.chain.DeployerKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := eth.PendingNonceAt(t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	// CODECOPY the byte after these 12 to memory 0 and RETURN it as the code: 0x00, STOP.
	initCode := common.FromHex("0x6001600c60003960016000f3" + "00")
	tip := big.NewInt(1e9)
	head, err := eth.HeaderByNumber(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(int64(e.chain.ChainID()))), &types.DynamicFeeTx{
		ChainID: big.NewInt(int64(e.chain.ChainID())), Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip), Gas: 100_000, Data: initCode,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eth.SendTransaction(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	addr := crypto.CreateAddress(from, nonce)
	wait.For(t, func() bool {
		code, err := eth.CodeAt(t.Context(), addr, nil)
		return err == nil && len(code) == 1
	}, 10*time.Second, "the stub contract is deployed")
	return addr
}
