package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/libp2p/go-libp2p/core/peer"
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

// ValidAlias reports whether s has the form of an alias: 1 to 64
// printable characters without spaces. CheckAlias says whether it may be
// set.
func ValidAlias(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

// CheckAlias says why s cannot be set as an alias, or nil when it can: it
// must be ValidAlias, not "me", and not a PeerId. A name is resolved as a
// PeerId before it is looked up as an alias, so an alias shaped like a
// PeerId could never be used, and was a trap before that order: it named
// another peer than the PeerId it spells. Any libp2p PeerId counts (not
// only secp256k1 ones), except the degenerate empty one ("11").
func CheckAlias(s string) error {
	switch {
	case !ValidAlias(s):
		return errors.New("alias must be 1 to 64 printable characters without spaces")
	case s == MeAlias:
		return errors.New(`alias "me" is reserved for this node`)
	case isPeerID(s):
		return fmt.Errorf("alias %s is a PeerId; an alias cannot be one", quote(s))
	}
	return nil
}

// isPeerID reports whether s decodes as a libp2p PeerId with a non-empty
// multihash.
func isPeerID(s string) bool {
	id, err := peer.Decode(s)
	return err == nil && len(id) > 2
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
	if err := CheckAlias(req.Alias); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, err.Error())
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
		s.fail(w, "delete alias "+quote(r.PathValue("alias")), err)
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
