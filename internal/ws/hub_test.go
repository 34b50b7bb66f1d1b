package ws

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"
)

const connected = "ws client connected [ authentication ENABLED ]"

// queued drains what the hub queued for c: each frame's text, with "(replay)" after a replayed
// one.
func queued(t *testing.T, c *client) []string {
	t.Helper()
	var out []string
	for {
		select {
		case b := <-c.queue:
			var f Frame
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatalf("frame %s: %v", b, err)
			}
			if f.Replay {
				f.Msg += " (replay)"
			}
			out = append(out, f.Msg)
		default:
			return out
		}
	}
}

// TestReplayLeavesOutOtherClientsConnectLines: a client's connect line reaches the clients
// connected then and ends its own replay, but no later client's replay shows it.
func TestReplayLeavesOutOtherClientsConnectLines(t *testing.T) {
	h := NewHub(func() time.Time { return time.Unix(0, 0) })
	h.Log("before")
	first := newClient(1024)
	h.join(first, connected)
	h.Log("between")
	second := newClient(1024)
	h.join(second, connected)
	h.Log("after")

	if got, want := queued(t, first), []string{"before (replay)", connected + " (replay)", "between", connected, "after"}; !slices.Equal(got, want) {
		t.Errorf("first client got %q, want %q", got, want)
	}
	if got, want := queued(t, second), []string{"before (replay)", "between (replay)", connected + " (replay)", "after"}; !slices.Equal(got, want) {
		t.Errorf("second client got %q, want %q", got, want)
	}

	// However many clients came and went, a new one's replay is the node's frames and its own line.
	for range 3 * ReplaySize {
		c := newClient(1024)
		h.join(c, connected)
		h.leave(c)
	}
	late := newClient(1024)
	h.join(late, connected)
	if got, want := queued(t, late), []string{"before (replay)", "between (replay)", "after (replay)", connected + " (replay)"}; !slices.Equal(got, want) {
		t.Errorf("a client after %d others got %q, want %q", 3*ReplaySize, got, want)
	}
}

// TestReplayIsReplaySizeFrames: a full ring gives a new client ReplaySize frames, the last
// ReplaySize-1 published and its connect line.
func TestReplayIsReplaySizeFrames(t *testing.T) {
	h := NewHub(nil)
	for i := 1; i <= 2*ReplaySize; i++ {
		h.Log(fmt.Sprintf("line %d", i))
	}
	c := newClient(1024)
	h.join(c, connected)
	var want []string
	for i := ReplaySize + 2; i <= 2*ReplaySize; i++ {
		want = append(want, fmt.Sprintf("line %d (replay)", i))
	}
	want = append(want, connected+" (replay)")
	if got := queued(t, c); !slices.Equal(got, want) {
		t.Fatalf("replay of %d frames, want %d: %q", len(got), len(want), got)
	}
}

// TestConnectionLinesKeepOutOfReplay: however many connection lines (refused tokens, dropped
// clients) the hub publishes, a new client's replay still holds the node's frames, with the last
// ConnReplaySize connection lines among them in the order they were published.
func TestConnectionLinesKeepOutOfReplay(t *testing.T) {
	h := NewHub(func() time.Time { return time.Unix(0, 0) })
	live := newClient(4096)
	h.join(live, connected)
	queued(t, live)
	var want []string
	for i := 1; i <= ReplaySize-1; i++ {
		h.Log(fmt.Sprintf("event %d", i))
		want = append(want, fmt.Sprintf("event %d (replay)", i))
		for j := range 3 {
			h.LogConnection(fmt.Sprintf("refused %d.%d", i, j))
		}
	}
	// The last ConnReplaySize connection lines come after the last event: the replay ends with
	// them, then the new client's own line.
	for j := range ConnReplaySize {
		h.LogConnection(fmt.Sprintf("dropped %d", j))
		want = append(want, fmt.Sprintf("dropped %d (replay)", j))
	}
	want = append(want, connected+" (replay)")
	c := newClient(1024)
	h.join(c, connected)
	if got := queued(t, c); !slices.Equal(got, want) {
		t.Fatalf("replay after %d connection lines:\n got %q\nwant %q", 3*(ReplaySize-1)+ConnReplaySize, got, want)
	}
	// Live, a connection line reaches the clients like any frame.
	if got := queued(t, live); len(got) != 4*(ReplaySize-1)+ConnReplaySize+1 {
		t.Errorf("a live client got %d frames, want every one: %d", len(got), 4*(ReplaySize-1)+ConnReplaySize+1)
	}
}

// TestConnectionLinesInterleave: the kept connection lines take their place among the node's
// frames by when they were published.
func TestConnectionLinesInterleave(t *testing.T) {
	h := NewHub(nil)
	h.Log("a")
	h.LogConnection("refused 1")
	h.Log("b")
	h.LogConnection("refused 2")
	c := newClient(1024)
	h.join(c, connected)
	want := []string{"a (replay)", "refused 1 (replay)", "b (replay)", "refused 2 (replay)", connected + " (replay)"}
	if got := queued(t, c); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestLogHandlerConnectionMark: the log handler publishes a record marked aboutConnection as a
// connection line without the mark, any other as a node frame.
func TestLogHandlerConnectionMark(t *testing.T) {
	h := NewHub(nil)
	log := slog.New(NewLogHandler(h, slog.LevelDebug)).With("component", "admin")
	log.Info("an event")
	for range 2 * ReplaySize {
		log.Warn("websocket client refused: bad token", "remote", "127.0.0.1:1", aboutConnection)
	}
	log.Info("another event")
	c := newClient(1024)
	h.join(c, connected)
	got := queued(t, c)
	if len(got) != 2+ConnReplaySize+1 {
		t.Fatalf("replay of %d frames, want the 2 events, %d connection lines and the connect line: %q", len(got), ConnReplaySize, got)
	}
	if got[0] != `level=INFO msg="an event" component=admin (replay)` || got[len(got)-2] != `level=INFO msg="another event" component=admin (replay)` {
		t.Errorf("events not kept: %q", got)
	}
	if want := `level=WARN msg="websocket client refused: bad token" component=admin remote=127.0.0.1:1 (replay)`; got[1] != want {
		t.Errorf("connection line %q, want %q", got[1], want)
	}
}
