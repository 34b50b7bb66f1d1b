package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
)

// TestDeployOnGeth deploys relayd's contracts on `geth --dev` the operator's way, with the
// relayd binary: `relayd deploy` with a hex key file deploys the token and the channels contract
// and writes a networks file; `relayd deploy --token` with a keystore deploys a second channels
// contract for that token and appends it. networks.Lookup reads both entries and
// networks.Verify accepts them against geth, and refuses one that disagrees with the chain.
// Nothing relayd prints holds the deployers' keys.
func TestDeployOnGeth(t *testing.T) {
	url := sharedGeth(t)
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "relayd")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/relayd/relayd/cmd/relayd").CombinedOutput(); err != nil {
		t.Fatalf("go build relayd: %v\n%s", err, out)
	}

	key := must[*ecdsa.PrivateKey](t)(crypto.GenerateKey())
	fundFromDevAccount(t, url, crypto.PubkeyToAddress(key.PublicKey), tokens(10))
	keyHex := hex.EncodeToString(crypto.FromECDSA(key))
	keyFile := filepath.Join(dir, "deployer.key")
	if err := os.WriteFile(keyFile, []byte(keyHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := must[*identity.Identity](t)(identity.Generate())
	fundFromDevAccount(t, url, id.Address(), tokens(10))
	keystore := filepath.Join(dir, "identity.json")
	if err := id.Save(keystore, "e2e-deploy-password", identity.LightScrypt); err != nil {
		t.Fatal(err)
	}
	secrets := []string{keyHex, hex.EncodeToString(crypto.FromECDSA(id.PrivateKey())), "e2e-deploy-password"}
	out := filepath.Join(dir, "networks.json")

	deploy := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"deploy"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		t0 := time.Now()
		err := cmd.Run()
		text := stdout.String() + stderr.String()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Fatalf("relayd deploy printed a secret:\n%s", text)
			}
		}
		if strings.Contains(stderr.String(), `unknown subcommand "deploy"`) {
			t.Fatalf("relayd does not dispatch deploy: cmd/relayd/main.go needs case \"deploy\": return runDeploy(args[1:], os.Stdout, os.Stderr)\n%s", text)
		}
		if err != nil {
			t.Fatalf("relayd deploy %v: %v\n%s", args, err, text)
		}
		t.Logf("relayd deploy %s in %v:\n%s", args[len(args)-1], time.Since(t0).Round(time.Millisecond), stdout.String())
		return text
	}
	deploy(nil, "--provider", url, "--privateKeyFile", keyFile, "--closurePeriod", "2m", "--minWinProb", "0.5",
		"--name", "gethdev", "--out", out)
	first, err := networks.Lookup("gethdev", out)
	if err != nil {
		t.Fatal(err)
	}
	deploy([]string{"RELAYD_PASSWORD=e2e-deploy-password"}, "--provider", url, "--keystore", keystore,
		"--token", first.Token.Hex(), "--name", "gethdev-shared-token", "--out", out)
	second, err := networks.Lookup("gethdev-shared-token", out)
	if err != nil {
		t.Fatal(err)
	}

	rpc := must[*chain.RPC](t)(chain.DialRPC(t.Context(), url))
	defer rpc.Close()
	half := must[uint64](t)(tickets.ParseWinProb("0.5"))
	if first.ChainID != chain.DevChainID || first.ClosurePeriod != 2*time.Minute || first.MinWinProb != half || first.Provider != url {
		t.Fatalf("first network %+v", first)
	}
	if second.Token != first.Token || second.Channels == first.Channels || second.ClosurePeriod != time.Hour || second.MinWinProb != tickets.MaxWinProb {
		t.Fatalf("second network %+v (first %+v)", second, first)
	}
	for _, n := range []networks.Network{first, second} {
		if err := networks.Verify(t.Context(), rpc, n); err != nil {
			t.Fatalf("Verify(%s) on geth: %v", n.Name, err)
		}
	}
	wrong := first
	wrong.Channels = second.Channels // another channels contract: another closure period and minimum
	var me *networks.MismatchError
	if err := networks.Verify(t.Context(), rpc, wrong); !errors.As(err, &me) || me.Field != "closurePeriod" {
		t.Fatalf("Verify of the first network with the second's channels contract: %v", err)
	}
}
