package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/p2p"
)

// PeerInfo is one peer as GET /node/peers shows it.
type PeerInfo struct {
	PeerID     string   `json:"peerId"`
	MultiAddrs []string `json:"multiAddrs"`
	Quality    float64  `json:"quality"`
	LastSeen   string   `json:"lastSeen,omitempty"` // ISO 8601 UTC; absent before the first successful heartbeat
	LatencyMs  float64  `json:"latency"`            // last heartbeat round trip in milliseconds
	Connected  bool     `json:"connected"`
}

// Peers is the answer of GET /node/peers.
type Peers struct {
	Connected []PeerInfo `json:"connected"`
	Announced []PeerInfo `json:"announced"`
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Node.Version())
}

func (s *Server) getPeers(w http.ResponseWriter, r *http.Request) {
	out := Peers{Connected: []PeerInfo{}, Announced: []PeerInfo{}}
	for _, p := range s.cfg.Node.Peers() {
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
	rtt, err := s.cfg.Node.Ping(ctx, id)
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
	writeError(w, http.StatusUnprocessableEntity, CodeTimeout, "ping failed: "+err.Error())
}

// peerParam parses a peer ID given by the client, answering 400
// INVALID_PEERID when it is not a secp256k1 PeerId.
func (s *Server) peerParam(w http.ResponseWriter, v string) (peer.ID, bool) {
	if v == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "peerId is required")
		return "", false
	}
	id, err := p2p.ParsePeerID(v)
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
