package ws

import (
	"context"
	"log/slog"
	"strings"
)

// connKey is the attribute that marks a log record about the console's own connections.
const connKey = "wsConnection"

// aboutConnection, among a record's attributes, makes the log handler of NewLogHandler publish
// it with Hub.LogConnection (and leave the mark out of the line): lines about clients coming
// and going stay out of the node's replay.
var aboutConnection = slog.Bool(connKey, true)

// NewLogHandler returns a slog handler that publishes every record at or
// above level as one log frame: "LEVEL message key=value …", without the
// time (the frame carries it). A record marked as about a console
// connection (aboutConnection: this package's refusals and drops) goes out with
// Hub.LogConnection, so that it does not push the node's events out of the
// replay.
func NewLogHandler(h *Hub, level slog.Leveler) slog.Handler {
	return logHandler{events: textTo(hubWriter{h.Log}, level), conns: textTo(hubWriter{h.LogConnection}, level)}
}

func textTo(w hubWriter, level slog.Leveler) slog.Handler {
	return slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
}

// logHandler sends a record to events, or to conns when it is marked as about a connection.
type logHandler struct{ events, conns slog.Handler }

func (l logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.events.Enabled(ctx, level)
}

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	marked := false
	r.Attrs(func(a slog.Attr) bool {
		marked = a.Key == connKey
		return !marked
	})
	if !marked {
		return l.events.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != connKey {
			out.AddAttrs(a)
		}
		return true
	})
	return l.conns.Handle(ctx, out)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.events.WithAttrs(as), l.conns.WithAttrs(as)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.events.WithGroup(name), l.conns.WithGroup(name)}
}

// hubWriter receives one formatted record per Write from slog's text
// handler, which serialises its writes.
type hubWriter struct{ publish func(string) }

func (w hubWriter) Write(p []byte) (int, error) {
	w.publish(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
