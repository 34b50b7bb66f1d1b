package chain_test

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/tickets"
)

// TestMinWinProb: the dev chain deploys with the minimum at MaxWinProb (every ticket must win, as
// before the minimum existed); its owner, the deployer, can change it, nobody else can, and a
// value over 56 bits is refused without sending anything.
func TestMinWinProb(t *testing.T) {
	e := newEnv(t)
	owner := e.dial(e.chain.DeployerKey(), e.chain.RPCURL())
	other, _ := e.account("not the owner", nil)
	if got := must[uint64](t)(other.MinWinProb(t.Context())); got != tickets.MaxWinProb {
		t.Fatalf("dev chain minimum %#x, want MaxWinProb", got)
	}
	before := pendingNonce(t, e, other.Address())
	_, err := other.SetMinWinProb(t.Context(), 1)
	var rev *chain.RevertError
	if !errors.As(err, &rev) || rev.Sent {
		t.Fatalf("set by a stranger: %v, want a revert caught before sending", err)
	}
	if _, ok := rev.Decoded.(*contracts.RelayChannelsNotOwner); !ok {
		t.Fatalf("set by a stranger: decoded %T, want NotOwner", rev.Decoded)
	}
	if pendingNonce(t, e, other.Address()) != before {
		t.Fatal("a refused set sent a transaction")
	}
	_, err = owner.SetMinWinProb(t.Context(), tickets.MaxWinProb+1)
	if !errors.As(err, &rev) {
		t.Fatalf("set over 56 bits: %v", err)
	}
	if d, ok := rev.Decoded.(*contracts.RelayChannelsInvalidWinProb); !ok || d.WinProb != tickets.MaxWinProb+1 {
		t.Fatalf("set over 56 bits: decoded %T %+v", rev.Decoded, rev.Decoded)
	}
	want := tickets.MaxWinProb / 100
	if _, err := owner.SetMinWinProb(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	if got := must[uint64](t)(other.MinWinProb(t.Context())); got != want {
		t.Fatalf("minimum %#x after setting %#x", got, want)
	}
}

// TestDeployRefusesBadMinWinProb: a minimum over 56 bits is a configuration error, found before
// anything is sent (the backend is never used).
func TestDeployRefusesBadMinWinProb(t *testing.T) {
	key := must[*ecdsa.PrivateKey](t)(crypto.GenerateKey())
	_, err := chain.Deploy(t.Context(), nil, key, time.Hour, big.NewInt(1), chain.WithMinWinProb(tickets.MaxWinProb+1))
	if !errors.Is(err, chain.ErrBadConfig) {
		t.Fatalf("Deploy with minimum 2^56: %v, want ErrBadConfig", err)
	}
}
