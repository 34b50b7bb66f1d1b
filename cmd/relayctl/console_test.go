package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/ws"
)

// These tests run relayctl itself, as a process (the test binary
// re-executed), against a real admin server: the interactive ones in a
// pseudo-terminal, as an operator uses it.

const (
	testToken = "S3cret!token"
	alicePeer = "16Uiu2HAmAliceAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	bobPeer   = "16Uiu2HAmBobBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func TestMain(m *testing.M) {
	if os.Getenv("RELAYCTL_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// node is an admin server with a few commands shaped like the node's.
type node struct {
	hub  *ws.Hub
	srv  *httptest.Server
	stop context.CancelFunc // the node shuts down
	url  string
}

// startNode starts the node; extra adds commands, which may use the node.
func startNode(t *testing.T, extra ...func(*node) admin.Command) *node {
	t.Helper()
	base, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	hub := ws.NewHub(nil)
	n := &node{hub: hub, stop: stop}
	lines := func(out ...string) func(context.Context, string) ([]string, error) {
		return func(context.Context, string) ([]string, error) { return out, nil }
	}
	cmds := []admin.Command{
		{Name: "alias", Usage: "alias [<peerId> <name>]", Help: "List aliases.", Run: lines("me -> "+bobPeer, "alice -> "+alicePeer)},
		{Name: "peers", Usage: "peers", Help: "List peers.", Run: lines("network peers status: 1 nodes in total",
			"- id: "+alicePeer+", quality: 1.00")},
		{Name: "settings", Usage: "settings", Help: "Show settings.", Run: lines("includeRecipient  false  Prepends.", "strategy  passive  Strategy.")},
		{Name: "balance", Usage: "balance", Help: "Show balances.", Run: lines("RELAY Balance:  1 RELAY", "ETH Balance:    2 NATIVE")},
		{Name: "ping", Usage: "ping <peer>", Help: "Ping a peer.", Run: func(_ context.Context, args string) ([]string, error) {
			return []string{"Pong received in: 1 ms (" + args + ")"}, nil
		}},
	}
	for _, e := range extra {
		cmds = append(cmds, e(n))
	}
	c, err := admin.NewCommands(cmds...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.New(ws.Config{Token: testToken, Hub: hub, Commands: c})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	t.Cleanup(srv.Close)
	n.srv, n.url = srv, "ws"+strings.TrimPrefix(srv.URL, "http")
	return n
}

// relayctl returns the command running relayctl with args.
func relayctl(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), "RELAYCTL_TEST_MAIN=1", "HOME="+t.TempDir(), "TERM=xterm", "RELAYD_API_TOKEN=", "RELAYCTL_URL=")
	return cmd
}

// terminal is relayctl running in a pseudo-terminal.
type terminal struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	read chan struct{} // closed when the pty gives no more output
}

func startTerminal(t *testing.T, n *node) *terminal {
	t.Helper()
	cmd := relayctl(t, "--url", n.url, "--apiToken", testToken)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: f, cmd: cmd, read: make(chan struct{})}
	go func() {
		defer close(term.read)
		buf := make([]byte, 4096)
		for {
			k, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:k])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return term
}

// ansi matches the terminal control sequences readline draws with.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// screen is the output so far without control sequences.
func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return ansi.ReplaceAllString(term.out.String(), "")
}

// visibleLines approximates what the terminal shows: each line as left by
// its last carriage return (readline redraws the line it edits from its
// start), without trailing spaces.
func visibleLines(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimRight(l, "\r")
		l = l[strings.LastIndex(l, "\r")+1:]
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// waitFor waits until the output shows want, and returns the output.
func (term *terminal) waitFor(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := term.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("no %q on the terminal; it shows:\n%s", want, s)
		}
		time.Sleep(10 * time.Millisecond) // polling the terminal, with a deadline
	}
}

func (term *terminal) typeText(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.pty, s); err != nil {
		term.t.Fatal(err)
	}
}

// exitCode waits for relayctl to exit.
func (term *terminal) exitCode() int {
	term.t.Helper()
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			term.t.Fatal(err)
		}
		return 0
	case <-time.After(15 * time.Second):
		term.t.Fatalf("relayctl did not exit; the terminal shows:\n%s", term.screen())
		return -1
	}
}

func TestInteractiveReplayThenPrompt(t *testing.T) {
	n := startNode(t)
	n.hub.Log("an old line")
	term := startTerminal(t, n)
	s := term.waitFor("admin > ")
	replay := strings.Index(s, "an old line")
	connected := strings.Index(s, "ws client connected [ authentication ENABLED ]")
	prompt := strings.Index(s, "admin > ")
	if replay < 0 || connected < replay || prompt < connected {
		t.Fatalf("want the replay, then the prompt; the terminal shows:\n%s", s)
	}
}

func TestInteractiveCompletionAndOneEcho(t *testing.T) {
	n := startNode(t)
	term := startTerminal(t, n)
	term.waitFor("admin > ")
	term.typeText("pin\t") // the command
	term.typeText("ali\t") // an alias
	term.typeText("\r")    // run it
	s := term.waitFor("Pong received in: 1 ms (alice)")
	if lines := visibleLines(s); slices.Index(lines, "admin > ping alice") < 0 || countPrefix(lines, "admin > ping alice") != 1 {
		t.Fatalf("the command shows %d times, want once:\n%s", countPrefix(lines, "admin > ping alice"), strings.Join(lines, "\n"))
	}
	term.typeText("ping 16Uiu2HAmA\t\r") // a PeerId the node's peers list names
	term.waitFor("Pong received in: 1 ms (" + alicePeer + ")")
}

func TestInteractiveTypoSuggestion(t *testing.T) {
	n := startNode(t)
	term := startTerminal(t, n)
	term.waitFor("admin > ")
	term.typeText("blance\r")
	term.waitFor("Unknown command: blance. Did you mean 'balance'? Type 'help'.")
}

func TestInteractiveNodeStops(t *testing.T) {
	n := startNode(t)
	term := startTerminal(t, n)
	term.waitFor("admin > ")
	n.stop()
	term.waitFor("relayctl: the connection to the node ended: the node is shutting down")
	if code := term.exitCode(); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

func TestInteractiveExit(t *testing.T) {
	n := startNode(t)
	term := startTerminal(t, n)
	term.waitFor("admin > ")
	term.typeText("exit\r")
	if code := term.exitCode(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

func TestInteractiveQuitAsksFirst(t *testing.T) {
	quits := make(chan struct{}, 1)
	n := startNode(t, func(*node) admin.Command {
		return admin.Command{Name: "quit", Usage: "quit", Help: "Stop the node.",
			Run: func(context.Context, string) ([]string, error) {
				quits <- struct{}{}
				return []string{"Stopping the node."}, nil
			}}
	})
	term := startTerminal(t, n)
	term.waitFor("admin > ")
	term.typeText("quit\r")
	term.waitFor("quit stops the node. Stop it? [y/N] ")
	term.typeText("n\r")
	term.waitFor("Not stopped. Type 'exit' to leave relayctl.")
	term.typeText("quit\r")
	term.typeText("y\r")
	term.waitFor("Stopping the node.")
	select {
	case <-quits:
	default:
		t.Fatal("the node did not get quit")
	}
	n.stop() // as the node does after answering: relayctl leaves quietly
	if code := term.exitCode(); code != 0 {
		t.Fatalf("exit code %d after quit, want 0; the terminal shows:\n%s", code, term.screen())
	}
	select {
	case <-quits:
		t.Fatal("quit was sent twice")
	default:
	}
}

// TestOneCommand: -c prints the command's own output only, on stdout,
// whatever the replay holds, and exits 0.
func TestOneCommand(t *testing.T) {
	n := startNode(t)
	n.hub.Log("admin > balance") // an old line that reads like the echo
	n.hub.Log("RELAY Balance:  99 RELAY")
	var stdout, stderr bytes.Buffer
	cmd := relayctl(t, "--url", n.url, "--apiToken", testToken, "-c", "balance")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if want := "RELAY Balance:  1 RELAY\nETH Balance:    2 NATIVE\n"; stdout.String() != want {
		t.Fatalf("stdout %q, want %q", stdout.String(), want)
	}
}

// TestOneCommandFails: -c exits 1 when the node marks the command's reply as a failure (an
// unknown command, bad arguments), after printing the reply.
func TestOneCommandFails(t *testing.T) {
	n := startNode(t, func(*node) admin.Command {
		return admin.Command{Name: "fail", Usage: "fail", Help: "Fails.", Run: func(context.Context, string) ([]string, error) {
			return nil, errors.New("it failed")
		}}
	})
	for _, line := range []string{"nosuchcommand", "fail"} {
		var stdout, stderr bytes.Buffer
		cmd := relayctl(t, "--url", n.url, "--apiToken", testToken, "-c", line)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() == 0 {
			t.Errorf("-c %q: %v, stdout %q, stderr %q; want exit 1 with the reply", line, err, stdout.String(), stderr.String())
		}
	}
}

// TestOneCommandNodeStops: the node stopping during -c is an error.
func TestOneCommandNodeStops(t *testing.T) {
	n := startNode(t, func(n *node) admin.Command {
		return admin.Command{Name: "redeemTickets", Usage: "redeemTickets", Help: "Redeem.",
			Run: func(ctx context.Context, _ string) ([]string, error) {
				n.stop()
				<-ctx.Done()
				return nil, ctx.Err()
			}}
	})
	var stdout, stderr bytes.Buffer
	cmd := relayctl(t, "--url", n.url, "--apiToken", testToken, "-c", "redeemTickets")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want 1", err)
	}
	if want := "relayctl: before the command's reply ended: the connection to the node ended: the node is shutting down\n"; stderr.String() != want {
		t.Fatalf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestTokenNeverPrinted: neither -h nor a connection error shows the token,
// given by flag, in the URL or in the environment.
func TestTokenNeverPrinted(t *testing.T) {
	const secret = "Sup3rSecret"
	for _, args := range [][]string{
		{"-h"},
		{"--url", "ws://127.0.0.1:1/?apiToken=" + secret, "-c", "balance"},
		{"--url", "ws://127.0.0.1:1", "--apiToken", secret, "-c", "balance"},
		{"--url", "gopher://127.0.0.1:1/?apiToken=" + secret},
	} {
		var out bytes.Buffer
		cmd := relayctl(t, args...)
		cmd.Env = append(cmd.Env, "RELAYD_API_TOKEN="+secret, "RELAYCTL_URL=ws://127.0.0.1:1/?apiToken="+secret)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Run()
		if strings.Contains(out.String(), secret) || out.Len() == 0 {
			t.Errorf("%q printed:\n%s", args, out.String())
		}
	}
}

// TestHelpListsSubcommands: relayctl -h names bench and observe.
func TestHelpListsSubcommands(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-h"}, &out, &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"relayctl bench", "relayctl observe", "  bench ", "  observe ", "-c string"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not show %q:\n%s", want, out.String())
		}
	}
}
