package ws

import (
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

// deliver hands the streams a received message as the node does, and publishes its admin frames
// as the admin console does (the admin stream shows them).
func (h *appHarness) deliver(text string) {
	now := h.hub.Now()
	h.hub.PublishSeq(NewFrame(TypeLog, "#### NODE RECEIVED MESSAGE ####", now), NewFrame(TypeLog, "Message: "+text, now),
		NewFrame(TypeMessage, text, now))
	h.streams.Deliver(text, now)
}

// joined waits until n message stream clients wait for messages.
func (h *appHarness) joined(t *testing.T, n int) {
	t.Helper()
	waitFor(t, "the clients join", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.waiting) == n
	})
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
	h.joined(t, 1)
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
	h.joined(t, 1)
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
	h.joined(t, 1)
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

// TestSlowReaderIsToldWhatItMissed: a flood that outruns a reader loses it no message silently:
// it reads every message still kept, in order, after one Missed frame naming the ids it lost;
// a reader that keeps up misses nothing; a reconnect with a ?since= older than what is kept gets
// the same Missed frame first.
func TestSlowReaderIsToldWhatItMissed(t *testing.T) {
	h := newAppHarness(t, nil)
	slow := h.dial(t, "/messages")
	slow.SetReadLimit(1 << 20)
	h.joined(t, 1)
	h.deliver("first")
	first := readMessage(t, slow)
	// The reader stops reading; a flood of more than MessageBuffer messages arrives, each big
	// enough that the socket's buffers hold only a few of them.
	const flood = 3 * MessageBuffer
	pad := strings.Repeat("x", 16<<10)
	for i := range flood {
		h.streams.Deliver("flood "+strconv.Itoa(i)+" "+pad, h.hub.Now())
	}
	h.streams.mu.Lock()
	kept := append([]AppMessage(nil), h.streams.buf...)
	h.streams.mu.Unlock()
	// Reading now, the reader gets runs of the flood in order; every gap is announced by a Missed
	// frame right before it that names the ids lost (after the last one read, before the next).
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	lastID, prev, read, gaps := first.ID, -1, 0, 0
	var announced *Missed
	for lastID != kept[len(kept)-1].ID {
		_, b, err := slow.Read(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", read, err)
		}
		if strings.Contains(string(b), `"type":"missed"`) {
			var m Missed
			if err := json.Unmarshal(b, &m); err != nil || announced != nil || m.After != lastID || m.Through <= lastID {
				t.Fatalf("missed frame %s after id %d (one pending: %v)", b, lastID, announced)
			}
			announced = &m
			continue
		}
		var m AppMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		idx, err := strconv.Atoi(strings.Fields(m.Body)[1])
		if err != nil || m.ID <= lastID {
			t.Fatalf("message %.20q id %d after id %d", m.Body, m.ID, lastID)
		}
		switch {
		case announced != nil && (idx <= prev+1 || m.ID <= announced.Through):
			t.Fatalf("after the missed frame %+v: message %d (id %d), the previous %d", announced, idx, m.ID, prev)
		case announced == nil && idx != prev+1:
			t.Fatalf("message %d after %d without a missed frame", idx, prev)
		}
		if announced != nil {
			gaps++
		}
		announced, prev, lastID = nil, idx, m.ID
		read++
	}
	if gaps == 0 || read >= flood || prev != flood-1 {
		t.Fatalf("read %d of %d messages, ending with %d, in %d runs: the flood did not outrun the reader", read, flood, prev, gaps+1)
	}
	// A reconnect from the first message's id: more than the buffer was delivered since.
	again := h.dial(t, "/messages?since="+strconv.FormatInt(first.ID, 10))
	again.SetReadLimit(1 << 20)
	_, b, err := again.Read(ctx)
	var m Missed
	if err != nil || json.Unmarshal(b, &m) != nil || m.Type != TypeMissed || m.After != first.ID || m.Through != kept[0].ID-1 && m.Through >= kept[0].ID {
		t.Fatalf("reconnect from an id no longer kept: %s, %v", b, err)
	}
	if got := readMessage(t, again); got != kept[0] {
		t.Fatalf("after the missed frame %+v, want the oldest kept %+v", got, kept[0])
	}
}

// TestAfterReportsWhatWasDropped: the cursor logic without a network: a client whose position is
// older than the first message kept gets the Missed frame naming the dropped ids, then what is
// kept; one that is current gets nothing.
func TestAfterReportsWhatWasDropped(t *testing.T) {
	a, err := NewAppStreams(NewHub(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Deliver("first", time.Now())
	seq, last := a.cursor(nil)
	if msgs, missed, _ := a.after(seq, last); len(msgs) != 0 || missed != nil {
		t.Fatalf("a current client got %v, %v", msgs, missed)
	}
	for i := range MessageBuffer + 10 {
		a.Deliver("m"+strconv.Itoa(i), time.Now())
	}
	msgs, missed, next := a.after(seq, last)
	if missed == nil || missed.After != last || missed.Through != a.buf[0].ID-1 && missed.Through >= a.buf[0].ID {
		t.Fatalf("missed %+v (last %d, first kept %d)", missed, last, a.buf[0].ID)
	}
	if len(msgs) != MessageBuffer || msgs[0].Body != "m10" || next != seq+MessageBuffer+10 {
		t.Fatalf("%d messages from %q, next %d", len(msgs), msgs[0].Body, next)
	}
	// ?since= the first message's id: the same answer; since the newest: nothing.
	s, l := a.cursor(&last)
	if _, missed, _ := a.after(s, l); missed == nil {
		t.Fatal("since an id no longer kept: no missed frame")
	}
	newest := a.buf[len(a.buf)-1].ID
	s, l = a.cursor(&newest)
	if msgs, missed, _ := a.after(s, l); len(msgs) != 0 || missed != nil {
		t.Fatalf("since the newest: %d, %v", len(msgs), missed)
	}
}
