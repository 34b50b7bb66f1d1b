package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/wait"
)

const testToken = "S3cret!token"

var tsPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// scripted is an Interpreter of a few commands for the server's tests, answering as
// internal/admin's command language does (which has its own tests there): each command is a
// function of its arguments; an empty line, an unknown command and a failing one are failures.
type scripted map[string]func(args string) Reply

func (s scripted) Run(_ context.Context, line string) Reply {
	line = strings.TrimSpace(line)
	if line == "" {
		return Reply{Lines: []string{"Invalid command: empty command line. Type 'help'."}, Failed: true}
	}
	name, args, _ := strings.Cut(line, " ")
	if name == "help" {
		return Reply{Lines: []string{"Available commands:", "  echo <text>  Repeat the text.", "  fail         Always fails.",
			"  help         Show the available commands."}}
	}
	if fn, ok := s[name]; ok {
		return fn(strings.TrimSpace(args))
	}
	return Reply{Lines: []string{"Unknown command: " + name + ". Type 'help'."}, Failed: true}
}

func testCommands(*testing.T) Interpreter {
	return scripted{
		"echo": func(args string) Reply {
			if args == "" {
				return Reply{Lines: []string{"missing text. Usage: echo <text>"}, Failed: true}
			}
			return Reply{Lines: []string{args}}
		},
		"fail": func(string) Reply { return Reply{Lines: []string{"Error: it failed"}, Failed: true} },
	}
}

type harness struct {
	hub *Hub
	srv *httptest.Server
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Hub == nil {
		cfg.Hub = NewHub(nil)
	}
	if cfg.Commands == nil {
		cfg.Commands = testCommands(t)
	}
	if cfg.Token == "" && !cfg.DisableAuth {
		cfg.Token = testToken
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &harness{hub: cfg.Hub, srv: srv}
}

func (h *harness) dial(t *testing.T, token string) *websocket.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/any/path?apiToken=" + url.QueryEscape(token)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func read(t *testing.T, c *websocket.Conn) Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("frame type %v", typ)
	}
	var f Frame
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	if !tsPattern.MatchString(f.TS) {
		t.Fatalf("ts %q is not ISO 8601 UTC with milliseconds", f.TS)
	}
	return f
}

func send(t *testing.T, c *websocket.Conn, line string) {
	t.Helper()
	if err := c.Write(t.Context(), websocket.MessageText, []byte(line)); err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, c *websocket.Conn, typ string, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		f := read(t, c)
		if f.Type != typ || f.Msg != m {
			t.Fatalf("got %s %q, want %s %q", f.Type, f.Msg, typ, m)
		}
	}
}

func TestBadTokenRefused(t *testing.T) {
	h := newHarness(t, Config{})
	for _, tok := range []string{"", "wrong-token", testToken + "\n", testToken[:8]} {
		c := h.dial(t, tok)
		f := read(t, c)
		if f.Type != TypeAuthFailed || f.Msg != "authentication failed" {
			t.Fatalf("token %q: first frame %+v", tok, f)
		}
		_, _, err := c.Read(t.Context())
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("token %q: want policy-violation close, got %v", tok, err)
		}
	}
	if n := h.hub.Clients(); n != 0 {
		t.Fatalf("%d refused clients registered", n)
	}
}

func TestConnectLine(t *testing.T) {
	for _, tt := range []struct {
		disable bool
		want    string
	}{{false, "ws client connected [ authentication ENABLED ]"}, {true, "ws client connected [ authentication DISABLED ]"}} {
		h := newHarness(t, Config{DisableAuth: tt.disable})
		c := h.dial(t, testToken)
		expect(t, c, TypeLog, tt.want)
	}
}

func TestReplayOfLast100(t *testing.T) {
	h := newHarness(t, Config{})
	for i := 1; i <= 150; i++ {
		h.hub.Log(fmt.Sprintf("line %d", i))
	}
	c := h.dial(t, testToken)
	for i := 52; i <= 150; i++ {
		expect(t, c, TypeLog, fmt.Sprintf("line %d", i))
	}
	expect(t, c, TypeLog, "ws client connected [ authentication ENABLED ]")
	// Nothing else was queued: the next frame is a live one.
	h.hub.Publish(TypeMessage, "live")
	expect(t, c, TypeMessage, "live")
}

func TestConnectLineReachesEarlierClients(t *testing.T) {
	h := newHarness(t, Config{})
	first := h.dial(t, testToken)
	expect(t, first, TypeLog, "ws client connected [ authentication ENABLED ]")
	h.dial(t, testToken)
	expect(t, first, TypeLog, "ws client connected [ authentication ENABLED ]")
}

func TestCommands(t *testing.T) {
	h := newHarness(t, Config{})
	c := h.dial(t, testToken)
	read(t, c) // connect line
	tests := []struct {
		line string
		out  []string
	}{
		{"echo hello world", []string{"admin > echo hello world", "hello world"}},
		{"  echo   spaced  ", []string{"admin >   echo   spaced  ", "spaced"}},
		{"echo", []string{"admin > echo", "missing text. Usage: echo <text>"}},
		{"fail", []string{"admin > fail", "Error: it failed"}},
		{"frobnicate now", []string{"admin > frobnicate now", "Unknown command: frobnicate. Type 'help'."}},
		{"   ", []string{"admin >    ", "Invalid command: empty command line. Type 'help'."}},
		{"help", []string{"admin > help", "Available commands:",
			"  echo <text>  Repeat the text.",
			"  fail         Always fails.",
			"  help         Show the available commands."}},
	}
	for _, tt := range tests {
		send(t, c, tt.line)
		expect(t, c, TypeLog, tt.out...)
	}
}

// TestSlowClientDropped: a client that never reads is dropped once its
// queue is full, and one that keeps up stays. The fast client reads in its
// own goroutine with a context that lasts the whole test: coder/websocket
// closes the connection when a read's context expires, so reading with
// short timeouts would drop the fast client too. The publisher waits for
// the fast client to catch up every 64 frames, fewer than its queue holds.
func TestSlowClientDropped(t *testing.T) {
	h := newHarness(t, Config{QueueSize: 128})
	fast := h.dial(t, testToken)
	slow := h.dial(t, testToken) // never read
	_ = slow
	big := strings.Repeat("x", 4096)

	ctx, cancel := context.WithCancel(t.Context())
	var got atomic.Int64 // big frames the fast client has read
	readErr := make(chan error, 1)
	go func() {
		for {
			_, b, err := fast.Read(ctx)
			if err != nil {
				readErr <- err
				return
			}
			if strings.Contains(string(b), big) {
				got.Add(1)
			}
		}
	}()
	stopReader := func() error {
		cancel()
		return <-readErr
	}

	sent := int64(0)
	for h.hub.Clients() == 2 {
		if sent >= 200000 {
			stopReader()
			t.Fatal("slow client was never dropped")
		}
		h.hub.Log(big)
		sent++
		if sent%64 == 0 { // let the fast client catch up
			if !wait.Until(func() bool { return got.Load() >= sent }, 10*time.Second) {
				err := stopReader()
				t.Fatalf("the fast client read %d of %d frames (%d clients; reader: %v)", got.Load(), sent, h.hub.Clients(), err)
			}
		}
	}
	if n := h.hub.Clients(); n != 1 {
		stopReader()
		t.Fatalf("%d clients left, want the fast one", n)
	}
	// The fast client is still served: it reads every frame sent, and its
	// reader ends only because the test cancels it.
	wait.For(t, func() bool { return got.Load() >= sent }, 10*time.Second, "the fast client reads every frame")
	select {
	case err := <-readErr:
		t.Fatalf("the fast client's connection ended: %v", err)
	default:
	}
	if err := stopReader(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the fast client's read ended with %v, want context.Canceled", err)
	}
}

func TestLogHandlerPublishes(t *testing.T) {
	hub := NewHub(nil)
	h := newHarness(t, Config{Hub: hub})
	c := h.dial(t, testToken)
	read(t, c)
	log := slog.New(NewLogHandler(hub, slog.LevelInfo))
	log.Debug("hidden")
	log.Info("channel opened", "peer", "16Uiu2HAm")
	expect(t, c, TypeLog, `level=INFO msg="channel opened" peer=16Uiu2HAm`)
}

// evil is a received message that tries to retitle the operator's terminal,
// turn it red and forge the header of another received message.
const evil = "\x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####"

func TestLogFramesCarryNoControlCharacters(t *testing.T) {
	h := newHarness(t, Config{})
	c := h.dial(t, testToken)
	read(t, c) // connect line
	now := h.hub.Now()
	h.hub.PublishSeq(NewFrame(TypeLog, "Message: "+evil, now), NewFrame(TypeMessage, evil, now))
	h.hub.Log("alias " + evil)
	expect(t, c, TypeLog, `Message: \x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####`)
	expect(t, c, TypeMessage, evil) // the message frame keeps the exact text
	expect(t, c, TypeLog, `alias \x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####`)

	// Command echoes and output quoting the operator's input are escaped too.
	send(t, c, "echo a\tb\u202ec")
	expect(t, c, TypeLog, `admin > echo a\tb\u202ec`, `a\tb\u202ec`)
	send(t, c, "frob\u2066nicate")
	expect(t, c, TypeLog, `admin > frob\u2066nicate`, `Unknown command: frob\u2066nicate. Type 'help'.`)
}

func TestCommandRepliesOnlyReachTheirClient(t *testing.T) {
	h := newHarness(t, Config{})
	other := h.dial(t, testToken)
	expect(t, other, TypeLog, "ws client connected [ authentication ENABLED ]")
	asker := h.dial(t, testToken)
	expect(t, asker, TypeLog, "ws client connected [ authentication ENABLED ]") // its own: other's is not replayed
	expect(t, other, TypeLog, "ws client connected [ authentication ENABLED ]")

	send(t, asker, "echo private")
	expect(t, asker, TypeLog, "admin > echo private", "private")
	h.hub.Log("broadcast")
	expect(t, asker, TypeLog, "broadcast")
	expect(t, other, TypeLog, "broadcast") // nothing of the command before it

	// Nor are replies kept for the replay of later clients (nor other clients' connect lines).
	late := h.dial(t, testToken)
	expect(t, late, TypeLog, "broadcast", "ws client connected [ authentication ENABLED ]")
}

func TestReplayComesBeforeTheFirstReply(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range 99 {
		h.hub.Log(fmt.Sprintf("line %d", i))
	}
	c := h.dial(t, testToken)
	send(t, c, "echo first") // before reading anything
	for i := range 99 {
		expect(t, c, TypeLog, fmt.Sprintf("line %d", i))
	}
	expect(t, c, TypeLog, "ws client connected [ authentication ENABLED ]", "admin > echo first", "first")
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestCommandRateLimit(t *testing.T) {
	clock := &fakeClock{}
	clock.advance(time.Hour)
	h := newHarness(t, Config{Hub: NewHub(clock.now), CommandRate: 2, CommandBurst: 3})
	c := h.dial(t, testToken)
	read(t, c)
	limited := "Rate limited: at most 3 commands at once and 2 per second; this command was not run."
	for i := range 3 {
		send(t, c, fmt.Sprintf("echo %d", i))
		expect(t, c, TypeLog, fmt.Sprintf("admin > echo %d", i), fmt.Sprint(i))
	}
	send(t, c, "echo 3")
	expect(t, c, TypeLog, "admin > echo 3", limited)
	send(t, c, "help") // every command counts, help too
	expect(t, c, TypeLog, "admin > help", limited)

	clock.advance(500 * time.Millisecond) // one token back
	send(t, c, "echo 4")
	expect(t, c, TypeLog, "admin > echo 4", "4")
	send(t, c, "echo 5")
	expect(t, c, TypeLog, "admin > echo 5", limited)

	clock.advance(time.Hour) // refills up to the burst, no more
	for i := range 4 {
		send(t, c, fmt.Sprintf("echo %d", 6+i))
		want := fmt.Sprint(6 + i)
		if i == 3 {
			want = limited
		}
		expect(t, c, TypeLog, fmt.Sprintf("admin > echo %d", 6+i), want)
	}
}

// TestCommandFloodSparesOtherClients: a client sending commands as fast as
// it can is rate limited and answered alone; a client that reads at its own
// pace meanwhile keeps its connection and sees none of the flood.
func TestCommandFloodSparesOtherClients(t *testing.T) {
	h := newHarness(t, Config{QueueSize: 128})
	calm := h.dial(t, testToken)
	expect(t, calm, TypeLog, "ws client connected [ authentication ENABLED ]")
	flooder := h.dial(t, testToken)
	read(t, flooder) // its connect line, the whole replay

	const n = 2000
	writeErr := make(chan error, 1)
	go func() {
		for i := range n {
			if err := flooder.Write(t.Context(), websocket.MessageText, []byte(fmt.Sprintf("echo flood %d", i))); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	echoes, ran, limited := 0, 0, 0
	for echoes < n || ran+limited < n {
		f := read(t, flooder)
		switch {
		case strings.HasPrefix(f.Msg, "admin > echo flood "):
			echoes++
		case strings.HasPrefix(f.Msg, "flood "):
			ran++
		case strings.HasPrefix(f.Msg, "Rate limited: "):
			limited++
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if limited == 0 || ran < 20 || ran > n/2 {
		t.Fatalf("of %d commands %d ran and %d were rate limited", n, ran, limited)
	}

	h.hub.Log("after the flood")
	if got := h.hub.Clients(); got != 2 {
		t.Fatalf("%d clients connected after the flood, want 2", got)
	}
	expect(t, calm, TypeLog, "ws client connected [ authentication ENABLED ]", "after the flood")
}

// TestFramesMarkReplayAndReply: a client tells the replay, live frames and
// its own command's reply apart by the frames' marks, not by their text,
// even when a replayed frame reads exactly like its command's echo.
func TestFramesMarkReplayAndReply(t *testing.T) {
	h := newHarness(t, Config{})
	h.hub.Log("admin > echo hi") // a replayed line that looks like an echo
	c := h.dial(t, testToken)
	send(t, c, "echo hi")
	type want struct {
		msg    string
		replay bool
		reply  string
	}
	check := func(w want) {
		t.Helper()
		f := read(t, c)
		if f.Msg != w.msg || f.Replay != w.replay || f.Reply != w.reply {
			t.Fatalf("got %+v, want %+v", f, w)
		}
	}
	check(want{"admin > echo hi", true, ""})
	check(want{"ws client connected [ authentication ENABLED ]", true, ""})
	check(want{"admin > echo hi", false, ReplyEcho})
	check(want{"hi", false, ReplyEnd})
	h.hub.Log("live")
	check(want{"live", false, ""})

	send(t, c, "help")
	check(want{"admin > help", false, ReplyEcho})
	check(want{"Available commands:", false, ReplyOutput})
	check(want{"  echo <text>  Repeat the text.", false, ReplyOutput})
	check(want{"  fail         Always fails.", false, ReplyOutput})
	check(want{"  help         Show the available commands.", false, ReplyEnd})

	if err := c.Write(t.Context(), websocket.MessageBinary, []byte("help")); err != nil {
		t.Fatal(err)
	}
	check(want{"Invalid command: binary frames are not commands. Type 'help'.", false, ReplyEnd})
}

// TestCommandWithoutOutputEnds: a command that prints nothing still ends
// its reply, so a script waiting for the end does not wait forever.
func TestCommandWithoutOutputEnds(t *testing.T) {
	h := newHarness(t, Config{Commands: scripted{"quiet": func(string) Reply { return Reply{} }}})
	c := h.dial(t, testToken)
	read(t, c)
	send(t, c, "quiet")
	if f := read(t, c); f.Reply != ReplyEcho {
		t.Fatalf("echo %+v", f)
	}
	if f := read(t, c); f.Reply != ReplyEnd || f.Msg != "Done." {
		t.Fatalf("end %+v", f)
	}
}

func TestRateLimitedReplyEnds(t *testing.T) {
	h := newHarness(t, Config{CommandRate: 0.001, CommandBurst: 1})
	c := h.dial(t, testToken)
	read(t, c)
	send(t, c, "echo 1")
	read(t, c)
	read(t, c)
	send(t, c, "echo 2")
	if f := read(t, c); f.Reply != ReplyEcho || f.Msg != "admin > echo 2" {
		t.Fatalf("echo %+v", f)
	}
	if f := read(t, c); f.Reply != ReplyEnd || !strings.HasPrefix(f.Msg, "Rate limited") {
		t.Fatalf("end %+v", f)
	}
}

// TestCookieAuth: the token is also accepted in an X-Auth-Token cookie
// (either spelling, raw or URL-encoded); a wrong cookie is refused.
func TestCookieAuth(t *testing.T) {
	h := newHarness(t, Config{})
	u := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/"
	for _, tt := range []struct {
		cookie string
		ok     bool
	}{
		{"X-Auth-Token=" + url.QueryEscape(testToken), true},
		{"x-auth-token=" + url.QueryEscape(testToken), true},
		{"X-Auth-Token=S3cret!token", true},
		{"X-Auth-Token=wrong", false},
		{"Other=" + url.QueryEscape(testToken), false},
	} {
		hdr := http.Header{}
		hdr.Set("Cookie", tt.cookie)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: hdr})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		f := read(t, c)
		c.CloseNow()
		if got := f.Type != TypeAuthFailed; got != tt.ok {
			t.Errorf("cookie %q: first frame %+v", tt.cookie, f)
		}
	}
}

// TestAfterRunsOnceTheReplyIsOut: a command whose After hook shuts the
// server down (the node's quit) still gets its reply to its client, then
// the client sees the server going away.
func TestAfterRunsOnceTheReplyIsOut(t *testing.T) {
	for range 10 { // the reply must win every time, not by luck
		base, shutdown := context.WithCancel(context.Background())
		defer shutdown()
		cmds := scripted{"stop": func(args string) Reply {
			if args != "" {
				return Reply{Lines: []string{"stop takes no arguments. Usage: stop"}, Failed: true, After: shutdown}
			}
			return Reply{Lines: []string{"Stopping."}, After: shutdown}
		}}
		s, err := New(Config{Token: testToken, Hub: NewHub(nil), Commands: cmds})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(s)
		srv.Config.BaseContext = func(net.Listener) context.Context { return base }
		srv.Start()
		defer srv.Close()
		c := (&harness{srv: srv}).dial(t, testToken)
		read(t, c)
		send(t, c, "stop now") // a failed command does not run After
		expect(t, c, TypeLog, "admin > stop now", "stop takes no arguments. Usage: stop")
		if base.Err() != nil {
			t.Fatal("After ran after a failed command")
		}
		send(t, c, "stop")
		expect(t, c, TypeLog, "admin > stop", "Stopping.")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, _, err = c.Read(ctx)
		cancel()
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("after stop: %v, want going-away close", err)
		}
	}
}

// TestFailedRepliesAreMarked: the frame that ends a failed command's reply carries "error":true
// (an unknown command, bad arguments, a failure, a binary frame, a refusal by the rate limit);
// a command that worked has no such mark on any frame.
func TestFailedRepliesAreMarked(t *testing.T) {
	h := newHarness(t, Config{CommandRate: 0.001, CommandBurst: 5})
	c := h.dial(t, testToken)
	read(t, c)
	for _, tt := range []struct {
		line   string
		failed bool
	}{{"echo hi", false}, {"echo", true}, {"fail", true}, {"nope", true}, {"help", false}} {
		send(t, c, tt.line)
		for {
			f := read(t, c)
			if f.Reply != ReplyEnd {
				if f.Error {
					t.Fatalf("%q: %+v marked before the end", tt.line, f)
				}
				continue
			}
			if f.Error != tt.failed {
				t.Errorf("%q: end frame %+v, want error=%v", tt.line, f, tt.failed)
			}
			break
		}
	}
	send(t, c, "echo limited") // the sixth command: over the burst
	read(t, c)
	if f := read(t, c); f.Reply != ReplyEnd || !f.Error || !strings.HasPrefix(f.Msg, "Rate limited") {
		t.Fatalf("rate limited: %+v", f)
	}
	if err := c.Write(t.Context(), websocket.MessageBinary, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if f := read(t, c); f.Reply != ReplyEnd || !f.Error {
		t.Fatalf("binary frame: %+v", f)
	}
}

// TestRefusedClientsStayOutOfTheReplay: with the node's log handler on the hub, many clients
// refused for a bad token leave the node's events in a later client's replay; only the last
// ConnReplaySize refusals are replayed, among them in order.
func TestRefusedClientsStayOutOfTheReplay(t *testing.T) {
	hub := NewHub(nil)
	h := newHarness(t, Config{Hub: hub, Logger: slog.New(NewLogHandler(hub, slog.LevelInfo))})
	for i := 1; i <= ReplaySize-1; i++ {
		hub.Log(fmt.Sprintf("event %d", i))
	}
	for range 3 * ReplaySize {
		c := h.dial(t, "wrong-token")
		if f := read(t, c); f.Type != TypeAuthFailed {
			t.Fatalf("first frame %+v, want %s", f, TypeAuthFailed)
		}
		c.CloseNow()
	}
	// The server logs a refusal before it writes the auth-failed frame, so every one is in.
	refusal := regexp.MustCompile(`^level=WARN msg="websocket client refused: bad token" remote=127\.0\.0\.1:\d+$`)
	c := h.dial(t, testToken)
	var events, refusals int
	for {
		f := read(t, c)
		if !f.Replay {
			t.Fatalf("a live frame %q before the connect line", f.Msg)
		}
		switch {
		case f.Msg == "ws client connected [ authentication ENABLED ]":
			if events != ReplaySize-1 || refusals != ConnReplaySize {
				t.Fatalf("replay held %d events and %d refusals, want %d and %d", events, refusals, ReplaySize-1, ConnReplaySize)
			}
			return
		case f.Msg == fmt.Sprintf("event %d", events+1):
			if refusals > 0 {
				t.Fatalf("event %d after a refusal: the refusals came last", events+1)
			}
			events++
		case refusal.MatchString(f.Msg):
			refusals++
		default:
			t.Fatalf("replayed %q after %d events and %d refusals", f.Msg, events, refusals)
		}
	}
}
