package node

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
	}
}

// TestAdminCommandsAndShutdown runs a node in-process, uses its admin
// WebSocket and stops it through its context.
func TestAdminCommandsAndShutdown(t *testing.T) {
	n, err := New(testConfig(t), os.Stderr)
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
		"PeerId (relay address): " + n.Identity().PeerID().String(): false,
		"Native address:         " + n.Identity().Address().Hex():   false,
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
	if _, _, err := c.Read(t.Context()); err == nil {
		t.Fatal("admin connection still open after shutdown")
	}
}
