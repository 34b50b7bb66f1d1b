package api

import (
	"context"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Messenger sends messages over a path the node picks.
type Messenger interface {
	// SendMessage relays text to recipient over the default number of
	// relayers and returns the ack challenge of the first hop (0x hex).
	// Failures a client can act on are *Error (PATH_NOT_FOUND,
	// NOT_ENOUGH_BALANCE, MESSAGE_TOO_LARGE); nothing is sent or charged
	// then.
	SendMessage(ctx context.Context, recipient peer.ID, text string) (ackChallenge string, err error)
}

// MessageRequest is the body of POST /messages.
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
	id, ok := s.peerParam(w, req.Recipient)
	if !ok {
		return
	}
	if id == s.cfg.Node.PeerID() {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is this node itself")
		return
	}
	ack, err := s.cfg.Messenger.SendMessage(r.Context(), id, req.Body)
	if err != nil {
		s.fail(w, "send message", err)
		return
	}
	writeJSON(w, http.StatusAccepted, ack)
}
