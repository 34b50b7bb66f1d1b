package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/token"
)

// readEnvFile reads the export lines of an env file as a shell that sources it would.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || !strings.HasPrefix(line, "export ") || strings.ContainsAny(v, " '\"$`") {
			t.Fatalf("env line %q is not a plain export", line)
		}
		vars[k] = v
	}
	return vars
}

// TestDevchainEnvAndFund: the env file of a dev chain configures a node (its RELAYD_* names are
// what config.Parse reads), and relayd devchain fund, with only that environment, funds an
// address on the running chain.
func TestDevchainEnvAndFund(t *testing.T) {
	c, err := devchain.New(t.Context(), devchain.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	envFile := filepath.Join(t.TempDir(), "devchain.env")
	if err := writeEnvFile(envFile, devchainEnv(c)); err != nil {
		t.Fatal(err)
	}
	vars := readEnvFile(t, envFile)
	getenv := func(k string) string { return vars[k] }

	cfg, err := config.Parse([]string{"--apiToken", "S3cret!token", "--password", "p"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != c.RPCURL() || common.HexToAddress(cfg.ChannelsContract) != c.ChannelsAddress() {
		t.Fatalf("sourcing the env file configures provider %q, contract %q", cfg.Provider, cfg.ChannelsContract)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a node configured by the env file: %v", err)
	}

	to := crypto.PubkeyToAddress(mustKey(t).PublicKey)
	var stdout, stderr bytes.Buffer
	if code := fundMain(t.Context(), []string{to.Hex(), "12.5", "0.25"}, getenv, &stdout, &stderr); code != 0 {
		t.Fatalf("fund: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Sent 12.5 ") || !strings.Contains(stdout.String(), " and 0.25 native to "+to.Hex()) {
		t.Fatalf("fund output %q", stdout.String())
	}
	cl, err := chain.Dial(t.Context(), chain.Config{ProviderURL: c.RPCURL(), Key: mustKey(t), Channels: c.ChannelsAddress(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tok, err := cl.TokenBalance(t.Context(), to)
	if err != nil || tok.Cmp(mustAmount(t, "12.5")) != 0 {
		t.Fatalf("token balance %v, %v", tok, err)
	}
	eth, err := ethclient.DialContext(t.Context(), c.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	if nat, err := eth.BalanceAt(t.Context(), to, nil); err != nil || nat.Cmp(mustAmount(t, "0.25")) != 0 {
		t.Fatalf("native balance %v, %v", nat, err)
	}

	// Mistakes name what to fix, and send nothing.
	for _, tt := range []struct {
		args    []string
		env     map[string]string
		mention string
	}{
		{[]string{to.Hex(), "1"}, vars, "<address> <tokens> <native>"},
		{[]string{"16Uiu2HAm", "1", "1"}, vars, "not a 0x chain address"},
		{[]string{to.Hex(), "-1", "1"}, vars, "<tokens>"},
		{[]string{to.Hex(), "1", "1e3"}, vars, "<native>"},
		{[]string{to.Hex(), "0", "0"}, vars, "nothing to send"},
		{[]string{to.Hex(), "1", "1"}, map[string]string{"RELAYD_PROVIDER": c.RPCURL()}, "--channelsContract"},
		{[]string{"--channelsContract", c.TokenAddress().Hex(), to.Hex(), "1", "1"}, vars, "--channelsContract"},
		{[]string{"--channelsContract", common.HexToAddress("0x1234").Hex(), to.Hex(), "1", "1"}, vars, "--channelsContract"},
		{[]string{"--provider", "http://127.0.0.1:1", to.Hex(), "1", "1"}, vars, "--provider"},
		{[]string{"--key", "0x" + strings.Repeat("11", 32), to.Hex(), "1", "1"}, vars, "cannot pay"},
	} {
		var stdout, stderr bytes.Buffer
		env := tt.env
		code := fundMain(t.Context(), tt.args, func(k string) string { return env[k] }, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tt.mention) {
			t.Errorf("fund %v: exit %d, stderr %q; want it to mention %q", tt.args, code, stderr.String(), tt.mention)
		}
	}
	if tok, _ := cl.TokenBalance(t.Context(), to); tok.Cmp(mustAmount(t, "12.5")) != 0 {
		t.Fatalf("a refused fund changed the balance to %v", tok)
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.HexToECDSA("8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustAmount(t *testing.T, v string) *big.Int {
	t.Helper()
	a, err := token.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return a.Big()
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
