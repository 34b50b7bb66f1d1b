package node

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/networks"
)

// TestNetworkEntryNamesTheContracts: with --provider and no --channelsContract the node takes
// the contracts of --network's entry (the shipped `local` one names the dev chain's) and starts;
// an entry the chain disagrees with (another chain id) or an unknown network stops it before it
// starts, naming --network.
func TestNetworkEntryNamesTheContracts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain")
	}
	ch := startDevChain(t)
	cfg := fundedNodeConfig(t, ch, tokens(10))
	cfg.ChannelsContract, cfg.Network = "", "local"
	n := startNode(t, cfg)
	if got := n.chain.client.ChannelsAddress(); got != ch.ChannelsAddress() {
		t.Fatalf("the node uses channels contract %s, the dev chain's is %s", got, ch.ChannelsAddress())
	}

	local, err := networks.Lookup("local", "")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "networks.json")
	elsewhere := local
	elsewhere.Name, elsewhere.ChainID = "elsewhere", local.ChainID+1
	if err := networks.Append(file, elsewhere); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ network, want string }{
		{"elsewhere", "chain"},
		{"nosuch", "local"}, // the known networks are listed
	} {
		bad := fundedNodeConfig(t, ch, tokens(10))
		bad.ChannelsContract, bad.Network, bad.NetworksFile = "", tc.network, file
		_, err := New(bad, io.Discard, Options{})
		var se *StartupError
		if !errors.As(err, &se) || se.Flag != "network" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--network %s: %v, want a --network error mentioning %q", tc.network, err, tc.want)
		}
	}
}
