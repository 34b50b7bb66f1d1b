package webui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func newHandler(t *testing.T, cfg Config) *Handler {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func get(t *testing.T, h http.Handler, method, target, host string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if host != "" {
		r.Host = host
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// TestServesFiles: every embedded file is served at its path with its
// content type, the security headers and a revalidating cache policy.
func TestServesFiles(t *testing.T) {
	h := newHandler(t, Config{APIPort: 3001})
	for _, tc := range []struct {
		path, ctype, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="/js/main.js">`},
		{"/console.css", "text/css; charset=utf-8", ".stream"},
		{"/js/main.js", "text/javascript; charset=utf-8", "sessionStorage"},
		{"/js/text.js", "text/javascript; charset=utf-8", "export function visible"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
		{ConfigPath, "application/json", `{"apiPort":3001}`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp := get(t, h, http.MethodGet, tc.path, "127.0.0.1:3000")
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if !strings.Contains(string(body), tc.contains) {
				t.Errorf("body does not contain %q", tc.contains)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") {
				t.Errorf("CSP %q", got)
			}
		})
	}
}

// TestEveryFileReachable: each embedded file has a path (nothing is
// embedded that the page cannot load, nothing loadable is missing).
func TestEveryFileReachable(t *testing.T) {
	h := newHandler(t, Config{})
	n := 0
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if len(h.paths()) != n || n < 8 {
		t.Fatalf("%d paths for %d embedded files: %v", len(h.paths()), n, h.paths())
	}
	for _, p := range h.paths() {
		if resp := get(t, h, http.MethodGet, p, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", p, resp.StatusCode)
		}
	}
}

// TestCSP: the policy allows scripts and styles from the node alone and
// connections only to the admin WebSocket the page came from and the REST
// port on the same host.
func TestCSP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		apiPort int
		host    string
		connect string
	}{
		{"known API port", 3001, "127.0.0.1:3000", "connect-src 'self' ws://127.0.0.1:3000 http://127.0.0.1:3001;"},
		{"unknown API port", 0, "localhost:19501", "connect-src 'self' ws://localhost:19501 http://localhost:*;"},
		{"default port", 3001, "node.example", "connect-src 'self' ws://node.example:80 http://node.example:3001;"},
		{"IPv6", 3001, "[::1]:3000", "connect-src 'self' ws://*:3000 http://*:3001;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, newHandler(t, Config{APIPort: tc.apiPort}), http.MethodGet, "/", tc.host)
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, tc.connect) {
				t.Errorf("CSP %q lacks %q", csp, tc.connect)
			}
			for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") || strings.Contains(csp, "https:") || strings.Contains(csp, "data:") {
				t.Errorf("CSP %q allows too much", csp)
			}
		})
	}
}

// TestRefusals: unknown paths and directories are 404 (no listing), other
// methods 405, and a Host header that could smuggle sources into the policy
// 400.
func TestRefusals(t *testing.T) {
	h := newHandler(t, Config{APIPort: 3001})
	for _, tc := range []struct {
		method, path, host string
		status             int
	}{
		{http.MethodGet, "/js/", "", http.StatusNotFound},
		{http.MethodGet, "/js", "", http.StatusNotFound},
		{http.MethodGet, "/static/index.html", "", http.StatusNotFound},
		{http.MethodGet, "/index.html", "", http.StatusNotFound},
		{http.MethodGet, "/nope", "", http.StatusNotFound},
		{http.MethodGet, "/js/../js/main.js", "", http.StatusNotFound},
		{http.MethodGet, "/api/v2/account/addresses", "", http.StatusNotFound},
		{http.MethodPost, "/", "", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/js/main.js", "", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", "evil.example; script-src *", http.StatusBadRequest},
		{http.MethodGet, "/", "a b:3000", http.StatusBadRequest},
		{http.MethodGet, "/", "127.0.0.1:99999", http.StatusBadRequest},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.host, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			r.URL.Path = tc.path
			if tc.host != "" {
				r.Host = tc.host
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if strings.Contains(w.Body.String(), "<a href") || strings.Contains(w.Body.String(), "main.js") {
				t.Errorf("the refusal lists files: %q", w.Body.String())
			}
		})
	}
}

// TestHeadAndConditional: HEAD has the headers and no body; a request with
// the ETag gets 304.
func TestHeadAndConditional(t *testing.T) {
	h := newHandler(t, Config{})
	resp := get(t, h, http.MethodHead, "/js/main.js", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("ETag") == "" {
		t.Fatalf("HEAD: status %d, %d bytes, ETag %q", resp.StatusCode, len(body), resp.Header.Get("ETag"))
	}
	r := httptest.NewRequest(http.MethodGet, "/js/main.js", nil)
	r.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNotModified {
		t.Fatalf("conditional GET: status %d", w.Code)
	}
}

// TestConfigUnknownPort: without an API port the config document is empty,
// and the login form asks.
func TestConfigUnknownPort(t *testing.T) {
	resp := get(t, newHandler(t, Config{}), http.MethodGet, ConfigPath, "")
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "{}" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("body %q, Cache-Control %q", body, resp.Header.Get("Cache-Control"))
	}
	if _, err := New(Config{APIPort: 70000}); err == nil {
		t.Fatal("New accepted port 70000")
	}
}

// TestAssetsSelfContained: no embedded file refers to another origin (no
// CDN, no external request; the SVG namespace names are identifiers, not
// requests), and no script builds markup from strings, which is how text
// from a remote peer could become HTML.
// jsComment matches a JavaScript block comment, or a line comment that starts a line or follows
// white space (not the // of a URL in a string).
var jsComment = regexp.MustCompile(`(?s)/\*.*?\*/|(?m)(^|[ \t])//[^\n]*`)

func TestAssetsSelfContained(t *testing.T) {
	// Absolute URLs, and protocol-relative ones in quotes or url(...).
	url := regexp.MustCompile("(?i)(https?:|wss?:|[\"'(`]\\s*)//[^\\s\"'`)<>]+")
	allowed := map[string]bool{"http://www.w3.org/2000/svg": true}
	risky := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "javascript:", "setAttribute('on", "style="}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(b)
		if strings.HasPrefix(p, "static/js/vendor/") {
			// A vendored library, byte for byte as published, cites its sources in comments;
			// its code must still name no other host.
			text = jsComment.ReplaceAllString(text, "")
		}
		for _, m := range url.FindAllString(text, -1) {
			m = strings.TrimLeft(m, "\"'(` ")
			if !allowed[m] {
				t.Errorf("%s refers to %s", p, m)
			}
		}
		if strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".html") {
			for _, r := range risky {
				if strings.Contains(string(b), r) {
					t.Errorf("%s uses %q", p, r)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryModuleImportResolves: each relative import of a served module names a served file,
// and every file under static/ on disk is embedded (a directory pattern of go:embed leaves out
// names beginning with _ or ., such as @noble/hashes's _u64.js).
func TestEveryModuleImportResolves(t *testing.T) {
	h := newHandler(t, Config{})
	imports := regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^'"\n]*?(?:from\s*)?['"](\.{1,2}/[^'"]+)['"]`)
	checked := 0
	for p, f := range h.files {
		if !strings.HasSuffix(p, ".js") {
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(string(f.body), -1) {
			target := path.Join(path.Dir(p), m[1])
			if _, ok := h.files[target]; !ok {
				t.Errorf("%s imports %s, which is not served", p, m[1])
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d imports found: the pattern is wrong", checked)
	}
	err := filepath.WalkDir("static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := static.ReadFile(filepath.ToSlash(p)); err != nil {
			t.Errorf("%s is on disk but not embedded", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
