package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the tests run this binary as relayd itself: a child started
// with RELAYD_RUN_MAIN=1 runs main with its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("RELAYD_RUN_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func relayd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RELAYD_RUN_MAIN=1")
	return cmd
}

func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	id := filepath.Join(dir, "node.id")
	data := filepath.Join(dir, "data")
	base := []string{"--identity", id, "--data", data, "--password", "pw", "--testUseWeakCrypto", "--apiPort", "0", "--adminPort", "0"}

	// Create an identity once so the password case has something to open.
	if out, err := relayd(t, append(base, "--init", "--apiToken", "short")...).CombinedOutput(); err == nil {
		t.Fatalf("short token accepted: %s", out)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"missing token", []string{"--init"}, "--apiToken"},
		{"short token", []string{"--init", "--apiToken", "1234567"}, "--apiToken"},
		{"published token on public host", []string{"--init", "--apiToken", "relayd-local-cluster", "--apiHost", "0.0.0.0"}, "--apiToken"},
		{"missing data without init", []string{"--apiToken", "S3cret!token"}, "--data"},
		{"unknown flag", []string{"--frobnicate"}, "frobnicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneLineError(t, relayd(t, append(append([]string{}, base...), tt.args...)...), tt.flag)
		})
	}

	// With the data directory and an identity in place.
	os.MkdirAll(data, 0o700)
	checkOneLineError(t, relayd(t, append(append([]string{}, base...), "--apiToken", "S3cret!token")...), "--identity")
	// --init creates the identity, then the busy port stops the node.
	checkOneLineError(t, relayd(t, append(append([]string{}, base...), "--init", "--apiToken", "S3cret!token",
		"--apiPort", itoa(busyPort))...), "--apiPort")
	if _, err := os.Stat(id); err != nil {
		t.Fatalf("--init did not create the identity: %v", err)
	}
	wrong := append(append([]string{}, base...), "--apiToken", "S3cret!token")
	wrong[5] = "not-the-password"
	checkOneLineError(t, relayd(t, wrong...), "--password")
	checkOneLineError(t, relayd(t, append(append([]string{}, base...), "--apiToken", "S3cret!token",
		"--apiPort", itoa(busyPort))...), "--apiPort")
}

func itoa(i int) string { return strconv.Itoa(i) }

func checkOneLineError(t *testing.T, cmd *exec.Cmd, mention string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatalf("exit 0, want failure; stderr %q", stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "relayd: ") && !strings.Contains(last, "flag provided but not defined") {
		t.Fatalf("last stderr line %q is not a relayd error", last)
	}
	if !strings.Contains(stderr.String(), mention) {
		t.Fatalf("stderr %q does not name %s", stderr.String(), mention)
	}
	if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("stack trace in stderr: %q", stderr.String())
	}
}

// TestNewcomerStart runs the README's start command (on free ports), calls the
// addresses operation, then stops the node with SIGINT.
func TestNewcomerStart(t *testing.T) {
	dir := t.TempDir()
	cmd := relayd(t, "--init", "--identity", filepath.Join(dir, "node.id"), "--password", "p",
		"--data", filepath.Join(dir, "node-data"), "--apiToken", "S3cret!token", "--testUseWeakCrypto",
		"--apiPort", "0", "--adminPort", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apiRe := regexp.MustCompile(`api=(http://127\.0\.0\.1:\d+/api/v2)`)
	lines := bufio.NewScanner(stderr)
	var api string
	for api == "" && lines.Scan() {
		if m := apiRe.FindStringSubmatch(lines.Text()); m != nil {
			api = m[1]
		}
	}
	if api == "" {
		t.Fatal("node never logged its API address")
	}
	go io.Copy(io.Discard, stderr)

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, api+"/account/addresses", nil)
	req.Header.Set("x-auth-token", "S3cret!token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"relay":"16Uiu2HA`) {
		t.Fatalf("addresses: %d %s", resp.StatusCode, body)
	}

	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("graceful shutdown exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("node did not stop after SIGINT")
	}
}
