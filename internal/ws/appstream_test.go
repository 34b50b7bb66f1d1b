package ws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/wait"
)

// memInbox is the durable inbox as the courier keeps it: messages by seq, a seq that grows and is
// never reused, deletes. It outlives the streams (a restart of the node is a new AppStreams over
// the same memInbox).
type memInbox struct {
	mu   sync.Mutex
	last uint64
	msgs []store.InboxMessage // by seq
	err  error                // every Inbox call fails with it when set
}

// put stores a message and returns it with its seq.
func (in *memInbox) put(m store.InboxMessage) store.InboxMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.last++
	m.Seq = in.last
	in.msgs = append(in.msgs, m)
	return m
}

// remove deletes the kept messages whose seq f accepts (the app read them).
func (in *memInbox) remove(f func(seq uint64) bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.msgs = slices.DeleteFunc(in.msgs, func(m store.InboxMessage) bool { return f(m.Seq) })
}

func (in *memInbox) fail(err error) {
	in.mu.Lock()
	in.err = err
	in.mu.Unlock()
}

func (in *memInbox) Inbox(since uint64, limit int) ([]store.InboxMessage, int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return nil, 0, in.err
	}
	var out []store.InboxMessage
	for _, m := range in.msgs {
		if m.Seq > since && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, len(in.msgs), nil
}

// appHarness runs AppStreams over a hub and an inbox, served at /messages (?since=) and
// /admin.
type appHarness struct {
	hub     *Hub
	inbox   *memInbox
	streams *AppStreams
	srv     *httptest.Server
	stop    context.CancelFunc
	ran     chan error
}

func newAppHarness(t *testing.T, inbox *memInbox) *appHarness {
	t.Helper()
	if inbox == nil {
		inbox = &memInbox{}
	}
	hub := NewHub(nil)
	a, err := NewAppStreams(hub, inbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/messages", func(w http.ResponseWriter, r *http.Request) {
		var since *uint64
		if v := r.URL.Query().Get("since"); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
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
	h := &appHarness{hub: hub, inbox: inbox, streams: a, srv: srv, stop: cancel, ran: make(chan error, 1)}
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

// deliver stores a received message in the inbox and tells the streams, as the courier does, and
// publishes its admin frames as the admin console does (the admin stream shows them).
func (h *appHarness) deliver(text string) store.InboxMessage {
	return h.deliverMessage(store.InboxMessage{Body: []byte(text)})
}

func (h *appHarness) deliverMessage(m store.InboxMessage) store.InboxMessage {
	now := h.hub.Now()
	if m.Received.IsZero() {
		m.Received = now
	}
	m.ID = [16]byte{0xab, byte(h.inbox.last + 1)}
	h.hub.PublishSeq(NewFrame(TypeLog, "#### NODE RECEIVED MESSAGE ####", now), NewFrame(TypeLog, "Message: "+string(m.Body), now),
		NewFrame(TypeMessage, string(m.Body), now))
	m = h.inbox.put(m)
	h.streams.Event(EventReceived, m.ID, "", m)
	return m
}

// joined waits until n message stream clients are connected.
func (h *appHarness) joined(t *testing.T, n int) {
	t.Helper()
	waitFor(t, "the clients join", func() bool {
		h.streams.mu.Lock()
		defer h.streams.mu.Unlock()
		return len(h.streams.clients) == n
	})
}

func readRaw(t *testing.T, c *websocket.Conn) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("frame %q is not text", b)
	}
	return b
}

func readMessage(t *testing.T, c *websocket.Conn) AppMessage {
	t.Helper()
	b := readRaw(t, c)
	var m AppMessage
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || m.Type != TypeAppMessage {
		t.Fatalf("frame %q is not an AppMessage", b)
	}
	return m
}

// TestMessageStream: only received messages reach the stream, each with its inbox seq as id,
// the exact text, the receive time and the sender's message id; messages received before the
// client connected are not replayed.
func TestMessageStream(t *testing.T) {
	h := newAppHarness(t, nil)
	h.deliver("before")
	c := h.dial(t, "/messages")
	h.joined(t, 1)
	h.hub.Log("a log line")
	sent := h.deliver("hello\x1b[31m <b>")
	h.deliver("world")
	first := readMessage(t, c)
	second := readMessage(t, c)
	if first.Body != "hello\x1b[31m <b>" || second.Body != "world" || first.Type != "message" {
		t.Fatalf("got %+v, %+v", first, second)
	}
	if first.ID != 2 || second.ID != 3 {
		t.Fatalf("ids %d, %d: want the inbox seqs 2, 3", first.ID, second.ID)
	}
	if !tsPattern.MatchString(first.ReceivedAt) || first.ReceivedAt != sent.Received.UTC().Format(TimeFormat) {
		t.Fatalf("receivedAt %q", first.ReceivedAt)
	}
	if first.MessageID != "0xab020000000000000000000000000000" || first.Reply || first.InReplyTo != "" || first.RepliesLeft != 0 {
		t.Fatalf("message fields %+v", first)
	}
}

// TestMessageFrameFields: a reply names the message it answers, reply blocks are counted (never
// sent), and the body goes out as JSON text: exact, with <, > and & escaped for HTML, and bytes
// that are not UTF-8 as U+FFFD.
func TestMessageFrameFields(t *testing.T) {
	h := newAppHarness(t, nil)
	c := h.dial(t, "/messages")
	h.joined(t, 1)
	h.deliverMessage(store.InboxMessage{Body: []byte("an answer"), Reply: true, InReplyTo: [16]byte{1, 2, 3}})
	h.deliverMessage(store.InboxMessage{Body: []byte("ask me <script>\xff"), ReplyBlocks: [][]byte{{1}, {2}, {3}}})
	reply := readMessage(t, c)
	if !reply.Reply || reply.InReplyTo != "0x01020300000000000000000000000000" || reply.RepliesLeft != 0 {
		t.Fatalf("reply frame %+v", reply)
	}
	b := readRaw(t, c)
	for _, want := range []string{`"body":"ask me \u003cscript\u003e\ufffd"`, `"repliesLeft":3`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("frame %s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), `"reply"`) || strings.Contains(string(b), "inReplyTo") {
		t.Fatalf("a message that is no reply says so: %s", b)
	}
}

// TestMessageStreamSince: ?since=<seq> first replays the kept messages after that seq, then
// goes on live.
func TestMessageStreamSince(t *testing.T) {
	h := newAppHarness(t, nil)
	live := h.dial(t, "/messages")
	h.joined(t, 1)
	for _, s := range []string{"one", "two", "three"} {
		h.deliver(s)
	}
	one, two, three := readMessage(t, live), readMessage(t, live), readMessage(t, live)
	c := h.dial(t, "/messages?since="+strconv.FormatUint(one.ID, 10))
	if got := readMessage(t, c); got != two {
		t.Fatalf("first replayed %+v, want %+v", got, two)
	}
	if got := readMessage(t, c); got != three {
		t.Fatalf("second replayed %+v, want %+v", got, three)
	}
	h.deliver("four")
	if got := readMessage(t, c); got.Body != "four" || got.ID != three.ID+1 {
		t.Fatalf("live after replay %+v", got)
	}
}

// TestMessageStreamAcrossRestarts: the ids are the inbox's seqs, so they go on growing after a
// restart, and a client that reconnects with the last seq it saw gets what arrived while the
// node (or its stream) was down, kept in the inbox, and nothing twice.
func TestMessageStreamAcrossRestarts(t *testing.T) {
	inbox := &memInbox{}
	h := newAppHarness(t, inbox)
	c := h.dial(t, "/messages")
	h.joined(t, 1)
	h.deliver("before the restart")
	last := readMessage(t, c)
	h.stop()
	<-h.ran
	h.ran <- nil // for the cleanup
	// While no stream runs, the courier keeps what arrives.
	inbox.put(store.InboxMessage{Body: []byte("while down"), Received: time.Now()})
	again := newAppHarness(t, inbox)
	c = again.dial(t, "/messages?since="+strconv.FormatUint(last.ID, 10))
	if m := readMessage(t, c); m.Body != "while down" || m.ID != last.ID+1 {
		t.Fatalf("after the restart %+v, want the message kept meanwhile", m)
	}
	again.joined(t, 1)
	if m := again.deliver("after"); m.Seq != last.ID+2 {
		t.Fatalf("seq %d", m.Seq)
	}
	if m := readMessage(t, c); m.Body != "after" || m.ID != last.ID+2 {
		t.Fatalf("live after the restart %+v", m)
	}
	// A client without since after a restart gets only what arrives after it connected, though
	// the stream knows no seq yet.
	fresh := newAppHarness(t, inbox)
	nc := fresh.dial(t, "/messages")
	fresh.joined(t, 1)
	fresh.deliver("new")
	if m := readMessage(t, nc); m.Body != "new" {
		t.Fatalf("a new client after a restart got %+v first", m)
	}
}

// TestSinceBeyondTheNewest: a since above every seq the inbox handed out (another node's, or a
// time-based id of the releases before) names no message: the client goes on live instead of
// waiting forever, also when the stream has seen no message yet since the node started.
func TestSinceBeyondTheNewest(t *testing.T) {
	const old = "1795935600123456"
	inbox := &memInbox{}
	inbox.put(store.InboxMessage{Body: []byte("kept from before"), Received: time.Now()})
	h := newAppHarness(t, inbox)
	c := h.dial(t, "/messages?since="+old)
	h.joined(t, 1)
	h.deliver("first since the start")
	if m := readMessage(t, c); m.Body != "first since the start" || m.ID != 2 {
		t.Fatalf("got %+v", m)
	}
	// Now the stream knows the newest seq: a since beyond it starts there.
	c2 := h.dial(t, "/messages?since="+old)
	h.joined(t, 2)
	h.deliver("second")
	if m := readMessage(t, c2); m.Body != "second" {
		t.Fatalf("got %+v", m)
	}
}

// TestEventFrames: the fate of this node's messages (delivered, failed) and a message given up
// incomplete reach the clients connected then, with the id as the REST API writes it; they are
// not replayed to a client that connects later; other kinds are ignored.
func TestEventFrames(t *testing.T) {
	h := newAppHarness(t, nil)
	c := h.dial(t, "/messages")
	h.joined(t, 1)
	id := [16]byte{0xfe, 0xed}
	h.streams.Event("sent", id, "", store.InboxMessage{})
	h.streams.Event(EventDelivered, id, "", store.InboxMessage{})
	h.streams.Event(EventFailed, id, "no acknowledgement after 8 rounds", store.InboxMessage{})
	h.streams.Event(EventIncomplete, id, "arrived incomplete: 3 of 5 fragments", store.InboxMessage{})
	for _, want := range []string{
		`{"type":"delivered","id":"0xfeed0000000000000000000000000000"}`,
		`{"type":"failed","id":"0xfeed0000000000000000000000000000","reason":"no acknowledgement after 8 rounds"}`,
		`{"type":"incomplete","id":"0xfeed0000000000000000000000000000","reason":"arrived incomplete: 3 of 5 fragments"}`,
	} {
		if got := readRaw(t, c); string(got) != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	late := h.dial(t, "/messages?since=0")
	h.joined(t, 2)
	h.deliver("after the events")
	if m := readMessage(t, late); m.Body != "after the events" {
		t.Fatalf("a later client got %+v first", m)
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

// TestSlowReaderLosesNothing: a flood that outruns a reader loses it no message: the messages
// wait in the inbox, and the reader gets every one, in order, once; those the app read and
// deleted before the reader reached them are named by one Missed frame each run, right before
// the next message kept. A reconnect with a ?since= older than what is kept gets the same frame
// first.
func TestSlowReaderLosesNothing(t *testing.T) {
	h := newAppHarness(t, nil)
	slow := h.dial(t, "/messages")
	slow.SetReadLimit(1 << 20)
	h.joined(t, 1)
	first := readMessage(t, func() *websocket.Conn { h.deliver("first"); return slow }())
	// The reader stops reading; a flood of 3000 messages arrives, each big enough that the
	// socket's buffers hold only a few of them, and the app deletes every tenth message after
	// the first 1000 (it read them elsewhere).
	const flood = 3000
	pad := strings.Repeat("x", 16<<10)
	for i := range flood {
		h.deliver("flood " + strconv.Itoa(i) + " " + pad)
	}
	h.inbox.remove(func(seq uint64) bool { return seq > first.ID+1000 && seq%10 == 0 })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	lastID, read, gaps := first.ID, 0, 0
	var announced *Missed
	for lastID != first.ID+flood {
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
		f := strings.Fields(m.Body)
		if len(f) < 2 {
			t.Fatalf("message %d %.40q after %d", m.ID, m.Body, lastID)
		}
		idx, err := strconv.Atoi(f[1])
		if err != nil || m.ID != first.ID+1+uint64(idx) {
			t.Fatalf("message %.20q id %d", m.Body, m.ID)
		}
		deleted := m.ID > first.ID+1000 && m.ID%10 == 0
		switch {
		case deleted:
			t.Fatalf("got the deleted message %d", m.ID)
		case m.ID == lastID+1 && announced != nil:
			t.Fatalf("missed frame %+v before the next message %d", announced, m.ID)
		case m.ID != lastID+1 && (announced == nil || announced.Through != m.ID-1):
			t.Fatalf("message %d after %d, missed frame %+v", m.ID, lastID, announced)
		}
		if announced != nil {
			gaps++
		}
		announced, lastID = nil, m.ID
		read++
	}
	if want := flood - 200; read != want || gaps != 200 {
		t.Fatalf("read %d messages (want %d) after %d missed frames (want 200)", read, want, gaps)
	}
	// A reconnect from the first message's seq, which is deleted with the nine after it.
	h.inbox.remove(func(seq uint64) bool { return seq <= first.ID+10 })
	again := h.dial(t, "/messages?since="+strconv.FormatUint(first.ID, 10))
	again.SetReadLimit(1 << 20)
	var m Missed
	if b := readRaw(t, again); json.Unmarshal(b, &m) != nil || m.Type != TypeMissed || m.After != first.ID || m.Through != first.ID+10 {
		t.Fatalf("reconnect from an id no longer kept: %s", b)
	}
	if got := readMessage(t, again); got.ID != first.ID+11 {
		t.Fatalf("after the missed frame %+v, want the oldest kept", got)
	}
}

// TestSlowEventReaderIsDropped: the delivered and failed frames wait in memory: a client that
// leaves more than EventQueue of them unread is marked slow, and a slow client is closed as too
// slow (1008).
func TestSlowEventReaderIsDropped(t *testing.T) {
	a, err := NewAppStreams(NewHub(nil), &memInbox{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idle := &appClient{wake: make(chan struct{}, 1), events: make(chan []byte, EventQueue), slow: make(chan struct{})}
	a.join(idle, nil)
	for range EventQueue {
		a.Event(EventDelivered, [16]byte{1}, "", store.InboxMessage{})
	}
	select {
	case <-idle.slow:
		t.Fatal("marked slow with a full queue")
	default:
	}
	a.Event(EventFailed, [16]byte{1}, "", store.InboxMessage{})
	select {
	case <-idle.slow:
	default:
		t.Fatal("a client with more than EventQueue frames unread is not marked slow")
	}

	h := newAppHarness(t, nil)
	slow := h.dial(t, "/messages")
	h.joined(t, 1)
	h.streams.mu.Lock()
	for c := range h.streams.clients {
		c.once.Do(func() { close(c.slow) })
	}
	h.streams.mu.Unlock()
	h.streams.Event(EventDelivered, [16]byte{1}, "", store.InboxMessage{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		_, _, err := slow.Read(ctx)
		if err == nil {
			continue
		}
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("read = %v, want a policy-violation close", err)
		}
		break
	}
}

// TestInboxFailureClosesTheStream: a client whose inbox read fails is closed with 1011 (it
// reconnects with the last seq it saw and loses nothing).
func TestInboxFailureClosesTheStream(t *testing.T) {
	h := newAppHarness(t, nil)
	c := h.dial(t, "/messages?since=0")
	h.joined(t, 1)
	h.inbox.fail(errors.New("store is closed"))
	h.deliver("lost?")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusInternalError {
		t.Fatalf("read = %v, want an internal-error close", err)
	}
}

// TestJoin: where a client starts: after its since, at the newest seq without one (or at the
// first message received after it joined when the stream has seen none yet), and at the newest
// when its since is beyond it.
func TestJoin(t *testing.T) {
	a, err := NewAppStreams(NewHub(nil), &memInbox{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := func(n uint64) *uint64 { return &n }
	if got := a.join(&appClient{}, nil); got != 1<<64-1 {
		t.Fatalf("no since, nothing received: %d", got)
	}
	if got := a.join(&appClient{}, seq(7)); got != 7 {
		t.Fatalf("since 7, nothing received: %d", got)
	}
	c := &appClient{wake: make(chan struct{}, 1)}
	a.join(c, nil)
	a.Event(EventReceived, [16]byte{}, "", store.InboxMessage{Seq: 12})
	a.Event(EventReceived, [16]byte{}, "", store.InboxMessage{Seq: 13})
	if a.firstSeen(c) != 12 {
		t.Fatalf("first seen %d, want 12", a.firstSeen(c))
	}
	for _, tc := range []struct {
		since *uint64
		want  uint64
	}{{nil, 13}, {seq(0), 0}, {seq(5), 5}, {seq(13), 13}, {seq(14), 13}, {seq(1 << 60), 13}} {
		if got := a.join(&appClient{}, tc.since); got != tc.want {
			t.Errorf("join(%v) = %d, want %d", tc.since, got, tc.want)
		}
	}
	if _, err := NewAppStreams(NewHub(nil), nil, nil); err == nil {
		t.Fatal("streams without an inbox")
	}
}
