package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/console"
	"github.com/relayd/relayd/internal/ws"
)

// ErrAuth means a node refused the API token.
var ErrAuth = errors.New("the node refused the API token")

// watcher reads one recipient's admin frames and hands the tool's own
// messages to the tracker.
type watcher struct {
	node  int // index of the node whose admin server this is
	c     *websocket.Conn
	t     *tracker
	clock Clock

	lastMessage  string    // text of the last "Message: " line, for its "Latency:" line
	lastReceived time.Time // time of the last "NODE RECEIVED MESSAGE" line, for the message frame after it
	foreign      int       // message frames that are not this run's
}

// dialWatcher connects to the admin server at rawURL and returns once the
// server has registered the connection (its first frame, the start of the
// replay, has arrived), so no delivery after the return can be missed.
func dialWatcher(ctx context.Context, node int, rawURL, token string, t *tracker, clock Clock) (*watcher, error) {
	u, err := console.AdminURL(rawURL, token)
	if err != nil {
		return nil, err
	}
	c, _, err := websocket.Dial(ctx, u.String(), nil)
	if err != nil {
		return nil, console.RedactError(fmt.Errorf("connect to the admin server %s://%s: %w", u.Scheme, u.Host, err), token)
	}
	c.SetReadLimit(1 << 20)
	w := &watcher{node: node, c: c, t: t, clock: clock}
	f, err := w.read(ctx)
	if err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("admin server %s: first frame: %w", u.Host, err)
	}
	if f.Type == ws.TypeAuthFailed {
		c.CloseNow()
		return nil, ErrAuth
	}
	w.handle(f)
	return w, nil
}

func (w *watcher) read(ctx context.Context) (ws.Frame, error) {
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return ws.Frame{}, err
	}
	var f ws.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		return ws.Frame{}, fmt.Errorf("bad frame from the admin server: %w", err)
	}
	return f, nil
}

// handle processes one frame. The node publishes a received message as
// "#### NODE RECEIVED MESSAGE [<time received>] ####", "Message: <text>",
// "Latency: <n> ms" and the message frame, back to back.
func (w *watcher) handle(f ws.Frame) {
	switch f.Type {
	case ws.TypeMessage:
		at := w.clock.Now()
		if !w.t.deliver(f.Msg, w.node, at) {
			w.foreign++
		} else if !w.lastReceived.IsZero() {
			w.t.nodeReceived(f.Msg, w.node, w.lastReceived)
		}
		w.lastReceived = time.Time{}
	case ws.TypeLog:
		if ts, ok := receivedLine(f.Msg); ok {
			w.lastReceived = ts
		} else if text, ok := strings.CutPrefix(f.Msg, "Message: "); ok {
			w.lastMessage = text
		} else if d, ok := parseNodeLatency(f.Msg); ok && w.lastMessage != "" {
			w.t.nodeLatency(w.lastMessage, w.node, d)
			w.lastMessage = ""
		}
	}
}

// receivedLine reads the time of a "#### NODE RECEIVED MESSAGE [<ws.TimeFormat>] ####" line.
func receivedLine(line string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(line, "#### NODE RECEIVED MESSAGE [")
	if !ok {
		return time.Time{}, false
	}
	ts, _, ok := strings.Cut(rest, "]")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(ws.TimeFormat, ts)
	return t, err == nil
}

// run reads frames until ctx ends or the connection fails; it returns nil
// when ctx ended.
func (w *watcher) run(ctx context.Context) error {
	for {
		f, err := w.read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("admin connection: %w", err)
		}
		w.handle(f)
	}
}

func (w *watcher) close() { w.c.Close(websocket.StatusNormalClosure, "bench done") }
