package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/origin"
)

// serveOrigins serves n's API with the origins policy of a node whose web console is at
// http://127.0.0.1:3000 and whose operator allowed the origins given.
func serveOrigins(t *testing.T, n *fakeNode, disableAuth bool, hosts, origins []string) string {
	t.Helper()
	p, err := origin.New(origin.Config{Hosts: hosts, Origins: origins, TokenRequired: !disableAuth})
	if err != nil {
		t.Fatal(err)
	}
	p.AllowConsole(3000, "127.0.0.1", "localhost")
	cfg := n.config(disableAuth)
	cfg.Origins = p
	return serveConfig(t, cfg).URL
}

// refusal decodes an error envelope and checks its code.
func refusal(t *testing.T, resp *http.Response, body []byte, code string) {
	t.Helper()
	var e ErrorBody
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		json.Unmarshal(body, &e) != nil || e.Status != code || e.Error == "" {
		t.Fatalf("want 403 %s in the JSON envelope, got %d %q %s", code, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Private-Network") != "" {
		t.Fatalf("a refusal allows the origin: %v", resp.Header)
	}
}

// TestCrossSiteWithdrawRefused: with authentication off, a page on another site cannot make the
// node withdraw, neither by a simple cross-origin POST (which needs no preflight) nor after a
// preflight, nor through DNS rebinding (the page's own name resolving to the node: Host and
// Origin are then the attacker's, the same origin in the browser's eyes). Nothing is withdrawn.
func TestCrossSiteWithdrawRefused(t *testing.T) {
	n := newFakeNode(t)
	base := serveOrigins(t, n, true, nil, nil)
	withdraw := `{"amount":"1","currency":"RELAY","recipient":"0x035C68d5251AfF759Ea945A05783F2290EA0Accf"}`
	evil := "http://attacker.example"

	resp, body := send(t, http.MethodPost, base+Prefix+"/account/withdraw", http.Header{"Origin": {evil},
		"Content-Type": {"text/plain"}}, withdraw)
	refusal(t, resp, body, CodeForbiddenOrigin)
	resp, body = send(t, http.MethodOptions, base+Prefix+"/account/withdraw", http.Header{"Origin": {evil},
		"Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Private-Network": {"true"}}, "")
	refusal(t, resp, body, CodeForbiddenOrigin)
	resp, body = send(t, http.MethodPost, base+Prefix+"/account/withdraw", http.Header{"Origin": {evil}}, withdraw)
	refusal(t, resp, body, CodeForbiddenOrigin)

	// DNS rebinding: attacker.example:port resolves to 127.0.0.1.
	port := strings.TrimPrefix(base, "http://127.0.0.1")
	req, err := http.NewRequest(http.MethodPost, base+Prefix+"/account/withdraw", strings.NewReader(withdraw))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example" + port
	req.Header.Set("Origin", "http://attacker.example"+port)
	req.Header.Set("Content-Type", "application/json")
	rresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e ErrorBody
	if json.NewDecoder(rresp.Body).Decode(&e) != nil || rresp.StatusCode != http.StatusForbidden || e.Status != CodeInvalidHost {
		t.Fatalf("rebinding: %d %+v", rresp.StatusCode, e)
	}
	rresp.Body.Close()
	if len(n.chain.withdrawn) != 0 {
		t.Fatalf("withdrew %v", n.chain.withdrawn)
	}
	// The same request from the node's own web console, or without a browser, is served.
	for _, h := range []http.Header{{"Origin": {"http://127.0.0.1:3000"}}, {"Origin": {"http://localhost:3000"}}, {}} {
		resp, body := send(t, http.MethodPost, base+Prefix+"/account/withdraw", h, withdraw)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("withdraw with %v: %d %s", h, resp.StatusCode, body)
		}
	}
	if len(n.chain.withdrawn) != 3 {
		t.Fatalf("withdrew %v, want 3 times", n.chain.withdrawn)
	}
}

// TestCORS: an allowed origin (the console's, a configured one) is named on the answer, its
// preflights (Private Network Access ones too) get 204 before the token; other origins get
// nothing but a refusal; "*" allows every page of a node with a token.
func TestCORS(t *testing.T) {
	base := serveOrigins(t, newFakeNode(t), false, nil, []string{"https://App.Example"})
	for _, o := range []string{"http://127.0.0.1:3000", "https://app.example", "https://app.example:443"} {
		pre := http.Header{"Origin": {o}, "Access-Control-Request-Method": {"POST"},
			"Access-Control-Request-Headers": {"authorization, content-type"}, "Access-Control-Request-Private-Network": {"true"}}
		resp, body := send(t, http.MethodOptions, base+Prefix+"/messages/", pre, "")
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || len(body) != 0 || h.Get("Access-Control-Allow-Origin") != o ||
			h.Get("Access-Control-Allow-Private-Network") != "true" || !strings.Contains(h.Get("Vary"), "Origin") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("preflight from %s: %d %v %s", o, resp.StatusCode, h, body)
		}
		resp, body = send(t, http.MethodGet, base+Prefix+"/node/version", http.Header{"Origin": {o}, "X-Auth-Token": {testToken}}, "")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != o {
			t.Fatalf("GET from %s: %d %v %s", o, resp.StatusCode, resp.Header, body)
		}
	}
	for _, o := range []string{"http://127.0.0.1:3001", "http://127.0.0.1", "https://app.example:8443", "http://app.example", "null", "http://evil.example"} {
		resp, body := send(t, http.MethodGet, base+Prefix+"/node/version", http.Header{"Origin": {o}, "X-Auth-Token": {testToken}}, "")
		refusal(t, resp, body, CodeForbiddenOrigin)
	}
	// An OPTIONS that is not a preflight is an ordinary request: token first.
	if resp, body := send(t, http.MethodOptions, base+Prefix+"/node/version", nil, ""); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("plain OPTIONS: %d %s", resp.StatusCode, body)
	}

	anyBase := serveOrigins(t, newFakeNode(t), false, nil, []string{origin.Any})
	resp, body := send(t, http.MethodGet, anyBase+Prefix+"/node/version", http.Header{"Origin": {"http://elsewhere.example"}, "X-Auth-Token": {testToken}}, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "http://elsewhere.example" {
		t.Fatalf("any origin: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if _, err := origin.New(origin.Config{Origins: []string{origin.Any}}); err == nil {
		t.Fatal(`"*" accepted without a token`)
	}
}

// TestHostNames: the API answers to IP literals, localhost and configured names, and refuses
// any other Host with the JSON envelope, health checks included.
func TestHostNames(t *testing.T) {
	base := serveOrigins(t, newFakeNode(t), false, []string{"node.example.org"}, nil)
	for host, ok := range map[string]bool{
		"127.0.0.1:3001": true, "[::1]:3001": true, "10.1.2.3": true, "localhost:3001": true, "LOCALHOST.": true,
		"app.localhost:3001": true, "node.example.org": true, "NODE.example.org:443": true,
		"attacker.example:3001": false, "node.example.org.attacker.example": false, "127.0.0.1.nip.io": false,
	} {
		for _, path := range []string{Prefix + "/node/version", "/healthz"} {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			req.Header.Set("X-Auth-Token", testToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e ErrorBody
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if got := resp.StatusCode == http.StatusOK; got != ok || !ok && e.Status != CodeInvalidHost {
				t.Errorf("Host %q %s: %d %+v, want ok %v", host, path, resp.StatusCode, e, ok)
			}
		}
	}
}

// TestStreamOrigins: a page on an allowed origin may open a stream (with the token in the query
// or a header, or with authentication off); a page on any other origin is refused with the JSON
// envelope whatever token it shows; the node's own origin may use the cookie.
func TestStreamOrigins(t *testing.T) {
	console := "http://127.0.0.1:3000"
	for _, tc := range []struct {
		name        string
		disableAuth bool
		origin      string
		query       string
		header      http.Header
		ok          bool
	}{
		{"allowed, token in the query", false, console, "?apiToken=" + url.QueryEscape(testToken), nil, true},
		{"allowed, token in a header", false, console, "", http.Header{"X-Auth-Token": {testToken}}, true},
		{"allowed, cookie", false, console, "", http.Header{"Cookie": {"X-Auth-Token=" + url.QueryEscape(testToken)}}, true},
		{"allowed, authentication off", true, console, "", nil, true},
		{"elsewhere, token in the query", false, "http://elsewhere.example", "?apiToken=" + url.QueryEscape(testToken), nil, false},
		{"elsewhere, cookie", false, "http://elsewhere.example", "", http.Header{"Cookie": {"X-Auth-Token=" + url.QueryEscape(testToken)}}, false},
		{"elsewhere, authentication off", true, "http://elsewhere.example", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := serveOrigins(t, newFakeNode(t), tc.disableAuth, nil, nil)
			h := http.Header{"Origin": {tc.origin}}
			for k, v := range tc.header {
				h[k] = v
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+Prefix+"/node/stream/websocket"+tc.query,
				&websocket.DialOptions{HTTPHeader: h})
			if c != nil {
				defer c.CloseNow()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("dial: %v, want ok %v", err, tc.ok)
			}
			if !tc.ok {
				var e ErrorBody
				if resp == nil || resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("refusal %v", resp)
				}
				if json.NewDecoder(resp.Body).Decode(&e) != nil || e.Status != CodeForbiddenOrigin {
					t.Fatalf("refusal body %+v", e)
				}
			}
		})
	}
	// The same origin is fine with the cookie alone.
	base := serveOrigins(t, newFakeNode(t), false, nil, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+Prefix+"/node/stream/websocket",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}, "Cookie": {"X-Auth-Token=" + url.QueryEscape(testToken)}}})
	if err != nil {
		t.Fatalf("same origin with the cookie: %v", err)
	}
	c.CloseNow()
}
