package networks_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
)

// TestJoin: a node without --channelsContract takes the network's entry, checked on its chain;
// with one and a networks file the two must agree; with one and no file nothing is checked.
func TestJoin(t *testing.T) {
	c, _ := devChain(t, devchain.Config{})
	other, _ := devChain(t, devchain.Config{ClosurePeriod: time.Hour})
	local := networks.Shipped()[0]
	own := networks.Network{Name: "own", ChainID: devchain.ChainID, Token: c.TokenAddress(), Channels: c.ChannelsAddress(),
		MinWinProb: tickets.MaxWinProb, ClosurePeriod: time.Minute, StartBlock: 1}
	file := writeFile(t, own)

	n, err := networks.Join(t.Context(), networks.JoinConfig{Provider: c.RPCURL(), Name: "local"})
	if err != nil || n.Channels != local.Channels {
		t.Fatalf("Join(local) on a default dev chain: %+v %v", n, err)
	}
	n, err = networks.Join(t.Context(), networks.JoinConfig{Provider: c.RPCURL(), Name: "own", File: file, Channels: c.ChannelsAddress().Hex()})
	if err != nil || n.StartBlock != 1 {
		t.Fatalf("Join(own) with its channels contract: %+v %v", n, err)
	}
	// The dev chain with a 1-hour closure period is not local, however it is named.
	if _, err := networks.Join(t.Context(), networks.JoinConfig{Provider: other.RPCURL(), Name: "local"}); !errors.Is(err, networks.ErrMismatch) {
		t.Fatalf("Join(local) on another dev chain: %v", err)
	}
	var fe *networks.FieldError
	if _, err := networks.Join(t.Context(), networks.JoinConfig{Provider: c.RPCURL(), Name: "own", File: file, Channels: "0x0000000000000000000000000000000000000042"}); !errors.As(err, &fe) || fe.Field != "channels" {
		t.Fatalf("Join with a --channelsContract the entry contradicts: %v", err)
	}
	if _, err := networks.Join(t.Context(), networks.JoinConfig{Provider: c.RPCURL(), Name: "nowhere", File: file}); !errors.Is(err, networks.ErrUnknownNetwork) {
		t.Fatalf("Join of an unknown network: %v", err)
	}
	// With --channelsContract and no file nothing is dialled: a dead provider does not matter.
	n, err = networks.Join(t.Context(), networks.JoinConfig{Provider: "http://127.0.0.1:1", Name: "local", Channels: "0x0000000000000000000000000000000000000042"})
	if err != nil || n.Channels != common.HexToAddress("0x42") || n.StartBlock != 0 {
		t.Fatalf("Join with --channelsContract only: %+v %v", n, err)
	}
	if _, err := networks.Join(t.Context(), networks.JoinConfig{Provider: "http://127.0.0.1:1", Name: "local"}); !errors.Is(err, chain.ErrProviderUnavailable) {
		t.Fatalf("Join(local) with a dead provider: %v", err)
	}
}
