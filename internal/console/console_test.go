package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/ws"
)

const token = "S3cret!token"

func adminServer(t *testing.T) (*httptest.Server, *ws.Hub) {
	t.Helper()
	hub := ws.NewHub(nil)
	cmds, err := admin.NewCommands(admin.Command{Name: "echo", Usage: "echo <text>", Help: "Repeat.",
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
	hub.Log("admin > echo hello") // reads like the echo of the command to come
	hub.Log("hello")
	// http:// is accepted and turned into ws://
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out, logs strings.Builder
	if err := RunOnce(t.Context(), c, "echo hello", &out, &logs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\ndone\n" {
		t.Fatalf("output %q", out.String())
	}
	if logs.String() != "" {
		t.Fatalf("the replay reached the logs: %q", logs.String())
	}
	// A command the node marks as failed: its output, then ErrCommandFailed.
	out.Reset()
	if err := RunOnce(t.Context(), c, "ehco hello", &out, nil); !errors.Is(err, ErrCommandFailed) || !strings.HasPrefix(out.String(), "Unknown command: ehco.") {
		t.Fatalf("an unknown command: %v, output %q", err, out.String())
	}
}

// TestRunOnceWaitsForTheReply: a command that runs long (redeeming
// tickets) is waited for, however quiet; the node's log lines meanwhile go
// to logs, its reply to out.
func TestRunOnceWaitsForTheReply(t *testing.T) {
	hub := ws.NewHub(nil)
	release := make(chan struct{})
	cmds, err := admin.NewCommands(admin.Command{Name: "redeemTickets", Usage: "redeemTickets", Help: "Redeem.",
		Run: func(ctx context.Context, _ string) ([]string, error) {
			hub.Log("level=INFO msg=\"redeeming tickets\" done=1 of=151")
			select {
			case <-release:
			case <-ctx.Done():
			}
			return []string{"Redeemed all tickets."}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.New(ws.Config{Token: token, Hub: hub, Commands: cmds})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	logs := newLineWriter()
	done := make(chan error, 1)
	go func() { done <- RunOnce(t.Context(), c, "redeemTickets", &out, logs) }()
	if l := logs.next(t); !strings.HasSuffix(l, ` level=INFO msg="redeeming tickets" done=1 of=151`) {
		t.Fatalf("progress line %q", l)
	}
	select {
	case err := <-done:
		t.Fatalf("RunOnce returned %v before the reply", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "Redeemed all tickets.\n" {
		t.Fatalf("output %q", out.String())
	}
}

// lineWriter hands the lines written to it to a test.
type lineWriter struct{ lines chan string }

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 100)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		w.lines <- l
	}
	return len(p), nil
}

func (w *lineWriter) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-w.lines:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line written")
		return ""
	}
}

// TestRunOnceNodeStops: when the node stops during a command, RunOnce
// fails and says so.
func TestRunOnceNodeStops(t *testing.T) {
	base, stop := context.WithCancel(context.Background())
	defer stop()
	running := make(chan struct{})
	cmds, err := admin.NewCommands(admin.Command{Name: "hang", Usage: "hang", Help: "Hang.",
		Run: func(ctx context.Context, _ string) ([]string, error) {
			close(running)
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.New(ws.Config{Token: token, Hub: ws.NewHub(nil), Commands: cmds})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { <-running; stop() }()
	var out strings.Builder
	err = RunOnce(t.Context(), c, "hang", &out, nil)
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "the node is shutting down") {
		t.Fatalf("RunOnce = %v", err)
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

// TestErrorsNeverShowTheToken: whatever fails, the token is not in the
// error, in any spelling.
func TestErrorsNeverShowTheToken(t *testing.T) {
	const secret = "Sup3r s3cret/&token"
	hidden := func(err error) bool {
		s := err.Error()
		return !strings.Contains(s, secret) && !strings.Contains(s, url.QueryEscape(secret)) &&
			!strings.Contains(s, url.PathEscape(secret)) && !strings.Contains(s, "Sup3r")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, u := range []string{
		"ws://127.0.0.1:1",                     // nothing listens
		"ws://127.0.0.1:1/?apiToken=Sup3r",     // a token in the URL too
		"ftp://host/?apiToken=Sup3r%20s3cret",  // bad scheme
		"ws://[::1/?apiToken=Sup3r",            // unparsable
		"http://no-such-host.invalid:80/x?a=b", // DNS failure
	} {
		_, err := Dial(ctx, u, secret)
		if err == nil {
			t.Fatalf("%q: dial succeeded", u)
		}
		if !hidden(err) {
			t.Errorf("%q: error shows the token: %v", u, err)
		}
		if !strings.Contains(err.Error(), redactedText) && !strings.Contains(err.Error(), "invalid admin URL") {
			t.Errorf("%q: error does not say where the token was: %v", u, err)
		}
	}
	// The redacted error still matches what it wraps.
	err := RedactError(fmt.Errorf("x %s: %w", secret, context.DeadlineExceeded), secret)
	if !errors.Is(err, context.DeadlineExceeded) || !hidden(err) {
		t.Fatalf("RedactError: %v", err)
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
		write := func(typ, msg, reply string) {
			b, _ := json.Marshal(ws.Frame{Type: typ, Msg: msg, TS: "2026-01-02T03:04:05.006Z", Reply: reply})
			c.Write(r.Context(), websocket.MessageText, b)
		}
		write(ws.TypeLog, "ws client connected [ authentication ENABLED ]", "")
		_, line, err := c.Read(r.Context())
		if err != nil {
			return
		}
		write(ws.TypeLog, "admin > "+string(line), ws.ReplyEcho)
		for _, typ := range []string{ws.TypeLog, ws.TypeMessage, "error"} {
			reply := ws.ReplyOutput
			if typ == "error" {
				reply = ws.ReplyEnd
			}
			write(typ, typ+": "+evil, reply)
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
	if err := RunOnce(t.Context(), c, "info\n", &out, nil); err != nil {
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
	if err := RunOnce(t.Context(), c, "echo a\tb", &out, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a\\tb\ndone\n" {
		t.Fatalf("output %q", out.String())
	}
}

// TestConnectionCutSaysSo: a node that vanishes without a close frame
// (killed) is reported as such.
func TestConnectionCutSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		b, _ := json.Marshal(ws.NewFrame(ws.TypeLog, "ws client connected [ authentication ENABLED ]", time.Now()))
		c.Write(r.Context(), websocket.MessageText, b)
		c.Read(r.Context()) // the command
		c.CloseNow()        // no close frame
	}))
	t.Cleanup(srv.Close)
	c, err := Dial(t.Context(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	err = RunOnce(t.Context(), c, "balance", io.Discard, nil)
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "the node went away without closing it") {
		t.Fatalf("RunOnce = %v", err)
	}
}
