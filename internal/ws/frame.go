// Package ws serves the node's WebSocket admin server: JSON frames
// {type, msg, ts}, a replay buffer of recent frames for new clients, bounded
// per-client queues, token authentication by query parameter, and a
// dispatcher for operator command lines whose echo and output reach only the
// client that sent them, within a per-client rate limit. Log frames are
// terminal text with every control character escaped (Escape). The commands
// themselves are given by the node; this package must not import
// internal/node.
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
type Frame struct {
	Type string `json:"type"`
	Msg  string `json:"msg"`
	TS   string `json:"ts"`
}

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
	b, _ := json.Marshal(f) // three strings: cannot fail
	return b
}
