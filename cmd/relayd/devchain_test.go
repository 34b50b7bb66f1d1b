package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
)

// TestDevchainChild is the child process of TestDevchainCommand: it runs `relayd devchain` with
// the arguments in RELAYD_DEVCHAIN_ARGS. Without that variable it does nothing.
func TestDevchainChild(t *testing.T) {
	args, ok := os.LookupEnv("RELAYD_DEVCHAIN_ARGS")
	if !ok {
		t.Skip("child process only")
	}
	os.Exit(devchainMain(strings.Fields(args), os.Stdout, os.Stderr))
}

func TestDevchainCommand(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "devchain.env")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestDevchainChild$")
	cmd.Env = append(os.Environ(), "RELAYD_DEVCHAIN_ARGS=--port 0 --closurePeriod 30s --env "+envFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[0], "RELAY_") {
			vars[f[0]] = f[1]
		}
		if strings.HasPrefix(line, "Wrote ") {
			break
		}
	}
	if vars["RELAY_CHAIN_RPC"] == "" || vars["RELAY_CHANNELS_ADDRESS"] == "" || vars["RELAY_DEVCHAIN_DEPLOYER_KEY"] == "" {
		t.Fatalf("printed %v", vars)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vars {
		if !strings.Contains(string(env), "export "+k+"="+v+"\n") {
			t.Fatalf("env file lacks %s=%s:\n%s", k, v, env)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	eth, err := ethclient.DialContext(ctx, vars["RELAY_CHAIN_RPC"])
	if err != nil {
		t.Fatal(err)
	}
	if id, err := eth.ChainID(ctx); err != nil || id.String() != vars["RELAY_CHAIN_ID"] {
		t.Fatalf("chain id %v, %v", id, err)
	}
	eth.Close()

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("devchain exited with %v after Ctrl-C", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("devchain did not stop on Ctrl-C")
	}
}
