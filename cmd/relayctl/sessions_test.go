package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeSessionsREST answers the session operations as a node does, recording each call; the
// stopAfter-th GET (when set) calls stop and gets no answer.
type fakeSessionsREST struct {
	mu        sync.Mutex
	calls     []restCall
	empty     bool
	gets      int
	stopAfter int
	stop      func()
}

// The session the fake lists: a remote peer could not choose these strings, but relayctl
// escapes them anyway.
const fakeSessionJSON = `{"id":"5e0c1f8a9b3d4e5f","destination":"16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT","protocol":"tcp",` +
	`"target":"example.org:443","listen":"127.0.0.1:40000","opened":"2026-11-26T22:40:00.000Z","active":1,"total":3,` +
	`"bytesOut":5120,"bytesIn":1048576,"rateOut":120.5,"rateIn":98304,"retransmits":4}`

func (f *fakeSessionsREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := restCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, token: r.Header.Get("x-auth-token"), contentType: r.Header.Get("Content-Type")}
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		json.Unmarshal(b, &c.body)
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	empty := f.empty
	stopping := false
	if r.Method == "GET" {
		f.gets++
		stopping = f.gets == f.stopAfter
	}
	f.mu.Unlock()
	if stopping {
		// Interrupted while the node answers: no answer comes.
		f.stop()
		<-r.Context().Done()
		return
	}
	answer := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body+"\n")
	}
	switch {
	case c.token != "S3cret!token":
		answer(403, `{"status":403,"challenge":"Basic realm=relayd","message":"You must authenticate to access relayd."}`)
	case r.Method == "GET" && c.path == "/api/v2/sessions" && empty:
		answer(200, `[]`)
	case r.Method == "GET" && c.path == "/api/v2/sessions":
		answer(200, `[`+fakeSessionJSON+`,{"id":"5e0c1f8a9b3d4e60","destination":"16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT",`+
			`"protocol":"udp","service":"dns\u001b","listen":"[::1]:5353","opened":"2026-11-26T22:41:00.000Z","active":0,"total":0,`+
			`"bytesOut":0,"bytesIn":0,"rateOut":0,"rateIn":0,"retransmits":0}]`)
	case r.Method == "POST" && c.path == "/api/v2/sessions" && c.body["listen"] == "127.0.0.1:1":
		answer(409, `{"status":"CANNOT_LISTEN","error":"cannot open session: gateway: cannot listen: listen tcp 127.0.0.1:1: bind: address already in use"}`)
	case r.Method == "POST" && c.path == "/api/v2/sessions":
		answer(201, fakeSessionJSON)
	case r.Method == "DELETE" && c.path == "/api/v2/sessions/5e0c1f8a9b3d4e5f":
		w.WriteHeader(http.StatusNoContent)
	default:
		answer(404, `{"status":"SESSION_NOT_FOUND","error":"cannot close session 5e0c1f8a9b3d4e61: no such session"}`)
	}
}

// TestSessionsSubcommand: relayctl sessions lists (with rates), opens and closes sessions over
// the REST operations with the token, and prints the answers for people (the node's strings
// escaped) or, with --json, as they came; a refusal is the node's envelope on stderr and exit
// status 1.
func TestSessionsSubcommand(t *testing.T) {
	f := &fakeSessionsREST{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("RELAYD_API_TOKEN", "S3cret!token")
	t.Setenv("RELAYCTL_API_URL", srv.URL)
	list := "ID                PROTO  LISTEN           DESTINATION                                            TARGET           CONNS  OUT               IN                  RETRANS  OPENED\n" +
		"5e0c1f8a9b3d4e5f  tcp    127.0.0.1:40000  16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT  example.org:443  1/3    120 B/s (5.1 kB)  98.3 kB/s (1.0 MB)  4        2026-11-26T22:40:00.000Z\n" +
		"5e0c1f8a9b3d4e60  udp    [::1]:5353       16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT  service:dns\\x1b  0/0    0 B/s (0 B)       0 B/s (0 B)         0        2026-11-26T22:41:00.000Z\n"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
		call   restCall
	}{
		{"list", nil, 0, list, "", restCall{method: "GET", path: "/api/v2/sessions"}},
		{"list by name", []string{"list"}, 0, list, "", restCall{method: "GET", path: "/api/v2/sessions"}},
		{"list --json", []string{"--json"}, 0, "[", "", restCall{method: "GET", path: "/api/v2/sessions"}},
		{"open", []string{"open", "bob", "tcp", "example.org:443"}, 0, "5e0c1f8a9b3d4e5f 127.0.0.1:40000\n", "",
			restCall{method: "POST", path: "/api/v2/sessions", body: map[string]any{"destination": "bob", "protocol": "tcp", "target": "example.org:443"}}},
		{"open a service", []string{"open", "--listen", "127.0.0.1:8080", "bob", "UDP", "service:dns"}, 0, "5e0c1f8a9b3d4e5f 127.0.0.1:40000\n", "",
			restCall{method: "POST", path: "/api/v2/sessions", body: map[string]any{"destination": "bob", "listen": "127.0.0.1:8080", "protocol": "udp", "service": "dns"}}},
		{"open, refused", []string{"open", "--listen", "127.0.0.1:1", "bob", "tcp", "a:1"}, 1, "",
			"relayctl sessions: 409 CANNOT_LISTEN: cannot open session: gateway: cannot listen: listen tcp 127.0.0.1:1: bind: address already in use\n",
			restCall{method: "POST", path: "/api/v2/sessions", body: map[string]any{"destination": "bob", "listen": "127.0.0.1:1", "protocol": "tcp", "target": "a:1"}}},
		{"close", []string{"close", "5e0c1f8a9b3d4e5f"}, 0, "", "", restCall{method: "DELETE", path: "/api/v2/sessions/5e0c1f8a9b3d4e5f"}},
		{"close, unknown", []string{"close", "5e0c1f8a9b3d4e61"}, 1, "", "relayctl sessions: 404 SESSION_NOT_FOUND: cannot close session 5e0c1f8a9b3d4e61: no such session\n",
			restCall{method: "DELETE", path: "/api/v2/sessions/5e0c1f8a9b3d4e61"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.calls = nil
			f.mu.Unlock()
			var stdout, stderr strings.Builder
			code := sessionsMain(t.Context(), tc.args, &stdout, &stderr)
			json := strings.HasSuffix(tc.name, "--json")
			if code != tc.code || (!json && stdout.String() != tc.out) || stderr.String() != tc.errOut {
				t.Fatalf("exit %d, stdout\n%s\nstderr %q; want %d,\n%s\n%q", code, stdout.String(), stderr.String(), tc.code, tc.out, tc.errOut)
			}
			if json && !strings.HasPrefix(stdout.String(), `[{"id":"5e0c1f8a9b3d4e5f"`) {
				t.Fatalf("--json printed %q", stdout.String())
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.calls) != 1 {
				t.Fatalf("%d calls", len(f.calls))
			}
			got := f.calls[0]
			if got.token != "S3cret!token" || got.method != tc.call.method || got.path != tc.call.path || got.query != tc.call.query {
				t.Fatalf("call %+v, want %+v", got, tc.call)
			}
			if (tc.call.body != nil) != (got.contentType == "application/json") {
				t.Fatalf("Content-Type %q", got.contentType)
			}
			wb, _ := jsonMarshal(tc.call.body)
			gb, _ := jsonMarshal(got.body)
			if wb != gb {
				t.Fatalf("body %s, want %s", gb, wb)
			}
		})
	}
	f.empty = true
	var stdout, stderr strings.Builder
	if code := sessionsMain(t.Context(), nil, &stdout, &stderr); code != 0 || stdout.String() != "No open sessions.\n" || stderr.String() != "" {
		t.Fatalf("no sessions: %d %q %q", code, stdout.String(), stderr.String())
	}
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// TestSessionsWatch: --watch lists again at its interval until interrupted, then exits 0.
func TestSessionsWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := &fakeSessionsREST{empty: true, stopAfter: 3, stop: cancel}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var stdout, stderr strings.Builder
	code := sessionsMain(ctx, []string{"--api", srv.URL, "--apiToken", "S3cret!token", "--watch", "1s"}, &stdout, &stderr)
	if code != 0 || stdout.String() != "No open sessions.\n\nNo open sessions.\n\n" || stderr.String() != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if f.gets != 3 {
		t.Fatalf("%d lists", f.gets)
	}
}

// TestSessionsUsage: bad arguments are exit status 2 with a reason, before any call; a wrong
// token is the node's 403, without the token in what relayctl prints.
func TestSessionsUsage(t *testing.T) {
	f := &fakeSessionsREST{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"start"}, `"start" is not list, open or close`},
		{[]string{"list", "x"}, "list takes no arguments"},
		{[]string{"open", "bob", "tcp"}, "open needs a destination, tcp or udp, and host:port or service:NAME"},
		{[]string{"open", "bob", "sctp", "a:1"}, `"sctp" is neither tcp nor udp`},
		{[]string{"open", "bob", "tcp", "a:1", "--listen", "b:2"}, "open needs a destination"}, // flags go first
		{[]string{"close"}, "close needs one session id"},
		{[]string{"close", "a", "b"}, "close needs one session id"},
		{[]string{"--watch", "1s", "close", "a"}, "--watch takes an interval of at least 1s, and only lists"},
		{[]string{"--watch", "10ms"}, "--watch takes an interval of at least 1s"},
	} {
		var stdout, stderr strings.Builder
		code := sessionsMain(t.Context(), append([]string{"--api", srv.URL}, tc.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	if len(f.calls) != 0 {
		t.Fatalf("%d calls made on bad usage", len(f.calls))
	}
	var stdout, stderr strings.Builder
	code := sessionsMain(t.Context(), []string{"--api", srv.URL, "--apiToken", "wrong-token"}, &stdout, &stderr)
	if code != 1 || stderr.String() != "relayctl sessions: 403 You must authenticate to access relayd.\n" || strings.Contains(stderr.String(), "wrong-token") {
		t.Fatalf("wrong token: %d %q", code, stderr.String())
	}
}
