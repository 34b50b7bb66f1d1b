package api

import (
	"net/http"

	"github.com/relayd/relayd/internal/peers"
)

// AliasRequest is the body of POST /aliases.
type AliasRequest struct {
	PeerID string `json:"peerId"`
	Alias  string `json:"alias"`
}

// AliasResponse is the answer of GET /aliases/{alias}.
type AliasResponse struct {
	PeerID string `json:"peerId"`
}

// aliases are the stored aliases and "me", alias → PeerId.
func (s *Server) aliases() (map[string]string, error) {
	list, err := s.cfg.Peers.Aliases()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(list)+1)
	for _, a := range list {
		m[a.Name] = a.Peer.String()
	}
	m[peers.Me] = s.cfg.Self.PeerID().String()
	return m, nil
}

func (s *Server) getAliases(w http.ResponseWriter, r *http.Request) {
	m, err := s.aliases()
	if err != nil {
		s.internalError(w, "list aliases", err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) postAlias(w http.ResponseWriter, r *http.Request) {
	var req AliasRequest
	if !decodeBody(w, r, &req) {
		return
	}
	id, ok := s.peerParam(w, req.PeerID)
	if !ok {
		return
	}
	if err := s.cfg.Peers.SetAlias(req.Alias, id); err != nil {
		s.fail(w, "set alias", err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (s *Server) getAlias(w http.ResponseWriter, r *http.Request) {
	m, err := s.aliases()
	if err != nil {
		s.internalError(w, "get alias", err)
		return
	}
	id, ok := m[r.PathValue("alias")]
	if !ok {
		writeError(w, http.StatusNotFound, CodePeerIDNotFound, "no peer is named "+quote(r.PathValue("alias")))
		return
	}
	writeJSON(w, http.StatusOK, AliasResponse{PeerID: id})
}

func (s *Server) deleteAlias(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Peers.DeleteAlias(r.PathValue("alias")); err != nil {
		s.fail(w, "delete alias "+quote(r.PathValue("alias")), err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// internalError answers 500 UNKNOWN_FAILURE for a fault of the node itself (never for bad
// input) and logs it. The error's text stays in the log: it may name files, addresses or the
// chain provider, which are not the client's business.
func (s *Server) internalError(w http.ResponseWriter, op string, err error) {
	s.log.Error("operation failed", "op", op, "err", err)
	writeError(w, http.StatusInternalServerError, CodeUnknownFailure, op+" failed because of a fault of the node; its log says more")
}
