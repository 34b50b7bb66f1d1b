package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/relayd/relayd/internal/origin"
)

// Realm is the Basic authentication realm named in the 403 challenge.
const Realm = "relayd"

// AuthFailure is the body of a 403 answer to a request with a missing or
// wrong token, exactly as the interface document gives it.
type AuthFailure struct {
	Status    int    `json:"status"`
	Challenge string `json:"challenge"`
	Message   string `json:"message"`
}

var authFailure = AuthFailure{
	Status:    http.StatusForbidden,
	Challenge: "Basic realm=" + Realm,
	Message:   "You must authenticate to access " + Realm + ".",
}

// authenticator checks the API token of REST requests.
type authenticator struct {
	disabled bool
	digest   [32]byte // SHA-256 of the token: compared in constant time
}

func newAuthenticator(token string, disabled bool) *authenticator {
	return &authenticator{disabled: disabled, digest: sha256.Sum256([]byte(token))}
}

// Check reports whether candidate is the token, in time independent of
// where they differ (and of their lengths, through the digests).
func (a *authenticator) Check(candidate string) bool {
	d := sha256.Sum256([]byte(candidate))
	return subtle.ConstantTimeCompare(d[:], a.digest[:]) == 1
}

// allowed reports whether r carries the token, as x-auth-token or as the
// user part of HTTP Basic credentials (the password part is ignored), or as
// the whole decoded Basic value (for tokens that contain a colon).
func (a *authenticator) allowed(r *http.Request) bool {
	if a.disabled {
		return true
	}
	ok := false
	if t := r.Header.Get("x-auth-token"); t != "" {
		ok = a.Check(t)
	}
	if h := r.Header.Get("Authorization"); !ok && h != "" {
		scheme, cred, found := strings.Cut(h, " ")
		if found && strings.EqualFold(scheme, "Basic") {
			if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
				user, _, _ := strings.Cut(string(raw), ":")
				ok = a.Check(user) || a.Check(string(raw))
			}
		}
	}
	return ok
}

// allowedStream is allowed, or the token in the apiToken query parameter or the X-Auth-Token
// cookie: a browser's WebSocket cannot set headers, so the original interface's streams took the
// token there. A cookie is ambient (the browser sends it for any page), which is why a page on
// an origin the node does not allow is refused first (wrapStream).
func (a *authenticator) allowedStream(r *http.Request) bool {
	if a.disabled || a.allowed(r) {
		return true
	}
	if t := r.URL.Query().Get("apiToken"); t != "" && a.Check(t) {
		return true
	}
	return a.cookie(r)
}

// cookie reports whether r carries the token in an X-Auth-Token cookie.
func (a *authenticator) cookie(r *http.Request) bool {
	for _, name := range []string{"X-Auth-Token", "x-auth-token"} {
		c, err := r.Cookie(name)
		if err != nil || c.Value == "" {
			continue
		}
		// Browsers' cookie APIs store the token URL-encoded.
		if a.Check(c.Value) {
			return true
		}
		if v, err := url.QueryUnescape(c.Value); err == nil && a.Check(v) {
			return true
		}
	}
	return false
}

// wrapStream is wrap for the WebSocket streams (allowedStream). A page on another origin may
// open a stream only when the node allows its origin (origins; Server.cors refuses the others
// first): the Origin header is dropped then, so that the upgrade's same-origin check does not
// refuse it. A page on an origin the node does not allow is refused with the JSON envelope
// here too, before the upgrade, whatever token it shows.
func (a *authenticator) wrapStream(origins *origin.Policy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allowedStream(r) {
			writeJSON(w, http.StatusForbidden, authFailure)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !origin.SameOrigin(r) {
			if !origins.Origin(o) {
				writeError(w, http.StatusForbidden, CodeForbiddenOrigin, "pages of "+quote(o)+
					" may not open this node's streams: add the origin to --corsOrigins if you trust it")
				return
			}
			r = r.Clone(r.Context())
			r.Header.Del("Origin")
		}
		next.ServeHTTP(w, r)
	})
}

// wrap answers 403 with AuthFailure unless the request is authenticated.
func (a *authenticator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allowed(r) {
			writeJSON(w, http.StatusForbidden, authFailure)
			return
		}
		next.ServeHTTP(w, r)
	})
}
