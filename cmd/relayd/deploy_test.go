package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
)

// deployRun runs relayd deploy with args and no environment, and returns its exit code and
// what it printed.
func deployRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code := deployMain(ctx, args, func(k string) string { return env[k] }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestDeploy runs `relayd deploy` against a dev chain: with a hex key file it deploys the token
// and the channels contract and creates the networks file; with a keystore and --token it
// deploys a second channels contract for the first token and appends it. Lookup and Verify
// accept both entries; nothing printed holds a key or the provider URL's query.
func TestDeploy(t *testing.T) {
	dir := t.TempDir()
	hexKey, _ := crypto.GenerateKey()
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	pauper, _ := crypto.GenerateKey()
	c, err := devchain.New(t.Context(), devchain.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Alloc: map[common.Address]*big.Int{
		crypto.PubkeyToAddress(hexKey.PublicKey): big.NewInt(1e18), id.Address(): big.NewInt(1e18),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	keyHex := hex.EncodeToString(crypto.FromECDSA(hexKey))
	keyFile := filepath.Join(dir, "deployer.key")
	write(t, keyFile, "0x"+keyHex+"\n", 0o600)
	keystore := filepath.Join(dir, "identity.json")
	if err := id.Save(keystore, "pass-word-1", identity.LightScrypt); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(dir, "password")
	write(t, pwFile, "pass-word-1\n", 0o600)
	out := filepath.Join(dir, "networks.json")
	secretURL := c.RPCURL() + "/?apikey=SECRETKEY"
	noSecret := func(what, text string) {
		t.Helper()
		for _, s := range []string{keyHex, "SECRETKEY", "pass-word-1", hex.EncodeToString(crypto.FromECDSA(id.PrivateKey()))} {
			if strings.Contains(text, s) {
				t.Fatalf("%s holds a secret (%.12s…):\n%s", what, s, text)
			}
		}
	}

	code, stdout, stderr := deployRun(t, nil, "--provider", secretURL, "--privateKeyFile", keyFile, "--name", "first",
		"--out", out, "--closurePeriod", "2m", "--minWinProb", "0.25", "--description", "the first")
	noSecret("output", stdout+stderr)
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Log(stdout)
	first, err := networks.Lookup("first", out)
	if err != nil {
		t.Fatal(err)
	}
	if first.ChainID != devchain.ChainID || first.ClosurePeriod != 2*time.Minute || first.MinWinProb != must(tickets.ParseWinProb("0.25")) ||
		first.Provider != "" || first.Description != "the first" || first.Token == c.TokenAddress() {
		t.Fatalf("first network %+v", first)
	}
	rpc, err := chain.DialRPC(t.Context(), c.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	if err := networks.Verify(t.Context(), rpc, first); err != nil {
		t.Fatalf("Verify(first): %v", err)
	}
	data, _ := os.ReadFile(out)
	noSecret("the networks file", string(data))

	code, stdout, stderr = deployRun(t, map[string]string{"RELAYD_PROVIDER": c.RPCURL()}, "--keystore", keystore, "--passwordFile", pwFile,
		"--token", first.Token.Hex(), "--name", "second", "--out", out)
	noSecret("output", stdout+stderr)
	if code != 0 {
		t.Fatalf("deploy --token: exit %d\n%s%s", code, stdout, stderr)
	}
	second, err := networks.Lookup("second", out)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token != first.Token || second.Channels == first.Channels || second.Provider != c.RPCURL() || second.ClosurePeriod != time.Hour {
		t.Fatalf("second network %+v (first %+v)", second, first)
	}
	if err := networks.Verify(t.Context(), rpc, second); err != nil {
		t.Fatalf("Verify(second): %v", err)
	}
	if _, err := networks.Lookup("first", out); err != nil {
		t.Fatalf("the first network after the second was appended: %v", err)
	}

	// Usage errors are found before anything is sent (exit 2); a deployer without gas money is a
	// runtime failure (exit 1) that names its address.
	worldReadable := filepath.Join(dir, "open.key")
	write(t, worldReadable, keyHex, 0o644)
	pauperFile := filepath.Join(dir, "pauper.key")
	write(t, pauperFile, hex.EncodeToString(crypto.FromECDSA(pauper)), 0o600)
	base := []string{"--provider", secretURL, "--out", out}
	for _, tt := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a name the file holds", []string{"--privateKeyFile", keyFile, "--name", "first"}, 2, `already defines a network "first"`},
		{"no name", []string{"--privateKeyFile", keyFile}, 2, "--name and --out are required"},
		{"a bad name", []string{"--privateKeyFile", keyFile, "--name", "Main Net"}, 2, "--name"},
		{"no key", []string{"--name", "third"}, 2, "give the deployer's key"},
		{"two keys", []string{"--name", "third", "--privateKeyFile", keyFile, "--keystore", keystore}, 2, "one of --keystore and --privateKeyFile"},
		{"a key file others read", []string{"--name", "third", "--privateKeyFile", worldReadable}, 2, "accessible to other users"},
		{"a keystore without password", []string{"--name", "third", "--keystore", keystore}, 2, "needs its password"},
		{"a bad probability", []string{"--name", "third", "--privateKeyFile", keyFile, "--minWinProb", "2"}, 2, "--minWinProb"},
		{"a fractional closure period", []string{"--name", "third", "--privateKeyFile", keyFile, "--closurePeriod", "1.5s"}, 2, "whole number of seconds"},
		{"supply with token", []string{"--name", "third", "--privateKeyFile", keyFile, "--token", first.Token.Hex(), "--supply", "5"}, 2, "--supply"},
		{"no gas money", []string{"--name", "third", "--privateKeyFile", pauperFile}, 1, crypto.PubkeyToAddress(pauper.PublicKey).Hex() + " holds no native currency"},
		{"a token without code", []string{"--name", "third", "--privateKeyFile", keyFile, "--token", "0x0000000000000000000000000000000000000042"}, 1, "no contract at address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := deployRun(t, nil, append(append([]string{}, base...), tt.args...)...)
			noSecret("output", stdout+stderr)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Fatalf("exit %d, want %d saying %q:\n%s%s", code, tt.code, tt.says, stdout, stderr)
			}
		})
	}
	if nets, err := networks.Load(out); err != nil || len(nets) != 2 {
		t.Fatalf("after the refused deploys the file holds %+v (%v), want the two networks", nets, err)
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDeployUsage: -h prints the usage and every flag and exits 0; an argument that is no flag
// is a usage error.
func TestDeployUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runDeploy([]string{"-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("deploy -h: exit %d", code)
	}
	for _, want := range []string{"usage: relayd deploy", "-provider", "-keystore", "-privateKeyFile", "-token", "-name", "-out", "-closurePeriod", "-minWinProb"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("deploy -h lacks %q:\n%s", want, stderr.String())
		}
	}
	if code := runDeploy([]string{"extra"}, &stdout, &stderr); code != 2 {
		t.Fatalf("deploy extra: exit %d, want 2", code)
	}
}
