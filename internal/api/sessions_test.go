package api

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/gateway"
)

// TestSessions: POST /sessions hands the gateway the resolved destination and the request's
// fields and answers the session; GET lists the open ones, oldest first, with their counters and
// rates; DELETE closes one, and a second DELETE is 404.
func TestSessions(t *testing.T) {
	srv, n := newTestServer(t, false)
	bob := newPeerID(t)
	n.aliases.set(map[string]string{"bob": bob.String()})
	url := srv.URL + "/api/v2/sessions"

	list := func() []map[string]any {
		t.Helper()
		status, _, body := do(t, http.MethodGet, url, auth)
		var out []map[string]any
		if status != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil {
			t.Fatalf("GET sessions: %d %s", status, body)
		}
		return out
	}
	if status, _, body := do(t, http.MethodGet, url, auth); status != http.StatusOK || body != "[]\n" {
		t.Fatalf("no sessions: %d %q, want an empty array", status, body)
	}

	status, _, body := doBody(t, http.MethodPost, url, auth, `{"destination":"bob","protocol":"tcp","target":"example.org:443"}`)
	want := `{"id":"5e0c1f8a9b3d4e5f","destination":"` + bob.String() + `","protocol":"tcp","target":"example.org:443","listen":"127.0.0.1:40000",` +
		`"opened":"2026-11-26T22:40:00.000Z","active":0,"total":0,"bytesOut":0,"bytesIn":0,"rateOut":0,"rateIn":0,"retransmits":0}` + "\n"
	if status != http.StatusCreated || body != want {
		t.Fatalf("POST: %d %s\nwant %s", status, body, want)
	}
	status, _, body = doBody(t, http.MethodPost, url, auth, `{"destination":"`+bob.String()+`","protocol":"udp","service":"dns","listen":"[::1]:5353"}`)
	if status != http.StatusCreated || !strings.Contains(body, `"service":"dns","listen":"[::1]:5353"`) || strings.Contains(body, `"target"`) {
		t.Fatalf("POST service: %d %s", status, body)
	}
	got := n.sessions.opened
	if len(got) != 2 || got[0] != (gateway.Open{Destination: bob, Protocol: gateway.TCP, Target: "example.org:443"}) ||
		got[1] != (gateway.Open{Destination: bob, Protocol: gateway.UDP, Service: "dns", Listen: "[::1]:5353"}) {
		t.Fatalf("the gateway was asked %+v", got)
	}
	if l := list(); len(l) != 2 || l[0]["id"] != fakeSessionID(0) || l[1]["id"] != fakeSessionID(1) {
		t.Fatalf("list %v", l)
	}

	if status, _, body := do(t, http.MethodDelete, url+"/"+fakeSessionID(0), auth); status != http.StatusNoContent || body != "" {
		t.Fatalf("DELETE: %d %q", status, body)
	}
	status, _, body = do(t, http.MethodDelete, url+"/"+fakeSessionID(0), auth)
	if status != http.StatusNotFound || !strings.Contains(body, `"status":"SESSION_NOT_FOUND"`) ||
		!strings.Contains(body, "cannot close session "+fakeSessionID(0)+": no such session") {
		t.Fatalf("DELETE again: %d %s", status, body)
	}
	if l := list(); len(l) != 1 || l[0]["id"] != fakeSessionID(1) {
		t.Fatalf("list after DELETE %v", l)
	}
}

// TestSessionView: the JSON of a session with traffic: its counters, rates to a tenth, and 0 for
// a rate that is not a number.
func TestSessionView(t *testing.T) {
	dest := newPeerID(t)
	i := fakeOpenSession(dest)
	v := sessionView(i)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"5e0c1f8a9b3d4e5f","destination":"` + dest.String() + `","protocol":"tcp","target":"example.org:443","listen":"127.0.0.1:40000",` +
		`"opened":"2026-11-26T22:40:00.000Z","active":1,"total":3,"bytesOut":5120,"bytesIn":1048576,"rateOut":120.5,"rateIn":98304,"retransmits":4}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	// A session whose connection's link ran dry says so, and when.
	i.LastError, i.LastErrorAt = gateway.FailNoBalance, time.Date(2026, 11, 26, 22, 41, 7, 250e6, time.UTC)
	if b, err = json.Marshal(sessionView(i)); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(want, "}") + `,"lastError":"no_balance","lastErrorAt":"2026-11-26T22:41:07.250Z"}`; string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	i.LastError, i.LastErrorAt = "", time.Time{}
	i.RateOut, i.RateIn, i.Opened = math.NaN(), math.Inf(1), time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600))
	if v := sessionView(i); v.RateOut != 0 || v.RateIn != 0 || v.Opened != "2026-01-02T02:04:05.006Z" {
		t.Fatalf("got %+v", v)
	}
	i.RateOut = -1
	if v := sessionView(i); v.RateOut != 0 {
		t.Fatalf("negative rate shown as %v", v.RateOut)
	}
}

// TestSessionBadInput: a request that is not a session to open is refused with 400, the field's
// code and a message naming it, and never reaches the gateway; so is a bad id to close.
func TestSessionBadInput(t *testing.T) {
	srv, n := newTestServer(t, false)
	bob := newPeerID(t).String()
	url := srv.URL + "/api/v2/sessions"
	body := func(fields string) string { return `{"destination":"` + bob + `",` + fields + `}` }
	tests := []struct {
		name, body, code, msg string
	}{
		{"unknown field", body(`"protocol":"tcp","target":"a:1","hops":2`), CodeInvalidInput, `unknown field "hops"`},
		{"misspelt field", body(`"protocol":"tcp","Target":"a:1"`), CodeInvalidInput, `unknown field "Target"`},
		{"protocol a number", body(`"protocol":6,"target":"a:1"`), CodeInvalidInput, "protocol must be tcp or udp"},
		{"target an array", body(`"protocol":"tcp","target":["a:1"]`), CodeInvalidInput, `field "target" must be a string, not a JSON array`},
		{"no protocol", body(`"target":"a:1"`), CodeInvalidInput, "protocol is required"},
		{"protocol in capitals", body(`"protocol":"TCP","target":"a:1"`), CodeInvalidInput, "protocol must be tcp or udp"},
		{"no destination", `{"protocol":"tcp","target":"a:1"}`, CodeInvalidPeerID, "destination is required"},
		{"destination empty", `{"destination":"","protocol":"tcp","target":"a:1"}`, CodeInvalidPeerID, "destination"},
		{"destination unknown", `{"destination":"nobody","protocol":"tcp","target":"a:1"}`, CodeInvalidPeerID, `destination "nobody" is neither a valid secp256k1 PeerId nor an alias`},
		{"destination me", `{"destination":"me","protocol":"tcp","target":"a:1"}`, CodeInvalidPeerID, "destination is this node itself"},
		{"destination too long", `{"destination":"` + strings.Repeat("b", 65) + `","protocol":"tcp","target":"a:1"}`, CodeInvalidPeerID, "is neither a valid secp256k1 PeerId nor an alias"},
		{"neither target nor service", body(`"protocol":"tcp"`), CodeInvalidInput, "give either target"},
		{"both", body(`"protocol":"tcp","target":"a:1","service":"web"`), CodeInvalidInput, "give either target"},
		{"target empty", body(`"protocol":"tcp","target":""`), CodeInvalidInput, "target must be host:port"},
		{"target without port", body(`"protocol":"tcp","target":"example.org"`), CodeInvalidInput, "target must be host:port"},
		{"target port 0", body(`"protocol":"tcp","target":"example.org:0"`), CodeInvalidInput, "target must be host:port"},
		{"target port too large", body(`"protocol":"tcp","target":"example.org:65536"`), CodeInvalidInput, "target must be host:port"},
		{"target port signed", body(`"protocol":"tcp","target":"example.org:+80"`), CodeInvalidInput, "target must be host:port"},
		{"target without host", body(`"protocol":"tcp","target":":80"`), CodeInvalidInput, "target must be host:port"},
		{"target IPv6 unbracketed", body(`"protocol":"tcp","target":"2001:db8::1:80"`), CodeInvalidInput, "target must be host:port"},
		{"target with a space", body(`"protocol":"tcp","target":"a b:80"`), CodeInvalidInput, "target must be host:port"},
		{"target with a control", body(`"protocol":"tcp","target":"a\u001b:80"`), CodeInvalidInput, "target must be host:port"},
		{"target not ASCII", body(`"protocol":"tcp","target":"bücher.example:80"`), CodeInvalidInput, "target must be host:port"},
		{"target too long", body(`"protocol":"tcp","target":"` + strings.Repeat("a", 260) + `:80"`), CodeInvalidInput, "target must be host:port"},
		{"service with a dot", body(`"protocol":"tcp","service":"web.site"`), CodeInvalidInput, "service must be a service's name"},
		{"service ending with -", body(`"protocol":"tcp","service":"web-"`), CodeInvalidInput, "service must be a service's name"},
		{"service too long", body(`"protocol":"tcp","service":"` + strings.Repeat("s", 64) + `"`), CodeInvalidInput, "service"},
		{"listen without port", body(`"protocol":"tcp","target":"a:1","listen":"127.0.0.1"`), CodeInvalidInput, "listen must be host:port"},
		{"listen port too large", body(`"protocol":"tcp","target":"a:1","listen":"127.0.0.1:99999"`), CodeInvalidInput, "listen must be host:port"},
		{"listen null", body(`"protocol":"tcp","target":"a:1","listen":null`), CodeInvalidInput, `field "listen" must be a string, not null`},
		{"array body", `[]`, CodeInvalidInput, "request body must be a JSON object"},
		{"trailing data", body(`"protocol":"tcp","target":"a:1"`) + `{}`, CodeInvalidInput, "after the JSON object"},
		{"oversized", body(`"protocol":"tcp","target":"a:1","listen":"` + strings.Repeat("a", MaxBodyBytes) + `"`), CodeInvalidInput, "larger than 65536 bytes"},
		{"not UTF-8", body(`"protocol":"tcp","target":"a` + "\xff" + `:1"`), CodeInvalidInput, "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, got := doBody(t, http.MethodPost, url, auth, tc.body)
			var e ErrorBody
			if status != http.StatusBadRequest || json.Unmarshal([]byte(got), &e) != nil || e.Status != tc.code || !strings.Contains(e.Error, tc.msg) {
				t.Fatalf("got %d %s, want 400 %s with %q", status, got, tc.code, tc.msg)
			}
		})
	}
	for _, id := range []string{"5e0c", "5e0c1f8a9b3d4e5g", "5e0c1f8a9b3d4e5f0", "%20e0c1f8a9b3d4e5f"} {
		status, _, got := do(t, http.MethodDelete, url+"/"+id, auth)
		if status != http.StatusBadRequest || !strings.Contains(got, msgSessionID) {
			t.Errorf("DELETE %q: %d %s", id, status, got)
		}
	}
	if len(n.sessions.opened) != 0 || len(n.sessions.closed) != 0 {
		t.Fatalf("bad input reached the gateway: opened %+v, closed %v", n.sessions.opened, n.sessions.closed)
	}
}

// TestSessionsUnavailable: on a node without the gateway, every session operation answers 503
// and says why, after its input was found valid; GET /node/info says "sessions":false.
func TestSessionsUnavailable(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(false)
	cfg.Sessions = nil
	srv := serveConfig(t, cfg)
	url := srv.URL + "/api/v2/sessions"
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "", ""},
		{http.MethodPost, "", `{"destination":"` + newPeerID(t).String() + `","protocol":"tcp","target":"a:1"}`},
		{http.MethodDelete, "/" + fakeSessionID(0), ""},
	} {
		status, _, body := doBody(t, tc.method, url+tc.path, auth, tc.body)
		if status != http.StatusServiceUnavailable || !strings.Contains(body, "this node opens no sessions") {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, status, body)
		}
	}
	// GET /node/info says so, and says the other node has them.
	if status, _, body := do(t, http.MethodGet, srv.URL+"/api/v2/node/info", auth); status != http.StatusOK || !strings.Contains(body, `"sessions":false`) {
		t.Errorf("info without the gateway: %d %s", status, body)
	}
	with, _ := newTestServer(t, false)
	if status, _, body := do(t, http.MethodGet, with.URL+"/api/v2/node/info", auth); status != http.StatusOK || !strings.Contains(body, `"sessions":true`) {
		t.Errorf("info with the gateway: %d %s", status, body)
	}
	// Bad input is still 400 there.
	if status, _, body := doBody(t, http.MethodPost, url, auth, `{"destination":"x","protocol":"tcp"}`); status != http.StatusBadRequest {
		t.Errorf("bad input without the gateway: %d %s", status, body)
	}
}
