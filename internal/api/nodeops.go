package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
)

// PeerInfo is one peer as GET /node/peers shows it: relayd's fields and
// the original interface's (multiAddr, heartbeats, lastSeen in
// milliseconds, backoff, isNew).
type PeerInfo struct {
	PeerID     string   `json:"peerId"`
	MultiAddr  string   `json:"multiAddr,omitempty"` // the first of MultiAddrs; absent when there is none
	MultiAddrs []string `json:"multiAddrs"`
	Quality    float64  `json:"quality"`
	// LastSeen is when the peer last answered a heartbeat, in
	// milliseconds since 1970; 0 before its first answer.
	LastSeen  int64   `json:"lastSeen"`
	LatencyMs float64 `json:"latency"` // last heartbeat round trip in milliseconds
	Connected bool    `json:"connected"`
	// Reached is how the node reaches the peer now: direct, hole-punched, relayed or none.
	Reached    string     `json:"reached"`
	Heartbeats Heartbeats `json:"heartbeats"`
	// Backoff is the original's heartbeat backoff; relayd pings every
	// known peer each round, so it is always 0.
	Backoff float64 `json:"backoff"`
	// IsNew is true before the first heartbeat to the peer.
	IsNew bool `json:"isNew"`
}

// Heartbeats counts the heartbeats sent to a peer and those it answered.
type Heartbeats struct {
	Sent    uint64 `json:"sent"`
	Success uint64 `json:"success"`
}

// PeerList is the answer of GET /node/peers.
type PeerList struct {
	Connected []PeerInfo `json:"connected"`
	Announced []PeerInfo `json:"announced"`
}

// peers are the transport's peers as GET /node/peers shows them.
func (s *Server) peers() []PeerInfo {
	list := s.cfg.Transport.Peers()
	out := make([]PeerInfo, 0, len(list))
	for _, p := range list {
		out = append(out, peerInfo(p))
	}
	return out
}

// peerInfo is a peer as the API shows it.
func peerInfo(p peers.Info) PeerInfo {
	info := PeerInfo{
		PeerID:     p.ID.String(),
		MultiAddrs: make([]string, 0, len(p.Addrs)),
		Quality:    p.Quality,
		LatencyMs:  float64(p.Latency.Microseconds()) / 1000,
		Connected:  p.Connected,
		Reached:    string(p.Reach),
		Heartbeats: Heartbeats{Sent: p.HeartbeatsSent, Success: p.HeartbeatsSucceeded},
	}
	if p.Reach == peers.ReachNone {
		info.Reached = "none"
	}
	for _, a := range p.Addrs {
		info.MultiAddrs = append(info.MultiAddrs, a.String())
	}
	if !p.LastSeen.IsZero() {
		info.LastSeen = p.LastSeen.UnixMilli()
	}
	return info
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Version)
}

func (s *Server) getPeers(w http.ResponseWriter, r *http.Request) {
	minQuality := 0.0
	if v := r.URL.Query()["quality"]; len(v) > 0 {
		q, err := strconv.ParseFloat(v[0], 64)
		if len(v) > 1 || err != nil || !(q >= 0 && q <= 1) {
			writeError(w, http.StatusBadRequest, CodeInvalidInput, "quality must be a number from 0 to 1, given once")
			return
		}
		minQuality = q
	}
	out := PeerList{Connected: []PeerInfo{}, Announced: []PeerInfo{}}
	for _, p := range s.peers() {
		if p.Quality < minQuality {
			continue
		}
		p.IsNew = p.Heartbeats.Sent == 0
		if len(p.MultiAddrs) > 0 {
			p.MultiAddr = p.MultiAddrs[0]
		}
		out.Announced = append(out.Announced, p)
		if p.Connected {
			out.Connected = append(out.Connected, p)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// PingRequest is the body of POST /node/ping.
type PingRequest struct {
	PeerID string `json:"peerId"`
}

// PingResponse is the answer of POST /node/ping: the round trip in
// milliseconds.
type PingResponse struct {
	Latency float64 `json:"latency"`
}

func (s *Server) postPing(w http.ResponseWriter, r *http.Request) {
	var req PingRequest
	if !decodeBody(w, r, &req) {
		return
	}
	id, ok := s.peerParam(w, req.PeerID)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	rtt, err := s.cfg.Transport.Ping(ctx, id)
	if err == nil {
		writeJSON(w, http.StatusOK, PingResponse{Latency: float64(rtt.Microseconds()) / 1000})
		return
	}
	// A peer that does not answer is the seed's 422 TIMEOUT, not the 504
	// of an operation that ran out of time.
	if errors.Is(err, context.DeadlineExceeded) {
		writeError(w, http.StatusUnprocessableEntity, CodeTimeout, "peer did not answer within 10 s")
		return
	}
	if status, code, msg, ok := lookup(err, "ping"); ok {
		writeError(w, status, code, msg)
		return
	}
	// The transport's error names addresses and connections: the log's, not the client's.
	s.log.Debug("ping failed", "op", "ping", "err", err)
	writeError(w, http.StatusUnprocessableEntity, CodeTimeout, "the peer did not answer the ping")
}

// peerParam parses a peer ID given by the client, answering 400
// INVALID_PEERID when it is not a secp256k1 PeerId.
func (s *Server) peerParam(w http.ResponseWriter, v string) (peer.ID, bool) {
	if v == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "peerId is required")
		return "", false
	}
	id, err := identity.ParsePeerID(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "peerId "+quote(v)+" is not a valid secp256k1 PeerId")
		return "", false
	}
	return id, true
}

// quote shortens and quotes client text for an error message.
func quote(v string) string {
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return `"` + v + `"`
}

func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		writeError(w, http.StatusServiceUnavailable, CodeUnknownFailure, "metrics are not available")
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
