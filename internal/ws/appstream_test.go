package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/wait"
)

// appHarness runs AppStreams over a hub, served at /messages (?since=) and
// /admin.
type appHarness struct {
	hub     *Hub
	streams *AppStreams
	srv     *httptest.Server
	stop    context.CancelFunc
	ran     chan error
}

func newAppHarness(t *testing.T, now func() time.Time) *appHarness {
	t.Helper()
	hub := NewHub(now)
	a, err := NewAppStreams(hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/messages", func(w http.ResponseWriter, r *http.Request) {
		var since *int64
		if v := r.URL.Query().Get("since"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Errorf("since %q", v)
			}
			since = &n
		}
		a.ServeMessages(w, r, since)
	})
	mux.HandleFunc("/admin", func(w http.ResponseWriter, r *http.Request) { a.ServeAdmin(w, r, true) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	h := &appHarness{hub: hub, streams: a, srv: srv, stop: cancel, ran: make(chan error, 1)}
	go func() { h.ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.ran
	})
	// Run subscribes to the hub before anything is published.
	waitFor(t, "the message stream subscribes", func() bool { return hub.Clients() == 1 })
	return h
}

// waitFor polls cond until it holds, failing t after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, 5*time.Second, what)
}

func (h *appHarness) dial(t *testing.T, path string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.srv.URL, "http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// deliver publishes a received message as the node does: log lines, then
// the message frame.
func (h *appHarness) deliver(text string) {
	now := h.hub.Now()
	h.hub.PublishSeq(NewFrame(TypeLog, "#### NODE RECEIVED MESSAGE ####", now), NewFrame(TypeLog, "Message: "+text, now),
		NewFrame(TypeMessage, text, now))
}

func readMessage(t *testing.T, c *websocket.Conn) AppMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m AppMessage
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if typ != websocket.MessageText || dec.Decode(&m) != nil {
		t.Fatalf("frame %q is not an AppMessage", b)
	}
	return m
}

// TestMessageStream: only received messages reach the stream, each with a
// growing id, the exact text and the receive time; messages received
// before the client connected are not replayed.
func TestMessageStream(t *testing.T) {
	h := newAppHarness(t, nil)
	h.deliver("before")
	waitFor(t, "the first message is kept", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.buf) == 1
	})
	c := h.dial(t, "/messages")
	waitFor(t, "the client joins", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.clients) == 1
	})
	h.hub.Log("a log line")
	h.deliver("hello\x1b[31m")
	h.deliver("world")
	start := time.Now().UnixMicro()
	first := readMessage(t, c)
	second := readMessage(t, c)
	if first.Body != "hello\x1b[31m" || second.Body != "world" || first.Type != "message" {
		t.Fatalf("got %+v, %+v", first, second)
	}
	if first.ID >= second.ID || first.ID < start-10_000_000 {
		t.Fatalf("ids %d, %d: want growing, from the receive time in µs", first.ID, second.ID)
	}
	if !tsPattern.MatchString(first.ReceivedAt) {
		t.Fatalf("receivedAt %q", first.ReceivedAt)
	}
}

// TestMessageStreamSince: ?since=<id> first replays the kept messages after
// that id, then goes on live.
func TestMessageStreamSince(t *testing.T) {
	h := newAppHarness(t, nil)
	live := h.dial(t, "/messages")
	waitFor(t, "the client joins", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.clients) == 1
	})
	for _, s := range []string{"one", "two", "three"} {
		h.deliver(s)
	}
	one, two, three := readMessage(t, live), readMessage(t, live), readMessage(t, live)
	c := h.dial(t, "/messages?since="+strconv.FormatInt(one.ID, 10))
	if got := readMessage(t, c); got != two {
		t.Fatalf("first replayed %+v, want %+v", got, two)
	}
	if got := readMessage(t, c); got != three {
		t.Fatalf("second replayed %+v, want %+v", got, three)
	}
	h.deliver("four")
	if got := readMessage(t, c); got.Body != "four" || got.ID <= three.ID {
		t.Fatalf("live after replay %+v", got)
	}
}

// TestMessageIDsGrowWhenTheClockGoesBack: ids never repeat or shrink, even
// if the clock steps back.
func TestMessageIDsGrowWhenTheClockGoesBack(t *testing.T) {
	clock := &fakeClock{}
	clock.advance(time.Duration(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC).UnixNano()))
	h := newAppHarness(t, clock.now)
	c := h.dial(t, "/messages")
	waitFor(t, "the client joins", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.clients) == 1
	})
	h.deliver("a")
	a := readMessage(t, c)
	if want := clock.now().UnixMicro(); a.ID != want {
		t.Fatalf("id %d, want the receive time in µs %d", a.ID, want)
	}
	clock.advance(-time.Hour)
	h.deliver("b")
	if b := readMessage(t, c); b.ID != a.ID+1 {
		t.Fatalf("id after the clock stepped back %d, want %d", b.ID, a.ID+1)
	}
}

// TestAdminStream: the admin stream replays the hub's frames, ending with
// the connect line, then goes on live; it runs no commands.
func TestAdminStream(t *testing.T) {
	h := newAppHarness(t, nil)
	h.hub.Log("earlier line")
	c := h.dial(t, "/admin")
	for _, want := range []string{"earlier line", "ws client connected [ authentication ENABLED ]"} {
		if f := readFrame(t, c); f.Type != TypeLog || f.Msg != want {
			t.Fatalf("got %+v, want log %q", f, want)
		}
	}
	if err := c.Write(t.Context(), websocket.MessageText, []byte("quit")); err != nil {
		t.Fatal(err)
	}
	h.deliver("hi")
	// The next frames are the message's, not an echo of "quit".
	if f := readFrame(t, c); f.Msg != "#### NODE RECEIVED MESSAGE ####" {
		t.Fatalf("got %+v after a command, want the message's first line", f)
	}
}

// TestStreamsEndWithRun: when Run returns, every stream closes.
func TestStreamsEndWithRun(t *testing.T) {
	h := newAppHarness(t, nil)
	msgs, admin := h.dial(t, "/messages"), h.dial(t, "/admin")
	readFrame(t, admin) // connect line
	h.stop()
	if err := <-h.ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	h.ran <- nil // for the cleanup
	for name, c := range map[string]*websocket.Conn{"messages": msgs, "admin": admin} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, _, err := c.Read(ctx)
		cancel()
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("%s stream: read = %v, want a going-away close", name, err)
		}
	}
}

func readFrame(t *testing.T, c *websocket.Conn) Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %q: %v", b, err)
	}
	return f
}

// TestMessageFramePrefix: AppStreams.take tells message frames from log lines by the encoding's
// first bytes; the prefix must start every message frame, whatever its text, and no other frame.
func TestMessageFramePrefix(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for _, text := range []string{"", "hi", `{"type":"message",`, "\x1b[31m<b>\u202e"} {
		if b := NewFrame(TypeMessage, text, now).encode(); !bytes.HasPrefix(b, messageFramePrefix) {
			t.Errorf("message frame %s lacks the prefix %s", b, messageFramePrefix)
		}
		if b := NewFrame(TypeLog, text, now).encode(); bytes.HasPrefix(b, messageFramePrefix) {
			t.Errorf("log frame %s has the message prefix", b)
		}
	}
}
