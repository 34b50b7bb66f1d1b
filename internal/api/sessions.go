package api

import (
	"errors"
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/peers"
)

// SessionRequest is the body of POST /sessions. Destination is a PeerId, an alias or "me" (which
// is refused), as a message's recipient; exactly one of Target and Service is set; Listen is
// optional (a free port on the loopback interface).
type SessionRequest struct {
	Destination string `json:"destination"`
	Protocol    string `json:"protocol"`
	Target      string `json:"target,omitempty"`
	Service     string `json:"service,omitempty"`
	Listen      string `json:"listen,omitempty"`
}

// Session is an open session as POST and GET /sessions show it (gateway.Info): Target or
// Service, whichever it was opened with; Opened in TimeFormat; the byte counts since it opened;
// the rates in bytes per second over the last gateway.RateWindow.
type Session struct {
	ID          string  `json:"id"`
	Destination string  `json:"destination"`
	Protocol    string  `json:"protocol"`
	Target      string  `json:"target,omitempty"`
	Service     string  `json:"service,omitempty"`
	Listen      string  `json:"listen"`
	Opened      string  `json:"opened"`
	Active      int     `json:"active"`
	Total       int     `json:"total"`
	BytesOut    uint64  `json:"bytesOut"`
	BytesIn     uint64  `json:"bytesIn"`
	RateOut     float64 `json:"rateOut"`
	RateIn      float64 `json:"rateIn"`
	Retransmits uint64  `json:"retransmits"`
	// LastError is gateway.Info's, one of gateway's Failure words, at LastErrorAt (TimeFormat);
	// both absent when no connection failed.
	LastError   string `json:"lastError,omitempty"`
	LastErrorAt string `json:"lastErrorAt,omitempty"`
}

// The refusals of a session request's fields, as the document's x-invalid says them.
const (
	msgSessionProtocol = "protocol must be tcp or udp"
	msgSessionTarget   = "target must be host:port: a host name or IP address (IPv6 in brackets) and a port from 1 to 65535"
	msgSessionListen   = "listen must be host:port: an IP address or host name (IPv6 in brackets) and a port from 0 to 65535 (0: a free one)"
	msgSessionService  = "service must be a service's name: letters, digits and - (at most 63, not starting or ending with -)"
	msgSessionWhat     = "give either target (host:port, which the destination connects to) or service (a name the destination offers), not both"
	msgSessionID       = "id must be a session id: 16 hexadecimal digits"
)

// maxHostPort is the longest host:port the API takes: a 253-byte name, a colon and a port.
const maxHostPort = 261

// errNoSessions answers the session operations on a node without the gateway.
var errNoSessions = &Error{http.StatusServiceUnavailable, CodeUnknownFailure,
	"this node opens no sessions (it runs without its session gateway)"}

// sessions returns the gateway or answers 503 on a node without it.
func (s *Server) sessions(w http.ResponseWriter, op string) (Sessions, bool) {
	if s.cfg.Sessions == nil {
		s.fail(w, op, errNoSessions)
		return nil, false
	}
	return s.cfg.Sessions, true
}

func (s *Server) getSessions(w http.ResponseWriter, r *http.Request) {
	g, ok := s.sessions(w, "list sessions")
	if !ok {
		return
	}
	list := g.List()
	out := make([]Session, 0, len(list))
	for _, i := range list {
		out = append(out, sessionView(i))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) postSession(w http.ResponseWriter, r *http.Request) {
	var req SessionRequest
	if !decodeBody(w, r, &req) {
		return
	}
	o, ok := sessionOpen(w, req)
	if !ok {
		return
	}
	if req.Destination == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "destination is required")
		return
	}
	g, ok := s.sessions(w, "open session")
	if !ok {
		return
	}
	id, err := s.cfg.Peers.Resolve(req.Destination)
	switch {
	case errors.Is(err, peers.ErrUnknownName):
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "destination "+quote(req.Destination)+" is neither a valid secp256k1 PeerId nor an alias")
		return
	case err != nil:
		s.internalError(w, "resolve destination", err)
		return
	case id == s.cfg.Self.PeerID():
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "destination is this node itself: a session goes to another node")
		return
	}
	o.Destination = id
	info, err := g.Open(r.Context(), o)
	if err != nil {
		s.fail(w, "open session", err)
		return
	}
	writeJSON(w, http.StatusCreated, sessionView(info))
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionID(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, msgSessionID)
		return
	}
	g, ok := s.sessions(w, "close session")
	if !ok {
		return
	}
	if err := g.Close(id); err != nil {
		s.fail(w, "close session "+id, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sessionOpen checks a session request's fields but the destination, which needs the peer
// directory, and returns what to open; it answers 400 when a field is wrong.
func sessionOpen(w http.ResponseWriter, req SessionRequest) (gateway.Open, bool) {
	bad := func(msg string) (gateway.Open, bool) {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, msg)
		return gateway.Open{}, false
	}
	p := gateway.Protocol(req.Protocol)
	switch {
	case p != gateway.TCP && p != gateway.UDP:
		return bad(msgSessionProtocol)
	case (req.Target == "") == (req.Service == ""):
		return bad(msgSessionWhat)
	case req.Target != "" && !hostPort(req.Target, 1):
		return bad(msgSessionTarget)
	case req.Service != "" && !serviceName(req.Service):
		return bad(msgSessionService)
	case req.Listen != "" && !hostPort(req.Listen, 0):
		return bad(msgSessionListen)
	}
	return gateway.Open{Protocol: p, Target: req.Target, Service: req.Service, Listen: req.Listen}, true
}

// hostPort reports whether v is host:port with printable ASCII only, a host (IPv6 in brackets)
// and a port of decimal digits from minPort to 65535. Whether the host is a usable name or
// address is the gateway's (and the exit's) to say.
func hostPort(v string, minPort int) bool {
	if len(v) > maxHostPort || strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c >= 0x7f }) {
		return false
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || len(port) == 0 || len(port) > 5 {
		return false
	}
	n := 0
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= minPort && n <= 65535
}

// serviceName reports whether v is a service's name as the exit reads one (exit.ParseServices):
// a label of letters, digits and -, at most 63, not starting or ending with -.
func serviceName(v string) bool {
	if v == "" || len(v) > 63 || v[0] == '-' || v[len(v)-1] == '-' {
		return false
	}
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// sessionID reads a session id (16 hexadecimal digits, either case) as the gateway writes it,
// in lower case.
func sessionID(v string) (string, bool) {
	if len(v) != 16 {
		return "", false
	}
	for _, c := range v {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(v), true
}

// sessionView is a session as the API shows it.
func sessionView(i gateway.Info) Session {
	v := Session{
		ID: i.ID, Destination: i.Destination.String(), Protocol: string(i.Protocol), Target: i.Target, Service: i.Service,
		Listen: i.Listen, Opened: i.Opened.UTC().Format(TimeFormat), Active: i.Active, Total: i.Total,
		BytesOut: i.BytesOut, BytesIn: i.BytesIn, RateOut: rate(i.RateOut), RateIn: rate(i.RateIn), Retransmits: i.Retransmits,
	}
	if i.LastError != "" {
		v.LastError, v.LastErrorAt = string(i.LastError), i.LastErrorAt.UTC().Format(TimeFormat)
	}
	return v
}

// rate is a rate in bytes per second for JSON: to a tenth, and 0 for what is not a rate (JSON
// has no NaN nor infinity).
func rate(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return math.Round(v*10) / 10
}
