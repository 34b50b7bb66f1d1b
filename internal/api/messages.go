package api

import (
	"errors"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/peers"
)

// MessageRequest is the body of POST /messages. Recipient is a PeerId, an
// alias or "me", as in the admin send command.
type MessageRequest struct {
	Body      string `json:"body"`
	Recipient string `json:"recipient"`
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var req MessageRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if s.cfg.Messenger == nil {
		s.fail(w, "send message", errNoChain)
		return
	}
	if req.Body == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "body must be a non-empty message text")
		return
	}
	id, ok := s.recipient(w, req.Recipient)
	if !ok {
		return
	}
	if id == s.cfg.Self.PeerID() {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is this node itself, which cannot send a message to itself")
		return
	}
	sent, err := s.cfg.Messenger.Send(r.Context(), id, req.Body)
	if err != nil {
		s.fail(w, "send message", err)
		return
	}
	writeJSON(w, http.StatusAccepted, hexBytes(sent.Ack[:]))
}

// recipient resolves a message's recipient as the admin commands do: "me" is the node, a valid
// PeerId is itself, anything else is looked up as an alias. It answers 400 INVALID_PEERID when
// it names no peer.
func (s *Server) recipient(w http.ResponseWriter, v string) (peer.ID, bool) {
	if v == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is required")
		return "", false
	}
	id, err := s.cfg.Peers.Resolve(v)
	switch {
	case errors.Is(err, peers.ErrUnknownName):
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient "+quote(v)+" is neither a valid secp256k1 PeerId nor an alias")
		return "", false
	case err != nil:
		s.internalError(w, "resolve recipient", err)
		return "", false
	}
	return id, true
}
