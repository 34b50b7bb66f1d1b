// Package webui serves the node's web admin console: static files (HTML,
// CSS, plain ES modules, no build step) embedded in the binary, and a small
// /console-config.json that tells the page which port the node's REST API
// listens on. The page talks to the node only through the admin WebSocket
// (on the origin it was loaded from) and the REST API (on the same host);
// every answer carries a Content-Security-Policy that allows exactly those
// two and nothing else, so the page can make no request to another origin
// and run no script it did not load from the node. Unknown paths are 404;
// there is no directory listing.
//
// webui imports only the standard library: internal/ws mounts it on the
// admin port, and it must not import any relayd package.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidConfig is returned by New when a Config field is out of range.
var ErrInvalidConfig = errors.New("webui: invalid config")

// static is the console's files. A directory pattern leaves out names that begin with _ or .:
// the vendored @noble/hashes's _u64.js is named on its own.
//
//go:embed static static/js/vendor/noble-hashes/_u64.js
var static embed.FS

// ConfigPath is the path of the page's configuration document.
const ConfigPath = "/console-config.json"

// Config configures the console handler. Every field is optional.
type Config struct {
	// APIPort is the TCP port of the node's REST API; the page calls
	// http://<the host it was loaded from>:<APIPort>/api/v2. 0 means
	// unknown: the login form then asks for it.
	APIPort int
}

// PageConfig is the JSON document served at ConfigPath.
type PageConfig struct {
	// APIPort is Config.APIPort, absent when unknown.
	APIPort int `json:"apiPort,omitempty"`
}

// file is one embedded asset, ready to serve.
type file struct {
	name  string // base name, for http.ServeContent
	ctype string
	etag  string
	body  []byte
}

// Handler serves the console. It is safe for concurrent use.
type Handler struct {
	cfg   Config
	files map[string]file // by URL path
	conf  []byte          // ConfigPath's body
}

// contentTypes maps the extensions the console uses to their types; an
// embedded file of any other extension is a build mistake that New reports.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// New builds the handler from the embedded files.
func New(cfg Config) (*Handler, error) {
	if cfg.APIPort < 0 || cfg.APIPort > 65535 {
		return nil, fmt.Errorf("%w: APIPort %d is not a TCP port", ErrInvalidConfig, cfg.APIPort)
	}
	h := &Handler{cfg: cfg, files: map[string]file{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("webui: embedded file %s has no known content type", p)
		}
		urlPath := strings.TrimPrefix(p, "static")
		if urlPath == "/index.html" {
			urlPath = "/"
		}
		sum := sha256.Sum256(body)
		h.files[urlPath] = file{name: path.Base(p), ctype: ctype, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, body: body}
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.conf, _ = json.Marshal(PageConfig(cfg)) // an int: cannot fail
	return h, nil
}

// paths lists the URL paths the handler serves files at, ConfigPath aside.
func (h *Handler) paths() []string {
	out := make([]string, 0, len(h.files))
	for p := range h.files {
		out = append(out, p)
	}
	return out
}

// ServeHTTP serves GET and HEAD of the embedded files and ConfigPath.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	csp, ok := h.policy(r.Host)
	if !ok {
		http.Error(w, "bad Host header", http.StatusBadRequest)
		return
	}
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == ConfigPath {
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.conf))
		return
	}
	f, ok := h.files[r.URL.Path]
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", f.ctype)
	hdr.Set("ETag", f.etag)
	// Revalidate every time: a node upgraded in place serves new files at
	// the same paths, and the ETag makes the check cheap.
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}

// policy returns the Content-Security-Policy for a page loaded from host
// (the request's Host: host or host:port). Scripts, styles, images and
// fonts come from the node alone; the page may connect only to the admin
// WebSocket it was loaded from and to the REST API on the same host. ok is
// false when host is not a plain host name or IP address, which could
// otherwise put other sources into the policy.
func (h *Handler) policy(host string) (csp string, ok bool) {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, "80"
	}
	if name == "" || !validHost(name) {
		return "", false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", false
	}
	api := "*"
	if h.cfg.APIPort != 0 {
		api = strconv.Itoa(h.cfg.APIPort)
	}
	// CSP host sources cannot name an IPv6 literal: on one, the policy
	// names the ports alone (any host), still no other port or scheme.
	src := name
	if strings.Contains(name, ":") {
		src = "*"
	}
	connect := fmt.Sprintf("'self' ws://%s:%s http://%s:%s", src, port, src, api)
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; " +
		"connect-src " + connect + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'", true
}

// validHost reports whether s is a DNS name or an IP address (IPv6 without
// brackets, as net.SplitHostPort leaves it).
func validHost(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	if len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
