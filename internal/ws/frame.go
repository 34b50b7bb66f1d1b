// Package ws serves the node's WebSockets: the admin server (JSON frames {type, msg, ts}, a
// replay buffer of recent frames for new clients, marked as replayed, bounded per-client queues,
// token authentication by query parameter or cookie, and command lines handed to an Interpreter
// whose echo and output reach only the client that sent them, marked as its reply, within a
// per-client rate limit), the web console's page, and the REST port's app streams (AppStreams:
// the messages this node received, read from its durable inbox by seq, what became of its own
// messages, and the admin stream read-only). Log frames are terminal text with every control
// character escaped (Escape).
//
// It is the transport of the console, not its language: the commands and the text they print
// are internal/admin's. Of relayd's packages it imports only internal/webui, internal/origin and,
// for the inbox's message values (store.InboxMessage), internal/store, never its database; it
// must not import internal/node or internal/admin, and never reaches the libp2p transport.
package ws

import (
	"encoding/json"
	"time"
)

// Frame types.
const (
	TypeLog        = "log"
	TypeMessage    = "message"
	TypeAuthFailed = "auth-failed"
)

// TimeFormat is the layout of a frame's ts: ISO 8601 in UTC with
// milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Frame is one server message. A log frame's Msg is text for a terminal:
// the server sends it through Escape, so it never carries a control
// character; a message frame's Msg is a received message's exact text, which
// clients must escape before they print it.
//
// Two optional fields let a client tell the frames apart without matching
// text: Replay marks the frames a client receives when it connects, which
// were published before it did; Reply marks the frames that answer the
// client's own command (the echo, each output line, and the last one), so a
// script knows when a command's output is complete.
type Frame struct {
	Type   string `json:"type"`
	Msg    string `json:"msg"`
	TS     string `json:"ts"`
	Replay bool   `json:"replay,omitempty"`
	Reply  string `json:"reply,omitempty"`
	// Error marks the ReplyEnd frame of a command that failed: it did not parse, is unknown, had
	// bad arguments, was refused by the rate limit, or ran and returned an error.
	Error bool `json:"error,omitempty"`
}

// Values of Frame.Reply. Every command line a client sends is answered by
// frames ending with exactly one ReplyEnd frame: the echo (ReplyEcho), then
// its output lines (ReplyOutput) of which the last is ReplyEnd. A binary
// frame is answered by one ReplyEnd frame and no echo.
const (
	ReplyEcho   = "echo"
	ReplyOutput = "output"
	ReplyEnd    = "end"
)

// NewFrame builds a frame stamped with t.
func NewFrame(typ, msg string, t time.Time) Frame {
	return Frame{Type: typ, Msg: msg, TS: t.UTC().Format(TimeFormat)}
}

// encode renders f for the wire, escaping a log frame's text: log lines
// quote commands, aliases, errors and received messages, all of which can
// carry text from remote peers.
func (f Frame) encode() []byte {
	if f.Type == TypeLog {
		f.Msg = Escape(f.Msg)
	}
	b, _ := json.Marshal(f) // strings and a bool: cannot fail
	return b
}

// markReplay returns a copy of an encoded frame with "replay":true added.
// encode always yields a JSON object, so the field goes before its last
// byte.
func markReplay(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(`,"replay":true`))
	out = append(out, b[:len(b)-1]...)
	return append(out, `,"replay":true}`...)
}
