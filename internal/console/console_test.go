package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// evil is text a remote peer controls: it tries to retitle the terminal,
// turn it red and forge the header of another received message.
const evil = "\x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####\u202e\u009b"

// firstControl reports the first byte of s a terminal could act on, other than
// the newlines ending its lines, or -1.
func firstControl(s string) int {
	return strings.IndexFunc(strings.ReplaceAll(s, "\n", " "), func(r rune) bool {
		return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
	})
}

func TestFormatEscapesEveryFrame(t *testing.T) {
	for _, typ := range []string{ws.TypeLog, ws.TypeMessage, ws.TypeAuthFailed, "error", "other"} {
		for _, f := range []ws.Frame{
			{Type: typ, Msg: evil, TS: "2026-01-02T03:04:05.006Z"},
			{Type: typ, Msg: "hi", TS: evil}, // an unparsable ts is printed as it came
		} {
			got := Format(f)
			if i := firstControl(got); i >= 0 || strings.Contains(got, "\n") {
				t.Errorf("Format(%+v) = %q: control at %d", f, got, i)
			}
		}
	}
	got := Format(ws.Frame{Type: ws.TypeMessage, Msg: evil, TS: "2026-01-02T03:04:05.006Z"})
	if !strings.HasSuffix(got, ` [message] \x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####\u202e\u009b`) {
		t.Fatalf("Format = %q", got)
	}
}

// rawNode is an admin server that answers any command with frames carrying
// evil text unescaped, as a node from before escaping (or a hostile one)
// would.
func rawNode(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		write := func(typ, msg string) {
			b, _ := json.Marshal(ws.Frame{Type: typ, Msg: msg, TS: "2026-01-02T03:04:05.006Z"})
			c.Write(r.Context(), websocket.MessageText, b)
		}
		write(ws.TypeLog, "ws client connected [ authentication ENABLED ]")
		_, line, err := c.Read(r.Context())
		if err != nil {
			return
		}
		write(ws.TypeLog, "admin > "+string(line))
		for _, typ := range []string{ws.TypeLog, ws.TypeMessage, "error"} {
			write(typ, typ+": "+evil)
		}
		c.Read(r.Context()) // until the client leaves
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunOnceEscapesOutput(t *testing.T) {
	c, err := Dial(t.Context(), rawNode(t).URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	if err := RunOnce(t.Context(), c, "info\n", &out, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q: want 3 lines", out.String())
	}
	if i := firstControl(out.String()); i >= 0 {
		t.Fatalf("output %q has a control character at %d", out.String(), i)
	}
	for i, typ := range []string{ws.TypeLog, ws.TypeMessage, "error"} {
		if want := typ + `: \x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####\u202e\u009b`; lines[i] != want {
			t.Fatalf("line %d = %q, want %q", i, lines[i], want)
		}
	}
}

// TestRunOnceWithTab: a command line holding a tab is echoed escaped, and
// RunOnce still finds its echo.
func TestRunOnceWithTab(t *testing.T) {
	srv, _ := adminServer(t)
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	if err := RunOnce(t.Context(), c, "echo a\tb", &out, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a\\tb\ndone\n" {
		t.Fatalf("output %q", out.String())
	}
}
