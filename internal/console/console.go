// Package console is relayctl's client of a node's WebSocket admin server:
// it connects with the API token, prints every frame the node pushes, and
// sends the operator's command lines, either interactively (with history and
// line editing) or one command at a time for scripts. It must not import
// other relayd packages except ws for the frame format.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/ws"
)

// ErrAuth means the node refused the token.
var ErrAuth = errors.New("the node refused the API token")

// Conn is a connection to a node's admin server.
type Conn struct {
	c      *websocket.Conn
	frames chan ws.Frame
	err    error // set before frames is closed
}

// Dial connects to the admin server at rawURL (ws://host:port, http and
// https are turned into ws and wss) with token.
func Dial(ctx context.Context, rawURL, token string) (*Conn, error) {
	u, err := AdminURL(rawURL, token)
	if err != nil {
		return nil, err
	}
	c, _, err := websocket.Dial(ctx, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s://%s: %w", u.Scheme, u.Host, err)
	}
	c.SetReadLimit(1 << 20)
	conn := &Conn{c: c, frames: make(chan ws.Frame, 256)}
	first, err := conn.readFrame(ctx)
	if err != nil {
		c.CloseNow()
		return nil, err
	}
	if first.Type == ws.TypeAuthFailed {
		c.CloseNow()
		return nil, ErrAuth
	}
	go conn.readLoop(first)
	return conn, nil
}

func (c *Conn) readFrame(ctx context.Context) (ws.Frame, error) {
	_, b, err := c.c.Read(ctx)
	if err != nil {
		return ws.Frame{}, err
	}
	var f ws.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		return ws.Frame{}, fmt.Errorf("bad frame from node: %w", err)
	}
	return f, nil
}

func (c *Conn) readLoop(first ws.Frame) {
	defer close(c.frames)
	c.frames <- first
	for {
		f, err := c.readFrame(context.Background())
		if err != nil {
			c.err = err
			return
		}
		c.frames <- f
	}
}

// AdminURL turns an admin server address (ws://host:port; http and https
// become ws and wss) into the URL to dial with token.
func AdminURL(rawURL, token string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid admin URL %q: want ws://host:port", rawURL)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("invalid admin URL %q: scheme must be ws", rawURL)
	}
	q := u.Query()
	q.Set("apiToken", token)
	u.RawQuery = q.Encode()
	return u, nil
}

// Frames delivers every frame the node sends, starting with the replay of
// recent frames; it is closed when the connection ends (see Err).
func (c *Conn) Frames() <-chan ws.Frame { return c.frames }

// Err is why the connection ended, once Frames is closed.
func (c *Conn) Err() error {
	if websocket.CloseStatus(c.err) == websocket.StatusNormalClosure {
		return nil
	}
	return c.err
}

// Send sends one command line.
func (c *Conn) Send(ctx context.Context, line string) error {
	return c.c.Write(ctx, websocket.MessageText, []byte(line))
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close(websocket.StatusNormalClosure, "bye") }

// Format renders a frame for a terminal: "HH:MM:SS.mmm msg", with received
// messages marked. Everything taken from the frame goes through ws.Escape:
// a message's text comes from a remote peer, and a log line may quote one,
// so nothing in a frame can reach the terminal as a control sequence.
func Format(f ws.Frame) string {
	ts := ws.Escape(f.TS)
	if t, err := time.Parse(ws.TimeFormat, f.TS); err == nil {
		ts = t.Local().Format("15:04:05.000")
	}
	if f.Type == ws.TypeMessage {
		return ts + " [message] " + ws.Escape(f.Msg)
	}
	return ts + " " + ws.Escape(f.Msg)
}

// RunOnce sends line and writes the command's output (the frames after its
// echo, escaped with ws.Escape) to out until the node has been quiet for
// idle, then returns.
func RunOnce(ctx context.Context, c *Conn, line string, out io.Writer, idle time.Duration) error {
	line = strings.TrimRight(line, "\r\n")
	if err := c.Send(ctx, line); err != nil {
		return err
	}
	// Skip the replay: wait for the echo of our own line, which the node
	// escapes like every log line.
	echo := ws.Escape("admin > " + line)
	echoed := false
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		case f, ok := <-c.Frames():
			if !ok {
				return c.Err()
			}
			if !echoed {
				echoed = f.Msg == echo
				if echoed {
					timer.Reset(idle)
				}
				continue
			}
			if f.Type == ws.TypeLog && strings.HasPrefix(f.Msg, "level=") {
				continue // the node's own log lines
			}
			fmt.Fprintln(out, ws.Escape(f.Msg))
			timer.Reset(idle)
		}
	}
}
