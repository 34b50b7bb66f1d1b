// Package console is relayctl's client of a node's WebSocket admin server:
// it connects with the API token, prints every frame the node pushes, and
// sends the operator's command lines, either interactively (with history,
// line editing and completion) or one command at a time for scripts. It
// tells the replay, the node's live frames and the reply to its own
// commands apart by the frames' marks (ws.Frame's Replay and Reply), never
// by their text. The token never appears in what it prints. It must not
// import other relayd packages except ws for the frame format.
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

// Conn is a connection to a node's admin server.
type Conn struct {
	c      *websocket.Conn
	frames chan ws.Frame
	done   chan struct{} // closed once err is set, before frames is closed
	err    error
}

// Dial connects to the admin server at rawURL (ws://host:port, http and
// https are turned into ws and wss) with token. Its errors never carry the
// token.
func Dial(ctx context.Context, rawURL, token string) (*Conn, error) {
	u, err := AdminURL(rawURL, token)
	if err != nil {
		return nil, RedactError(err, token)
	}
	c, _, err := websocket.Dial(ctx, u.String(), nil)
	if err != nil {
		return nil, RedactError(fmt.Errorf("connect to %s://%s: %w", u.Scheme, u.Host, err), token)
	}
	c.SetReadLimit(1 << 20)
	conn := &Conn{c: c, frames: make(chan ws.Frame, 256), done: make(chan struct{})}
	first, err := conn.readFrame(ctx)
	if err != nil {
		c.CloseNow()
		return nil, RedactError(fmt.Errorf("connect to %s://%s: %w", u.Scheme, u.Host, err), token)
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
			close(c.done)
			return
		}
		c.frames <- f
	}
}

// AdminURL turns an admin server address (ws://host:port; http and https
// become ws and wss) into the URL to dial with token. Its errors show the
// address with any apiToken parameter redacted.
func AdminURL(rawURL, token string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid admin URL %q: want ws://host:port", Redact(rawURL, token))
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("invalid admin URL %q: scheme must be ws", Redact(rawURL, token))
	}
	q := u.Query()
	q.Set("apiToken", token)
	u.RawQuery = q.Encode()
	return u, nil
}

// Frames delivers every frame the node sends, starting with the replay of
// recent frames; it is closed when the connection ends (see Err).
func (c *Conn) Frames() <-chan ws.Frame { return c.frames }

// Err says why the connection ended, once Frames is closed: ErrClosed
// wrapped with the reason (the node shutting down, dropping this client, or
// the network). Before that it is nil.
func (c *Conn) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	var ce websocket.CloseError
	switch {
	case errors.As(c.err, &ce) && ce.Code == websocket.StatusGoingAway:
		return fmt.Errorf("%w: the node is shutting down", ErrClosed)
	case errors.As(c.err, &ce) && ce.Code == websocket.StatusNormalClosure:
		return fmt.Errorf("%w: the node closed it", ErrClosed)
	case errors.As(c.err, &ce):
		return fmt.Errorf("%w: the node closed it (%s)", ErrClosed, ws.Escape(ce.Reason))
	case errors.Is(c.err, io.EOF) || errors.Is(c.err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: the node went away without closing it (killed, or the network failed)", ErrClosed)
	}
	return fmt.Errorf("%w: %s", ErrClosed, ws.Escape(c.err.Error()))
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

// RunOnce sends line as a command and writes its reply, each line escaped
// with ws.Escape, to out. The replay is skipped; frames the node publishes
// meanwhile (its log lines, received messages) are written to logs with
// Format as they arrive, so a long command shows its progress; logs may be
// nil. RunOnce returns when the reply has ended: nil, or ErrCommandFailed when
// the node marked it as a failure; or with an error wrapping ErrClosed when the
// connection ends first.
func RunOnce(ctx context.Context, c *Conn, line string, out, logs io.Writer) error {
	line = strings.TrimRight(line, "\r\n")
	if err := c.Send(ctx, line); err != nil {
		return fmt.Errorf("%w: sending the command: %s", ErrClosed, ws.Escape(err.Error()))
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case f, ok := <-c.Frames():
			if !ok {
				return fmt.Errorf("before the command's reply ended: %w", c.Err())
			}
			switch f.Reply {
			case ws.ReplyEcho:
			case ws.ReplyOutput, ws.ReplyEnd:
				fmt.Fprintln(out, ws.Escape(f.Msg))
				if f.Reply == ws.ReplyEnd && f.Error {
					return ErrCommandFailed
				}
				if f.Reply == ws.ReplyEnd {
					return nil
				}
			default:
				if !f.Replay && logs != nil {
					fmt.Fprintln(logs, Format(f))
				}
			}
		}
	}
}
