package ws

import (
	"encoding/json"
	"fmt"
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
