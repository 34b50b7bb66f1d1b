package networks_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// devChain starts a dev chain (the simulated backend over JSON-RPC) with its defaults and the
// given accounts funded, and a read-only RPC connection to it.
func devChain(t *testing.T, cfg devchain.Config, funded ...common.Address) (*devchain.Chain, *chain.RPC) {
	t.Helper()
	cfg.Logger = quiet
	cfg.Alloc = map[common.Address]*big.Int{}
	for _, a := range funded {
		cfg.Alloc[a] = ether(100)
	}
	c, err := devchain.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rpc, err := chain.DialRPC(t.Context(), c.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rpc.Close)
	return c, rpc
}

// TestLocalIsTheDevChain: the shipped local network is what a dev chain started with its
// defaults deploys (as relayd cluster and relayd devchain do): Verify accepts it; and a dev
// chain started with another closure period is not local.
func TestLocalIsTheDevChain(t *testing.T) {
	local, err := networks.Lookup("local", "")
	if err != nil {
		t.Fatal(err)
	}
	c, rpc := devChain(t, devchain.Config{})
	if c.ChannelsAddress() != local.Channels || c.TokenAddress() != local.Token {
		t.Fatalf("dev chain deployed token %s, channels %s; local says %s, %s", c.TokenAddress(), c.ChannelsAddress(), local.Token, local.Channels)
	}
	if err := networks.Verify(t.Context(), rpc, local); err != nil {
		t.Fatalf("Verify(local) on a default dev chain: %v", err)
	}
	_, rpc2 := devChain(t, devchain.Config{ClosurePeriod: 2 * time.Minute})
	var me *networks.MismatchError
	if err := networks.Verify(t.Context(), rpc2, local); !errors.As(err, &me) || me.Field != "closurePeriod" {
		t.Fatalf("Verify(local) on a dev chain with a 2-minute closure period: %v", err)
	}
}

// TestVerify deploys a network on a dev chain with chain.Deploy (beside the dev chain's own
// contracts) and checks that Verify accepts its entry, and refuses, naming the field, an entry
// that disagrees with the chain in each way.
func TestVerify(t *testing.T) {
	key, _ := crypto.GenerateKey()
	c, rpc := devChain(t, devchain.Config{}, crypto.PubkeyToAddress(key.PublicKey))
	half := must(tickets.ParseWinProb("0.5"))
	d, err := chain.Deploy(t.Context(), rpc, key, 2*time.Hour, ether(1000), chain.WithMinWinProb(half))
	if err != nil {
		t.Fatal(err)
	}
	good := networks.Network{Name: "mine", ChainID: devchain.ChainID, Token: d.Token, Channels: d.Channels, StartBlock: d.Block,
		MinWinProb: half, ClosurePeriod: 2 * time.Hour}
	if err := networks.Verify(t.Context(), rpc, good); err != nil {
		t.Fatalf("Verify of the deployed network: %v", err)
	}

	for _, tt := range []struct {
		name   string
		change func(*networks.Network)
		fields []string // the MismatchErrors' fields, in order
		noCode bool     // the error matches chain.ErrNoContract
		says   string
	}{
		{"another chain id", func(n *networks.Network) { n.ChainID = 5 }, []string{"chainId"}, false, "the network file says 5, the chain says 1337"},
		{"no code at the channels address", func(n *networks.Network) { n.Channels = common.HexToAddress("0x42") }, []string{"channels"}, true, "no contract at address"},
		{"the token's address as the channels'", func(n *networks.Network) { n.Channels = c.TokenAddress() }, []string{"channels"}, true, "no token() view"},
		{"another token", func(n *networks.Network) { n.Token = c.TokenAddress() }, []string{"token"}, false, "token() is " + d.Token.Hex()},
		{"another closure period and minimum", func(n *networks.Network) { n.ClosurePeriod, n.MinWinProb = time.Hour, tickets.MaxWinProb },
			[]string{"closurePeriod", "minWinProb"}, false, "the network file says 1h, the chain says 2h"},
		{"a start block past the head", func(n *networks.Network) { n.StartBlock = 1 << 40 }, []string{"startBlock"}, false, "still syncing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := good
			tt.change(&n)
			err := networks.Verify(t.Context(), rpc, n)
			if !errors.Is(err, networks.ErrMismatch) {
				t.Fatalf("Verify: %v, want ErrMismatch", err)
			}
			var fields []string
			for _, e := range unjoin(err) {
				var me *networks.MismatchError
				if !errors.As(e, &me) {
					t.Fatalf("Verify: %v is not a *MismatchError", e)
				}
				fields = append(fields, me.Field)
			}
			if strings.Join(fields, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("Verify: fields %v, want %v (%v)", fields, tt.fields, err)
			}
			if errors.Is(err, chain.ErrNoContract) != tt.noCode || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Verify: %q; want ErrNoContract %v and it to say %q", err, tt.noCode, tt.says)
			}
		})
	}

	t.Run("an invalid entry", func(t *testing.T) {
		n := good
		n.ClosurePeriod = 0
		if err := networks.Verify(t.Context(), rpc, n); !errors.Is(err, networks.ErrBadNetwork) || errors.Is(err, networks.ErrMismatch) {
			t.Fatalf("Verify: %v, want ErrBadNetwork", err)
		}
	})
	t.Run("a provider that is down", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		down, err := chain.DialRPC(t.Context(), "http://"+addr+"/v3/SECRETKEY")
		if err != nil {
			t.Fatal(err)
		}
		defer down.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		err = networks.Verify(ctx, down, good)
		if !errors.Is(err, chain.ErrProviderUnavailable) || errors.Is(err, networks.ErrMismatch) || strings.Contains(err.Error(), "SECRETKEY") {
			t.Fatalf("Verify on a closed port: %v, want ErrProviderUnavailable without the URL's path", err)
		}
	})
}

// unjoin returns the errors errors.Join joined, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestDeployWithToken: chain.Deploy with an existing ERC-20 deploys only the channels contract,
// for that token; an address without an ERC-20 is refused before anything is sent.
func TestDeployWithToken(t *testing.T) {
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	c, rpc := devChain(t, devchain.Config{}, from)
	for _, bad := range []common.Address{common.HexToAddress("0x42"), c.ChannelsAddress()} {
		_, err := chain.Deploy(t.Context(), rpc, key, time.Hour, nil, chain.WithToken(bad))
		if !errors.Is(err, chain.ErrNoContract) {
			t.Fatalf("Deploy for token %s: %v, want ErrNoContract", bad, err)
		}
	}
	if nonce := must(rpc.PendingNonceAt(t.Context(), from)); nonce != 0 {
		t.Fatalf("refused deploys sent %d transactions", nonce)
	}
	d, err := chain.Deploy(t.Context(), rpc, key, time.Hour, nil, chain.WithToken(c.TokenAddress()))
	if err != nil {
		t.Fatal(err)
	}
	if d.Token != c.TokenAddress() || d.Channels != crypto.CreateAddress(from, 0) || d.Block == 0 {
		t.Fatalf("deployment %+v", d)
	}
	n := networks.Network{Name: "shared-token", ChainID: devchain.ChainID, Token: d.Token, Channels: d.Channels, StartBlock: d.Block,
		MinWinProb: tickets.MaxWinProb, ClosurePeriod: time.Hour}
	if err := networks.Verify(t.Context(), rpc, n); err != nil {
		t.Fatal(err)
	}
}
