package api

import (
	"context"
	"net/http"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
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
	if id == s.cfg.Node.PeerID() {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is this node itself, which cannot send a message to itself")
		return
	}
	ack, err := s.cfg.Messenger.SendMessage(r.Context(), id, req.Body)
	if err != nil {
		s.fail(w, "send message", err)
		return
	}
	writeJSON(w, http.StatusAccepted, ack)
}

// recipient resolves a message's recipient as the admin commands do: "me"
// is the node, a valid PeerId is itself, anything else is looked up as an
// alias. It answers 400 INVALID_PEERID when it names no peer.
func (s *Server) recipient(w http.ResponseWriter, v string) (peer.ID, bool) {
	switch {
	case v == "":
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is required")
		return "", false
	case v == MeAlias:
		return s.cfg.Node.PeerID(), true
	}
	if id, ok := peerIDs.get(v); ok {
		return id, true
	}
	if id, err := identity.ParsePeerID(v); err == nil {
		peerIDs.put(v, id)
		return id, true
	}
	aliases, err := s.cfg.Node.Aliases()
	if err != nil {
		s.internalError(w, "resolve recipient", err)
		return "", false
	}
	if named, ok := aliases[v]; ok {
		if id, err := identity.ParsePeerID(named); err == nil {
			return id, true
		}
	}
	writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient "+quote(v)+" is neither a valid secp256k1 PeerId nor an alias")
	return "", false
}

// peerIDs remembers the recipients that parsed as PeerIds. Parsing one checks that its key is a
// secp256k1 point, a square root in the field (about 8 µs, half of the API's own work on a
// message), and a sender writes to the same few recipients again and again. ParsePeerID is a
// pure function of the text, so one memo serves every Server.
var peerIDs = &peerIDCache{max: 4096}

// peerIDCache is a bounded memo of identity.ParsePeerID's successes: once full it starts over, which
// bounds its memory (max PeerIds of at most 64 characters) whatever the clients send.
type peerIDCache struct {
	mu  sync.Mutex
	m   map[string]peer.ID
	max int
}

func (c *peerIDCache) get(v string) (peer.ID, bool) {
	c.mu.Lock()
	id, ok := c.m[v]
	c.mu.Unlock()
	return id, ok
}

func (c *peerIDCache) put(v string, id peer.ID) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]peer.ID, min(c.max, 64))
	}
	c.m[v] = id
	c.mu.Unlock()
}
