package console

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/ws"
)

const token = "S3cret!token"

func adminServer(t *testing.T) (*httptest.Server, *ws.Hub) {
	t.Helper()
	hub := ws.NewHub(nil)
	cmds, err := ws.NewCommands(ws.Command{Name: "echo", Usage: "echo <text>", Help: "Repeat.",
		Run: func(_ context.Context, args string) ([]string, error) { return []string{args, "done"}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.New(ws.Config{Token: token, Hub: hub, Commands: cmds})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, hub
}

func TestRunOnce(t *testing.T) {
	srv, hub := adminServer(t)
	hub.Log("old line from before")
	// http:// is accepted and turned into ws://
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	if err := RunOnce(t.Context(), c, "echo hello", &out, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\ndone\n" {
		t.Fatalf("output %q", out.String())
	}
}

func TestDialErrors(t *testing.T) {
	srv, _ := adminServer(t)
	if _, err := Dial(t.Context(), srv.URL, "wrong-token"); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong token: %v", err)
	}
	for _, u := range []string{"ftp://x", "not a url", "ws://"} {
		if _, err := Dial(t.Context(), u, token); err == nil || !strings.Contains(err.Error(), "invalid admin URL") {
			t.Fatalf("%q: %v", u, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := Dial(ctx, "ws://127.0.0.1:1", token); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestFormat(t *testing.T) {
	f := ws.NewFrame(ws.TypeMessage, "hi", time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC))
	got := Format(f)
	if !strings.HasSuffix(got, " [message] hi") || !strings.Contains(got, ":05.006") {
		t.Fatalf("Format = %q", got)
	}
}
