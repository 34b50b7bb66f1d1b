package node

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/config"
)

func testConfig(t *testing.T) config.Config {
	dir := t.TempDir()
	return config.Config{
		APIToken: "S3cret!token", APIHost: "127.0.0.1", AdminHost: "127.0.0.1", Host: "127.0.0.1:0",
		Data: filepath.Join(dir, "data"), Identity: filepath.Join(dir, "id.json"), Password: "pw",
		Init: true, WeakCrypto: true, ShutdownTimeout: 5 * time.Second, LogLevel: "info",
		Network: "test", HeartbeatInterval: time.Second,
	}
}

// TestAdminCommandsAndShutdown runs a node in-process, uses its admin
// WebSocket and stops it through its context.
func TestAdminCommandsAndShutdown(t *testing.T) {
	n, err := New(testConfig(t), os.Stderr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()

	u := "ws://" + n.AdminAddr().String() + "/?apiToken=" + url.QueryEscape("S3cret!token")
	c, _, err := websocket.Dial(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(t.Context(), websocket.MessageText, []byte("address")); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"admin > address": false,
		"RELAY Address:  " + n.Identity().PeerID().String() + " (PeerId)":       false,
		"ETH Address:    " + n.Identity().Address().Hex() + " (native address)": false,
	}
	sawStartLog := false
	deadline := time.Now().Add(10 * time.Second)
	for missing := len(want); missing > 0; {
		rctx, rcancel := context.WithDeadline(t.Context(), deadline)
		_, b, err := c.Read(rctx)
		rcancel()
		if err != nil {
			t.Fatalf("read: %v (still missing %v)", err, want)
		}
		var f struct{ Type, Msg string }
		json.Unmarshal(b, &f)
		if seen, ok := want[f.Msg]; ok && !seen {
			want[f.Msg] = true
			missing--
		}
		sawStartLog = sawStartLog || strings.Contains(f.Msg, `msg="relayd started"`)
	}
	if !sawStartLog {
		t.Error("the node's own start log line did not reach the admin WebSocket")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// Frames queued before the shutdown may still arrive; then the
	// connection must end.
	rctx, rcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer rcancel()
	for {
		if _, _, err := c.Read(rctx); err != nil {
			if rctx.Err() != nil {
				t.Fatal("admin connection still open after shutdown")
			}
			break
		}
	}
}

// startNode runs a node until the test ends.
func startNode(t *testing.T, cfg config.Config, opts ...Options) *Node {
	t.Helper()
	n, _ := runNode(t, cfg, opts...)
	return n
}

// runNode runs a node, with the options given, until stop is called or the test ends (stop may be
// called twice).
func runNode(t *testing.T, cfg config.Config, opts ...Options) (n *Node, stop func()) {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	n, err := New(cfg, os.Stderr, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(stop)
	return n, stop
}

type adminClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialAdmin(t *testing.T, n *Node) *adminClient {
	t.Helper()
	u := "ws://" + n.AdminAddr().String() + "/?apiToken=" + url.QueryEscape("S3cret!token")
	c, _, err := websocket.Dial(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &adminClient{t, c}
}

// run sends a command line and returns the log lines that follow its echo
// until one matches done.
func (a *adminClient) run(line string, done func(string) bool) []string {
	a.t.Helper()
	if err := a.c.Write(a.t.Context(), websocket.MessageText, []byte(line)); err != nil {
		a.t.Fatal(err)
	}
	var out []string
	echoed := false
	ctx, cancel := context.WithTimeout(a.t.Context(), 15*time.Second)
	defer cancel()
	for {
		_, b, err := a.c.Read(ctx)
		if err != nil {
			a.t.Fatalf("%s: read: %v (got %q)", line, err, out)
		}
		var f struct{ Type, Msg string }
		json.Unmarshal(b, &f)
		if !echoed {
			echoed = f.Msg == "admin > "+line
			continue
		}
		if strings.Contains(f.Msg, "level=") { // the node's own log lines
			continue
		}
		out = append(out, f.Msg)
		if done(f.Msg) {
			return out
		}
	}
}

func TestPeersPingAndAliases(t *testing.T) {
	a := startNode(t, testConfig(t))
	cfgB := testConfig(t)
	cfgB.Peers = []string{a.host.Addrs()[0].String()}
	b := startNode(t, cfgB)
	admin := dialAdmin(t, b)

	out := admin.run("ping "+a.id.PeerID().String(), func(s string) bool { return true })
	if !strings.HasPrefix(out[0], "Pong received in: ") || !strings.HasSuffix(out[0], " ms, from "+a.id.PeerID().String()+")") {
		t.Fatalf("ping: %q", out)
	}
	out = admin.run("alias "+a.id.PeerID().String()+" alice", func(string) bool { return true })
	if out[0] != "Set alias 'alice' to '"+a.id.PeerID().String()+"'." {
		t.Fatalf("alias: %q", out)
	}
	out = admin.run("ping alice", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Pong received in: ") || !strings.HasSuffix(out[0], " ms, from "+a.id.PeerID().String()+")") {
		t.Fatalf("ping by alias: %q", out)
	}
	out = admin.run("peers", func(s string) bool { return strings.Contains(s, a.id.PeerID().String()) })
	if !strings.HasPrefix(out[0], "network peers status: 1 nodes in total, ") ||
		!strings.HasPrefix(out[1], "- id: "+a.id.PeerID().String()+", quality: ") || !strings.Contains(out[1], ", connected, ") {
		t.Fatalf("peers: %q", out)
	}
	out = admin.run("ping nobody", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Error: ") || !strings.Contains(out[0], "neither an alias nor a valid PeerId") {
		t.Fatalf("ping unknown: %q", out)
	}
	out = admin.run("ping", func(string) bool { return true })
	if out[0] != "ping needs exactly one peer. Usage: ping <peer>" {
		t.Fatalf("ping usage: %q", out)
	}
}

// TestShutdownWithSilentClient: a connection that never sends a request
// does not make a shutdown fail.
func TestShutdownWithSilentClient(t *testing.T) {
	cfg := testConfig(t)
	cfg.ShutdownTimeout = 300 * time.Millisecond
	n, err := New(cfg, os.Stderr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	conn, err := net.Dial("tcp", n.APIAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestProfileServerOnlyWhenAsked(t *testing.T) {
	if n := startNode(t, testConfig(t)); n.ProfileAddr() != nil {
		t.Fatalf("profile server at %v without --profileAddress", n.ProfileAddr())
	}
	cfg := testConfig(t)
	cfg.ProfileAddress = "127.0.0.1:0"
	n := startNode(t, cfg)
	if n.ProfileAddr() == nil {
		t.Fatal("no profile server with --profileAddress")
	}
	resp, err := http.Get("http://" + n.ProfileAddr().String() + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Fatalf("heap profile: %d %.80q", resp.StatusCode, body)
	}
}
