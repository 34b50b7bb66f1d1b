package main

import (
	"bufio"
	"bytes"
	"errors"
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

// exitCode runs cmd and returns its exit code and output (stdout, stderr).
func exitCode(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("%v: %v", cmd.Args, err)
	return -1, "", ""
}

// TestExitCodes: relayd exits 0 when it printed what was asked, 2 for a usage error (a bad
// flag, value, variable or config file, or a configuration that does not validate) and 1 when
// the node fails at run time; every error is one line on stderr.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownKey := write("unknown.toml", "apiPort = 4001\napiport = 1\n")
	badYAML := write("bad.yaml", "apiPort: 1\n  apiHost: x\n")
	wrongType := write("type.toml", "apiToken = \"S3cret!token\"\napiPort = \"4001\"\n")
	base := []string{"--data", filepath.Join(dir, "data"), "--password", "pw", "--testUseWeakCrypto", "--apiPort", "0", "--adminPort", "0"}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	tests := []struct {
		name    string
		args    []string
		env     []string
		code    int
		mention string // in the output; for code 2 and 1, in stderr's last line
	}{
		{"--version", []string{"--version"}, nil, 0, "relayd "},
		{"-version", []string{"-version"}, nil, 0, "relayd "},
		{"version", []string{"version"}, nil, 0, "relayd "},
		{"help", []string{"-h"}, nil, 0, "-config"},
		{"config", []string{"config", "--apiToken", "S3cret!token", "--password", "pw"}, nil, 0, `apiToken = "[redacted]"`},
		{"unknown flag", []string{"--frobnicate"}, nil, 2, "frobnicate"},
		{"bad flag value", []string{"--apiPort", "abc"}, nil, 2, "-apiPort"},
		{"unexpected argument", []string{"--apiPort", "1", "extra"}, nil, 2, `"extra"`},
		{"unknown subcommand", []string{"frobnicate"}, nil, 2, "frobnicate"},
		{"version with an argument", []string{"version", "extra"}, nil, 2, "usage: relayd version"},
		{"bad environment value", nil, []string{"RELAYD_API_PORT=abc"}, 2, "RELAYD_API_PORT"},
		{"unknown key in the file", []string{"--config", unknownKey}, nil, 2, unknownKey + ", line 2: apiport: unknown key"},
		{"file syntax", nil, []string{"RELAYD_CONFIG=" + badYAML}, 2, badYAML + ", line 2"},
		{"wrong type in the file", []string{"--config", wrongType}, nil, 2, "line 2: apiPort: want an integer"},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.toml")}, nil, 2, "nope.toml: cannot be read"},
		{"invalid configuration", append([]string{"--init"}, base...), nil, 2, "--apiToken is required"},
		{"invalid configuration from the environment", append([]string{"--init", "--apiToken", "S3cret!token"}, base...), []string{"RELAYD_LOG_LEVEL=loud"},
			2, "--logLevel must be one of debug, info, warn, error (set by env RELAYD_LOG_LEVEL)"},
		{"config of an invalid configuration", []string{"config", "--apiToken", "S3cret!token", "--password", "pw", "--apiPort", "70000"}, nil, 2, "--apiPort"},
		{"no identity (runtime)", append([]string{"--apiToken", "S3cret!token"}, base...), nil, 1, "--data"},
		{"busy port (runtime)", append(append([]string{"--init", "--apiToken", "S3cret!token"}, base...), "--apiPort", itoa(busy.Addr().(*net.TCPAddr).Port)),
			nil, 1, "--apiPort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := relayd(t, tt.args...)
			cmd.Env = append(cmd.Env, tt.env...)
			code, stdout, stderr := exitCode(t, cmd)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.mention) {
				t.Fatalf("output does not mention %q\nstdout %s\nstderr %s", tt.mention, stdout, stderr)
			}
			if code == 0 {
				return
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "relayd: ") && !strings.HasPrefix(last, "usage: ") ||
				(tt.name != "version with an argument" && !strings.Contains(last, tt.mention)) {
				t.Fatalf("last stderr line %q is not a relayd error naming %q", last, tt.mention)
			}
		})
	}
}

// TestVersionFlag: --version prints what relayd version prints, on stdout.
func TestVersionFlag(t *testing.T) {
	flagOut, err := relayd(t, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmdOut, err := relayd(t, "version").Output()
	if err != nil || !bytes.Equal(flagOut, cmdOut) || !regexp.MustCompile(`^relayd \S+ \(revision \S+, go\S+\)\n$`).Match(flagOut) {
		t.Fatalf("--version %q, version %q (%v)", flagOut, cmdOut, err)
	}
}

// TestConfigFileStart: an operator's node starts from a config file alone (TOML here), with a
// variable and a flag over it; relayd config shows the same configuration and where each value
// came from, secrets redacted; SIGINT stops the node with exit 0.
func TestConfigFileStart(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "node.password")
	if err := os.WriteFile(pw, []byte("file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "relayd.toml")
	content := `# relayd.toml
apiToken = "S3cret!token"
passwordFile = "` + pw + `"
data = "` + filepath.Join(dir, "data") + `"
init = true
testUseWeakCrypto = true
apiPort = 1
adminPort = 0
host = "127.0.0.1:0"
logLevel = "debug"
announce = ["/ip4/203.0.113.7/tcp/9091"]
`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", file, "--apiPort", "0"}
	env := []string{"RELAYD_LOG_LEVEL=info"}

	cmd := relayd(t, append([]string{"config"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	code, out, stderr := exitCode(t, cmd)
	if code != 0 {
		t.Fatalf("relayd config: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"# config file: " + file + " (flag)",
		`apiToken = "[redacted]"`, "# file " + file + ":2\n",
		`password = "[redacted]"`, "# file " + file + ":3\n",
		"apiPort = 0", "# flag\n",
		`logLevel = "info"`, "# env RELAYD_LOG_LEVEL\n",
		`announce = ["/ip4/203.0.113.7/tcp/9091"]`,
		`apiHost = "127.0.0.1"`, "# default\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("relayd config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "S3cret") || strings.Contains(out, "file-secret") {
		t.Fatalf("relayd config shows a secret:\n%s", out)
	}

	node := relayd(t, args...)
	node.Env = append(node.Env, env...)
	nodeErr, err := node.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	apiRe := regexp.MustCompile(`api=(http://127\.0\.0\.1:\d+/api/v2)`)
	lines := bufio.NewScanner(nodeErr)
	var api string
	for api == "" && lines.Scan() {
		if strings.Contains(lines.Text(), "level=DEBUG") {
			t.Errorf("a debug line although RELAYD_LOG_LEVEL=info wins over the file: %s", lines.Text())
		}
		if m := apiRe.FindStringSubmatch(lines.Text()); m != nil {
			api = m[1]
		}
	}
	if api == "" {
		t.Fatal("node never logged its API address")
	}
	go io.Copy(io.Discard, nodeErr)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, api+"/account/addresses", nil)
	req.Header.Set("x-auth-token", "S3cret!token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the file's token: status %d", resp.StatusCode)
	}
	node.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- node.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("graceful shutdown exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("node did not stop after SIGINT")
	}
}
