// Package api serves the node's REST interface under /api/v2: routing,
// authentication, one JSON error envelope, the handlers, and the JSON views of
// the domain's values. It reaches the node's rooms only through the small
// interfaces declared in deps.go, speaks their vocabulary (the types and
// sentinels of ledger, router, courier, gateway, settings, peers, channels,
// tickets, token, identity, health, history, alerts and layers; origin decides which names and pages it
// answers), and is the one place that turns their sentinels into status codes
// (errors.go). It must not import internal/node, internal/admin, internal/ws,
// internal/p2p, internal/chain or internal/store.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/api/openapi"
	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/origin"
)

// Prefix is the path prefix of every REST operation.
const Prefix = "/api/v2"

// UIPath is where the interactive API reference (Swagger UI) and the
// OpenAPI document (UIPath+"openapi.json") are served, without a token.
const UIPath = Prefix + "/_swagger/"

// DefaultTimeout is how long one operation may take by default.
const DefaultTimeout = 2 * time.Minute

// MaxBodyBytes is the largest request body the API reads (a larger one is 400), except the
// messages of POST /messages and POST /messages/inbox/{seq}/reply, whose limit follows the
// maxMessageBytes setting (messageBodyLimit; a larger one is 413 PAYLOAD_TOO_LARGE).
const MaxBodyBytes = 64 << 10

// Config configures a Server. Self, Peers, Transport and Settings are required, and Token unless
// DisableAuth; every other dependency is optional: an operation whose part the node runs without
// answers 503 (a node without a chain has no Chain, Tickets, ChainInfo, Indexer or Graph; a node
// without Mail sends only what one packet carries and keeps no inbox; a node without Sessions
// opens no sessions).
type Config struct {
	Token       string
	DisableAuth bool
	// Version is the node's release (GET /node/version).
	Version string
	// Network is the relay network's name (GET /node/info).
	Network string

	Self      Self
	Peers     Peers
	Transport Transport
	Discovery Discovery
	Settings  Settings
	Messenger Messenger
	Mail      Mail
	Chain     Chain
	Tickets   Tickets
	ChainInfo ChainInfo
	Indexer   Indexer
	Graph     ChannelGraph
	Streams   Streams
	// Sessions serves /sessions; nil: the node opens no sessions (503).
	Sessions Sessions
	// Layers is the node's place in its network's layered topology (GET /node/info's
	// topology); nil, or a Status that says not ok: free routes.
	Layers Layers
	// Health are the parts that report their readiness (GET /readyz), in the order shown.
	Health []health.Checker
	// Metrics serves GET /node/metrics (Prometheus text).
	Metrics http.Handler
	// History serves GET /node/history and Alerts GET /node/alerts; nil: 503.
	History History
	Alerts  Alerts
	// Backup serves GET /node/backup, a copy of the node's store; nil: 503.
	Backup StoreBackup
	// BackupDir is where GET /node/backup makes the copy before sending it (default: the
	// system's temporary directory); the data directory's file system has room for it.
	BackupDir string
	// Timeout bounds one operation, chain transactions included; past it the client gets 504
	// TIMEOUT (default DefaultTimeout).
	Timeout time.Duration
	// Origins decides the Host names the API answers to and the other origins whose pages may
	// call it (CORS); nil: IP literals and localhost, and no other origin.
	Origins *origin.Policy
	Logger  *slog.Logger
}

// Server is the REST API. It is an http.Handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	auth    *authenticator
	valid   *validator // checks requests against the OpenAPI document
	timeout time.Duration
	routes  []Route
	handler http.Handler
	// streaming are the patterns of the WebSocket streams, which last as
	// long as the client stays: no operation timeout, and the token may
	// also come as ?apiToken= or a cookie.
	streaming map[string]bool
	// bodyLimits are the operations ("METHOD pattern") whose request body may be larger than
	// MaxBodyBytes, with their limit.
	bodyLimits map[string]func() int64
}

// Route is one served operation: a method and a ServeMux path pattern
// relative to Prefix.
type Route struct {
	Method  string
	Pattern string
	handler http.HandlerFunc
}

// New builds the API server.
func New(cfg Config) (*Server, error) {
	if cfg.Self == nil || cfg.Peers == nil || cfg.Transport == nil || cfg.Settings == nil {
		return nil, fmt.Errorf("api: Self, Peers, Transport and Settings are required")
	}
	if !cfg.DisableAuth && cfg.Token == "" {
		return nil, fmt.Errorf("api: Token is required unless DisableAuth")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	valid, err := newValidator(log)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	if cfg.Origins == nil {
		if cfg.Origins, err = origin.New(origin.Config{TokenRequired: !cfg.DisableAuth}); err != nil {
			return nil, fmt.Errorf("api: %w", err)
		}
	}
	s := &Server{cfg: cfg, log: log, auth: newAuthenticator(cfg.Token, cfg.DisableAuth), valid: valid, timeout: cfg.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	s.routes = []Route{
		{http.MethodGet, "/account/address", s.getAddress},
		{http.MethodGet, "/account/addresses", s.getAddresses},
		{http.MethodGet, "/account/balances", s.getBalances},
		{http.MethodPost, "/account/withdraw", s.postWithdraw},
		{http.MethodPost, "/messages", s.postMessage},
		{http.MethodGet, "/messages", s.getInbox},
		{http.MethodGet, "/messages/{id}", s.getMessage},
		{http.MethodPost, "/messages/pop", s.postPop},
		{http.MethodDelete, "/messages/inbox/{seq}", s.deleteInboxMessage},
		{http.MethodPost, "/messages/inbox/{seq}/reply", s.postReply},
		{http.MethodGet, "/channels", s.getChannels},
		{http.MethodPost, "/channels", s.postChannel},
		{http.MethodDelete, "/channels", s.deleteChannelSeed},
		{http.MethodGet, "/channels/{peerId}/{direction}", s.getChannel},
		{http.MethodDelete, "/channels/{peerId}/{direction}", s.deleteChannel},
		{http.MethodGet, "/channels/tickets", s.getTickets},
		{http.MethodPost, "/channels/tickets/redeem", s.postRedeem},
		{http.MethodGet, "/channels/{peerId}/tickets", s.getChannelTickets},
		{http.MethodPost, "/channels/{peerId}/tickets/redeem", s.postChannelRedeem},
		{http.MethodGet, "/tickets", s.getTickets},
		{http.MethodPost, "/tickets/redeem", s.postRedeem},
		{http.MethodGet, "/tickets/statistics", s.getTicketStatistics},
		{http.MethodGet, "/node/info", s.getInfo},
		{http.MethodGet, "/node/metrics", s.getMetrics},
		{http.MethodGet, "/node/backup", s.getBackup},
		{http.MethodGet, "/node/history", s.getHistory},
		{http.MethodGet, "/node/alerts", s.getAlerts},
		{http.MethodGet, "/aliases", s.getAliases},
		{http.MethodPost, "/aliases", s.postAlias},
		{http.MethodGet, "/aliases/{alias}", s.getAlias},
		{http.MethodDelete, "/aliases/{alias}", s.deleteAlias},
		{http.MethodGet, "/node/version", s.getVersion},
		{http.MethodGet, "/node/peers", s.getPeers},
		{http.MethodPost, "/node/ping", s.postPing},
		{http.MethodGet, "/settings", s.getSettings},
		{http.MethodPut, "/settings", s.putSettings},
		{http.MethodPut, "/settings/{setting}", s.putSetting},
		{http.MethodGet, "/messages/websocket", s.getMessageStream},
		{http.MethodGet, "/node/stream/websocket", s.getNodeStream},
		{http.MethodPost, "/messages/sign", s.postSign},
		{http.MethodPost, "/message/sign", s.postSign},
		{http.MethodGet, "/peerInfo/{peerId}", s.getPeerInfo},
		{http.MethodGet, "/node/entryNodes", s.getEntryNodes},
		{http.MethodGet, "/node/graph", s.getGraph},
		{http.MethodGet, "/sessions", s.getSessions},
		{http.MethodPost, "/sessions", s.postSession},
		{http.MethodDelete, "/sessions/{id}", s.deleteSession},
	}
	s.streaming = map[string]bool{"/messages/websocket": true, "/node/stream/websocket": true}
	s.bodyLimits = map[string]func() int64{
		http.MethodPost + " /messages":                   s.messageBodyLimit,
		http.MethodPost + " /messages/inbox/{seq}/reply": s.messageBodyLimit,
	}
	s.handler = s.buildMux()
	return s, nil
}

// Routes returns the served operations, sorted by pattern then method.
func (s *Server) Routes() []Route {
	out := append([]Route(nil), s.routes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pattern != out[j].Pattern {
			return out[i].Pattern < out[j].Pattern
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// buildMux registers one handler per path that dispatches on the method, so
// a wrong method gets the JSON envelope (405) instead of ServeMux's text.
func (s *Server) buildMux() http.Handler {
	byPattern := map[string]map[string]http.HandlerFunc{}
	for _, rt := range s.routes {
		if byPattern[rt.Pattern] == nil {
			byPattern[rt.Pattern] = map[string]http.HandlerFunc{}
		}
		byPattern[rt.Pattern][rt.Method] = s.valid.wrap(rt.handler)
	}
	mux := http.NewServeMux()
	for pattern, methods := range byPattern {
		limits := map[string]func() int64{}
		for m := range methods {
			if l := s.bodyLimits[m+" "+pattern]; l != nil {
				limits[m] = l
			}
		}
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		sort.Strings(allowed)
		allow := strings.Join(allowed, ", ")
		wrap, stream := s.auth.wrap, s.streaming[pattern]
		if stream {
			wrap = func(h http.Handler) http.Handler { return s.auth.wrapStream(s.cfg.Origins, h) }
		}
		mux.Handle(Prefix+pattern, wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, ok := methods[r.Method]
			if !ok {
				w.Header().Set("Allow", allow)
				writeError(w, http.StatusMethodNotAllowed, CodeInvalidInput, "method "+r.Method+" is not allowed here; allowed: "+allow)
				return
			}
			// url.Values drops what it cannot decode: an undecodable
			// query would silently read as an absent parameter.
			if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
				writeError(w, http.StatusBadRequest, CodeInvalidInput, "the query string is not valid URL encoding: "+err.Error())
				return
			}
			if l := limits[r.Method]; l != nil {
				r.Body = limitedBody{http.MaxBytesReader(w, r.Body, l())}
			} else {
				r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
			}
			if stream {
				h(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
			defer cancel()
			h(w, r.WithContext(ctx))
		})))
	}
	// The reference UI and the document need no token (the calls made from
	// the page do).
	mux.Handle("GET "+UIPath, openapi.UIHandler(UIPath))
	mux.Handle("GET "+strings.TrimSuffix(UIPath, "/"), http.RedirectHandler(UIPath, http.StatusMovedPermanently))
	// Health checks for supervisors, without a token (they tell nothing
	// about the node's state beyond up and ready).
	mux.HandleFunc("GET "+HealthPath, s.getHealthz)
	mux.HandleFunc("GET "+ReadyPath, s.getReadyz)
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, "no operation at "+r.Method+" "+quote(r.URL.Path))
	})
	apiNotFound := s.auth.wrap(notFound)
	mux.Handle(Prefix+"/", apiNotFound)
	mux.Handle(Prefix, apiNotFound) // else ServeMux redirects it to Prefix+"/"
	mux.Handle("/", notFound)
	// ServeMux answers a path with "..", "." or "//" segments by a redirect
	// to its clean form, before any handler (so before the token check).
	// Such a path names no operation: 404, after the token check when it
	// is, or cleans to, a path under Prefix.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.Origins.Host(r.Host) {
			writeError(w, http.StatusForbidden, CodeInvalidHost, "this node does not answer to the name "+quote(r.Host)+
				": address it by IP or localhost, or add the name to --allowedHosts if it is the node's")
			return
		}
		p := r.URL.EscapedPath()
		if underPrefix(p) && s.cors(w, r) {
			return
		}
		clean := cleanPath(p)
		switch {
		case clean == p && trailingSlash(p):
			// The original interface's documents and clients spell some
			// paths with a trailing slash (/aliases/, /channels/): the
			// same operation answers, without a redirect.
			r2 := r.WithContext(r.Context())
			u := *r.URL
			u.Path = strings.TrimSuffix(u.Path, "/")
			if u.RawPath != "" {
				u.RawPath = strings.TrimSuffix(u.RawPath, "/")
			}
			r2.URL = &u
			r2.RequestURI = u.RequestURI()
			mux.ServeHTTP(w, r2)
		case clean == p:
			mux.ServeHTTP(w, r)
		case underPrefix(p) || underPrefix(clean):
			apiNotFound.ServeHTTP(w, r)
		default:
			notFound.ServeHTTP(w, r)
		}
	})
}

// CORS: pages on other origins may call the API when the node allows their origin
// (origin.Policy: its own web console on the admin port, and --corsOrigins); a page on any other
// origin is refused before anything runs, with or without a token, so that no web page the
// operator visits can drive a node that serves without one. A request without an Origin header
// (curl, scripts, apps) or from the API's own origin is not a cross-origin one. The streams take
// the same decision (authenticator.wrapStream).
const (
	corsMethods = "GET, POST, PUT, DELETE, OPTIONS"
	corsHeaders = "Authorization, X-Auth-Token, Content-Type"
	corsMaxAge  = "600"
)

// cors answers r's cross-origin part: it refuses a request from an origin the node does not
// allow (403 FORBIDDEN_ORIGIN), names an allowed origin on the answer, and answers a preflight
// request (204, before authentication: browsers send preflights without credentials), including
// a Private Network Access preflight (Access-Control-Request-Private-Network) from an allowed
// origin. It reports true when it answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	o := r.Header.Get("Origin")
	if o != "" && !origin.SameOrigin(r) {
		if !s.cfg.Origins.Origin(o) {
			writeError(w, http.StatusForbidden, CodeForbiddenOrigin, "pages of "+quote(o)+
				" may not call this node's API: add the origin to --corsOrigins if you trust it")
			return true
		}
		h.Set("Access-Control-Allow-Origin", o)
		if preflight && strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
			h.Set("Access-Control-Allow-Private-Network", "true")
		}
	}
	if !preflight {
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// trailingSlash reports whether p is an operation's path under Prefix
// spelt with one trailing slash (not Prefix+"/" itself nor the reference
// UI's paths).
func trailingSlash(p string) bool {
	return strings.HasPrefix(p, Prefix+"/") && len(p) > len(Prefix)+1 && strings.HasSuffix(p, "/") &&
		!strings.HasPrefix(p, UIPath[:len(UIPath)-1])
}

// underPrefix reports whether p is Prefix or below it.
func underPrefix(p string) bool {
	return p == Prefix || strings.HasPrefix(p, Prefix+"/")
}

// cleanPath is ServeMux's canonical form of a path: rooted, without "."
// or ".." segments or repeated slashes, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
