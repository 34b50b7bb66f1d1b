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
	ann, obs := s.cfg.Node.PeerAddresses(id)
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
	m := s.cfg.Node.EntryNodes()
	if m == nil {
		m = map[string]EntryNode{}
	}
	writeJSON(w, http.StatusOK, m)
}

// SignMessagePrefix is put before a message the node signs (POST
// /messages/sign, the admin sign command), as the original interface did:
// the signature is over sha256(SignMessagePrefix + message), so it can never
// pass for a signature of a ticket or a transaction.
const SignMessagePrefix = "RELAY Signed Message: "

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
	sig, err := s.cfg.Node.SignMessage(req.Message)
	if err != nil {
		s.fail(w, "sign message", err)
		return
	}
	writeJSON(w, http.StatusOK, SignResponse{Signature: sig})
}
