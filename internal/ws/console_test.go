package ws

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/webui"
)

// TestConsoleBesideWebSocket: on the admin port, a plain GET / gets the web
// console's page (with its policy naming the REST port), its scripts and
// config load without a token, an unknown path is 404, and a WebSocket on
// / still authenticates and greets as before.
func TestConsoleBesideWebSocket(t *testing.T) {
	h := newHarness(t, Config{APIPort: 3001})
	for _, tc := range []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html; charset=utf-8", http.StatusOK},
		{"/js/main.js", "text/javascript; charset=utf-8", http.StatusOK},
		{webui.ConfigPath, "application/json", http.StatusOK},
		{"/any/path", "text/plain; charset=utf-8", http.StatusNotFound},
	} {
		resp, err := http.Get(h.srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype {
			t.Fatalf("GET %s: %d %q, want %d %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.ctype)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "http://127.0.0.1:3001") || !strings.Contains(csp, "ws://127.0.0.1:") {
			t.Errorf("GET %s: CSP %q", tc.path, csp)
		}
		if tc.path == webui.ConfigPath && string(body) != `{"apiPort":3001}` {
			t.Errorf("config %q", body)
		}
	}

	c := h.dial(t, testToken)
	if f := read(t, c); !strings.Contains(f.Msg, "authentication ENABLED") {
		t.Fatalf("first frame over the WebSocket: %+v", f)
	}
	bad := h.dial(t, "wrong-token")
	if f := read(t, bad); f.Type != TypeAuthFailed {
		t.Fatalf("wrong token: %+v", f)
	}
}

// TestIsUpgrade: only a request whose Upgrade header names websocket (any
// case, in a list) is taken for a WebSocket.
func TestIsUpgrade(t *testing.T) {
	for _, tc := range []struct {
		upgrade []string
		want    bool
	}{
		{nil, false},
		{[]string{"h2c"}, false},
		{[]string{"websocket"}, true},
		{[]string{"WebSocket"}, true},
		{[]string{"foo, websocket"}, true},
		{[]string{"h2c", "websocket"}, true},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
		for _, v := range tc.upgrade {
			r.Header.Add("Upgrade", v)
		}
		if got := isUpgrade(r); got != tc.want {
			t.Errorf("Upgrade %q: %v, want %v", tc.upgrade, got, tc.want)
		}
	}
}
