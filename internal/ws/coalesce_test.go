package ws

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestFramesQueuedTogetherShareAWrite: frames the hub publishes together reach the client whole
// and in order, in far fewer writes to the connection than frames (one each before); a lone frame
// still leaves at once.
func TestFramesQueuedTogetherShareAWrite(t *testing.T) {
	hub := NewHub(nil)
	s, err := New(Config{Hub: hub, Commands: testCommands(t), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *coalescer, 1)
	s.accepted = func(c *coalescer) { conns <- c }
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := (&harness{hub: hub, srv: srv}).dial(t, testToken)
	var cw *coalescer
	select {
	case cw = <-conns:
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted")
	}
	for f := read(t, c); !strings.HasPrefix(f.Msg, "ws client connected"); f = read(t, c) {
	}

	const n = 40
	frames := make([]Frame, n)
	for i := range frames {
		frames[i] = NewFrame(TypeLog, fmt.Sprint("line ", i), hub.Now())
	}
	before := cw.writeCount()
	hub.PublishSeq(frames...)
	for i := range n {
		if f := read(t, c); f.Msg != fmt.Sprint("line ", i) {
			t.Fatalf("frame %d: %q", i, f.Msg)
		}
	}
	if w := cw.writeCount() - before; w > n/4 {
		t.Errorf("%d frames published together took %d writes, want a few", n, w)
	}

	before = cw.writeCount()
	hub.Publish(TypeLog, "alone")
	if f := read(t, c); f.Msg != "alone" {
		t.Fatalf("lone frame: %q", f.Msg)
	}
	if w := cw.writeCount() - before; w != 1 {
		t.Errorf("a lone frame took %d writes, want 1", w)
	}
}
