package api

import (
	"net/http"
)

// PeerAddresses is the answer of GET /peerInfo/{peerId}.
type PeerAddresses struct {
	Announced []string `json:"announced"`
	Observed  []string `json:"observed"`
}

func (s *Server) getPeerInfo(w http.ResponseWriter, r *http.Request) {
	id, ok := s.peerParam(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	ann, obs := []string{}, []string{}
	if s.cfg.Discovery != nil {
		ann, obs = s.cfg.Discovery.PeerAddresses(id)
	}
	if ann == nil {
		ann = []string{}
	}
	if obs == nil {
		obs = []string{}
	}
	writeJSON(w, http.StatusOK, PeerAddresses{Announced: ann, Observed: obs})
}

// EntryNode is one entry of GET /node/entryNodes. IsEligible is always
// true: relayd has no network registry that could bar a node.
type EntryNode struct {
	Multiaddrs []string `json:"multiaddrs"`
	IsEligible bool     `json:"isEligible"`
}

func (s *Server) getEntryNodes(w http.ResponseWriter, r *http.Request) {
	m := map[string]EntryNode{}
	if s.cfg.Discovery != nil {
		for id, addrs := range s.cfg.Discovery.EntryNodes() {
			m[id.String()] = EntryNode{Multiaddrs: append([]string{}, addrs...), IsEligible: true}
		}
	}
	writeJSON(w, http.StatusOK, m)
}

// SignRequest is the body of POST /messages/sign.
type SignRequest struct {
	Message string `json:"message"`
}

// SignResponse is the answer of POST /messages/sign.
type SignResponse struct {
	Signature string `json:"signature"`
}

func (s *Server) postSign(w http.ResponseWriter, r *http.Request) {
	var req SignRequest
	if !decodeBody(w, r, &req) {
		return
	}
	sig, err := s.cfg.Self.SignMessage(req.Message)
	if err != nil {
		s.fail(w, "sign message", err)
		return
	}
	writeJSON(w, http.StatusOK, SignResponse{Signature: sig})
}
