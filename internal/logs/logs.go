// Package logs builds the node's logger: each record goes to the node's output, as slog's text or
// JSON handler writes it, and to any other handler given (the admin WebSocket's log frames);
// every record carries its component exactly once, and chain addresses are written in their
// EIP-55 checksummed form. It imports no relayd package.
package logs

import (
	"context"
	"io"
	"log/slog"

	"github.com/ethereum/go-ethereum/common"
)

// componentKey is the attribute naming the subsystem a log line comes from. Every line carries
// it exactly once: the node's own lines say "node".
const componentKey = "component"

// New returns the node's logger: each record goes to out, as JSON objects one a line with json
// (else slog's text handler), and to also, when not nil. Chain addresses are written in their
// EIP-55 checksummed form in both (slog would write common.Address, a TextMarshaler, in lower
// case), and a logger derived with With("component", …) replaces the component it had instead
// of adding a second one; a record without one says "node".
func New(out io.Writer, json bool, level slog.Leveler, also slog.Handler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(out, opts)
	if json {
		h = slog.NewJSONHandler(out, opts)
	}
	if also != nil {
		h = slog.NewMultiHandler(h, also)
	}
	return slog.New(&logHandler{next: h, component: "node"})
}

// logHandler keeps the component out of the wrapped handler's attributes so that it can be
// replaced, adds it to every record, and turns chain addresses into EIP-55 strings.
type logHandler struct {
	next      slog.Handler
	component string
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	component := h.component
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == componentKey {
			component = a.Value.String()
			return true
		}
		out.AddAttrs(checksummed(a))
		return true
	})
	out.AddAttrs(slog.String(componentKey, component))
	return h.next.Handle(ctx, out)
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := &logHandler{component: h.component}
	kept := make([]slog.Attr, 0, len(as))
	for _, a := range as {
		if a.Key == componentKey {
			c.component = a.Value.String()
			continue
		}
		kept = append(kept, checksummed(a))
	}
	c.next = h.next.WithAttrs(kept)
	return c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name), component: h.component}
}

// checksummed writes chain addresses (common.Address, *common.Address, []common.Address) as
// EIP-55 strings.
func checksummed(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = checksummed(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case common.Address:
			return slog.String(a.Key, x.Hex())
		case *common.Address:
			if x != nil {
				return slog.String(a.Key, x.Hex())
			}
		case []common.Address:
			s := make([]string, len(x))
			for i, ad := range x {
				s[i] = ad.Hex()
			}
			return slog.Any(a.Key, s)
		}
	}
	return a
}
