package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/health"
)

// Streams serves the WebSocket streams of the REST port; the server has
// authenticated the request before it calls them. ws.AppStreams implements
// it.
type Streams interface {
	// ServeMessages upgrades r to the stream of received messages (and of
	// the fate of this node's own): those received from now on, preceded,
	// when since is not nil, by the kept ones (the inbox) with a seq above
	// *since.
	ServeMessages(w http.ResponseWriter, r *http.Request, since *uint64)
	// ServeAdmin upgrades r to the admin stream, read-only.
	ServeAdmin(w http.ResponseWriter, r *http.Request, authEnabled bool)
}

var errNoStreams = &Error{http.StatusServiceUnavailable, CodeUnknownFailure, "the WebSocket streams are not available on this node"}

// upgrade checks that r asks for a WebSocket and that the streams exist,
// answering 400 or 503 otherwise.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Streams == nil {
		s.fail(w, "stream", errNoStreams)
		return false
	}
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		writeError(w, http.StatusBadRequest, CodeInvalidInput,
			"this is a WebSocket endpoint: connect with a WebSocket client (ws://<host>:<port>"+r.URL.Path+"?apiToken=<token>)")
		return false
	}
	return true
}

// headerHas reports whether the comma-separated header name lists token
// (case-insensitive).
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func (s *Server) getMessageStream(w http.ResponseWriter, r *http.Request) {
	var since *uint64
	if v := r.URL.Query()["since"]; len(v) > 0 {
		n, err := strconv.ParseUint(v[0], 10, 64)
		if len(v) > 1 || err != nil {
			writeError(w, http.StatusBadRequest, CodeInvalidInput, "since must be a message id: a whole number, 0 or more, given once")
			return
		}
		since = &n
	}
	if s.upgrade(w, r) {
		s.cfg.Streams.ServeMessages(w, r, since)
	}
}

func (s *Server) getNodeStream(w http.ResponseWriter, r *http.Request) {
	if s.upgrade(w, r) {
		s.cfg.Streams.ServeAdmin(w, r, !s.cfg.DisableAuth)
	}
}

// HealthPath and ReadyPath are the unauthenticated health checks, outside
// Prefix.
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
)

// Readiness is the body of GET /readyz.
type Readiness struct {
	Ready bool `json:"ready"`
	// NotReady names the parts that are not ready (empty when Ready).
	NotReady []string       `json:"notReady"`
	Checks   []health.Check `json:"checks"`
}

// readyTimeout bounds the readiness checks (a chain provider that hangs is
// not ready).
const readyTimeout = 5 * time.Second

func (s *Server) getHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) getReadyz(w http.ResponseWriter, r *http.Request) {
	out := Readiness{Ready: true, NotReady: []string{}, Checks: []health.Check{}}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	for _, c := range s.cfg.Health {
		out.Checks = append(out.Checks, c.Checks(ctx)...)
	}
	for _, c := range out.Checks {
		if !c.Ready {
			out.Ready = false
			out.NotReady = append(out.NotReady, c.Name)
		}
	}
	status := http.StatusOK
	if !out.Ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, out)
}
