package ws

import (
	"log/slog"
	"strings"
)

// NewLogHandler returns a slog handler that publishes every record at or
// above level as one log frame: "LEVEL message key=value …", without the
// time (the frame carries it).
func NewLogHandler(h *Hub, level slog.Leveler) slog.Handler {
	return slog.NewTextHandler(hubWriter{h}, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
}

// hubWriter receives one formatted record per Write from slog's text
// handler, which serialises its writes.
type hubWriter struct{ h *Hub }

func (w hubWriter) Write(p []byte) (int, error) {
	w.h.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
