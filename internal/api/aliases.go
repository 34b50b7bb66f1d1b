package api

import (
	"net/http"
	"strings"
	"unicode"
)

// MeAlias always names the node itself.
const MeAlias = "me"

// AliasRequest is the body of POST /aliases.
type AliasRequest struct {
	PeerID string `json:"peerId"`
	Alias  string `json:"alias"`
}

// AliasResponse is the answer of GET /aliases/{alias}.
type AliasResponse struct {
	PeerID string `json:"peerId"`
}

// ValidAlias reports whether s can name a peer: 1 to 64 printable
// characters without spaces.
func ValidAlias(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

func (s *Server) aliases() (map[string]string, error) {
	m, err := s.cfg.Node.Aliases()
	if err != nil {
		return nil, err
	}
	m[MeAlias] = s.cfg.Node.PeerID().String()
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
	switch {
	case !ValidAlias(req.Alias):
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "alias must be 1 to 64 printable characters without spaces")
		return
	case req.Alias == MeAlias:
		writeError(w, http.StatusBadRequest, CodeInvalidInput, `alias "me" is reserved for this node`)
		return
	}
	if err := s.cfg.Node.SetAlias(req.Alias, id); err != nil {
		s.internalError(w, "set alias", err)
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
	if r.PathValue("alias") == MeAlias {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, `alias "me" cannot be removed`)
		return
	}
	if err := s.cfg.Node.DeleteAlias(r.PathValue("alias")); err != nil {
		s.internalError(w, "delete alias", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// internalError answers 500 UNKNOWN_FAILURE for a fault of the node itself
// (never for bad input) and logs it.
func (s *Server) internalError(w http.ResponseWriter, op string, err error) {
	s.log.Error("operation failed", "op", op, "err", err)
	writeError(w, http.StatusInternalServerError, CodeUnknownFailure, op+" failed: "+err.Error())
}
