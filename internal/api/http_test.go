package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawRequest sends request (a whole HTTP/1.1 request, as written) on a new
// connection to addr and reads the answer, so that the path reaches the
// server exactly as written.
func rawRequest(t *testing.T, addr, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	// The server may answer before it has read everything (431); a write
	// error then is expected, the answer is what counts.
	go io.WriteString(conn, request)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestPathsAreNeverRedirected: a path with ".", ".." or "//" segments gets
// the token check and a JSON 404 (ServeMux answered a 307 redirect to the
// clean path before any handler, also without a token); so does Prefix
// itself (ServeMux redirected it to Prefix+"/").
func TestPathsAreNeverRedirected(t *testing.T) {
	srv, _ := newTestServer(t, false)
	addr := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		method, path string
		token        bool
		status       int
	}{
		{"GET", "/api/v2/../api/v2/node/version", false, 403},
		{"GET", "/api/v2/../api/v2/node/version", true, 404},
		{"GET", "/api/v2//node/version", false, 403},
		{"GET", "/api/v2//node/version", true, 404},
		{"GET", "/api/v2/./node/version", true, 404},
		{"GET", "/api/v2/node/version/..", true, 404},
		{"GET", "/x/../api/v2/node/version", false, 403},
		{"GET", "//api/v2/node/version", true, 404},
		{"POST", "/api/v2/node/../aliases", true, 404},
		{"DELETE", "/api/v2/aliases/bob/..", false, 403},
		{"GET", "/a/../b", false, 404},
		{"GET", "/api/v2", false, 403},
		{"GET", "/api/v2", true, 404},
		{"CONNECT", "/api/v2", true, 404},
		{"CONNECT", "/api/v2/../x", true, 404},
		{"GET", "/api/v2/node/version", true, 200}, // the control
	}
	for _, tt := range tests {
		header := ""
		if tt.token {
			header = "x-auth-token: " + testToken + "\r\n"
		}
		resp, body := rawRequest(t, addr, tt.method+" "+tt.path+" HTTP/1.1\r\nHost: localhost\r\n"+header+"Content-Length: 0\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != tt.status || resp.Header.Get("Location") != "" {
			t.Errorf("%s %s (token %v): %d Location %q %s, want %d", tt.method, tt.path, tt.token, resp.StatusCode, resp.Header.Get("Location"), body, tt.status)
			continue
		}
		var e ErrorBody
		if resp.Header.Get("Content-Type") != "application/json" || !json.Valid(body) {
			t.Errorf("%s %s: not JSON: %q %s", tt.method, tt.path, resp.Header.Get("Content-Type"), body)
		}
		if tt.status == 404 && (json.Unmarshal(body, &e) != nil || e.Status != CodeNotFound) {
			t.Errorf("%s %s: %s, want %s", tt.method, tt.path, body, CodeNotFound)
		}
		if tt.status == 403 && string(body) != want403 {
			t.Errorf("%s %s: %s, want the seed's 403", tt.method, tt.path, body)
		}
	}
}

// TestUndecodableQuery: a query string url.Values cannot decode is refused,
// on every operation and before it runs (it read as an absent parameter).
func TestUndecodableQuery(t *testing.T) {
	srv, n := newTestServer(t, false)
	n.aliases.set(map[string]string{"bob": n.PeerID().String()})
	for _, tt := range []struct{ method, path string }{
		{"GET", "/api/v2/channels?includingClosed=%zz"},
		{"GET", "/api/v2/channels?includingClosed=true;x=1"},
		{"GET", "/api/v2/node/version?x=%"},
		{"DELETE", "/api/v2/aliases/bob?%zz"},
	} {
		status, _, body := do(t, tt.method, srv.URL+tt.path, auth)
		var e ErrorBody
		if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeInvalidInput ||
			!strings.Contains(e.Error, "query string is not valid URL encoding") {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, status, body)
		}
	}
	if _, ok := n.aliases.get("bob"); !ok {
		t.Fatal("a refused DELETE removed the alias")
	}
}

// TestListenerEnvelope: the answers net/http writes by itself before any
// handler, a plain-text 431 for headers over 1 MiB and 400 for a malformed
// request, carry the JSON envelope on the REST server's listener; other
// requests, on the same connection too, pass unchanged.
func TestListenerEnvelope(t *testing.T) {
	s, err := New(newFakeNode(t).config(false))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Listener = Listener(srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	get := "GET /api/v2/node/version HTTP/1.1\r\nHost: localhost\r\nx-auth-token: " + testToken + "\r\n"

	tests := []struct {
		name, request string
		status        int
		msg           string
	}{
		{"header over 1 MiB", get + "x-big: " + strings.Repeat("a", 1<<20+8<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, "request headers are too large"},
		{"many headers over 1 MiB", get + strings.Repeat("x-a: "+strings.Repeat("b", 1000)+"\r\n", 1100) + "\r\n", http.StatusRequestHeaderFieldsTooLarge, "request headers are too large"},
		{"no Host", "GET /api/v2/node/version HTTP/1.1\r\n\r\n", http.StatusBadRequest, "malformed request: missing required Host header"},
		{"garbage", "NOT HTTP\r\n\r\n", http.StatusBadRequest, "malformed request"},
		{"unknown transfer encoding", "POST /api/v2/node/ping HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, "malformed request: Unsupported transfer encoding"},
	}
	for _, tt := range tests {
		resp, body := rawRequest(t, addr, tt.request)
		var e ErrorBody
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(body, &e) != nil || e.Status != CodeInvalidInput || !strings.HasPrefix(e.Error, tt.msg) {
			t.Errorf("%s: %d %q %.200s, want %d %s", tt.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status, tt.msg)
		}
	}

	// Two requests on one connection, the second just under the limit.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for _, extra := range []string{"", "x-big: " + strings.Repeat("a", 1<<20-1024) + "\r\n"} {
		if _, err := io.WriteString(conn, get+extra+"\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "\"9.9.9\"\n" {
			t.Fatalf("through the listener: %d %s", resp.StatusCode, body)
		}
	}
}

func TestParseCanned(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: x\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 431 Request Header Fields Too Large\r\nDate: x" + cannedHeaders,
		"HTTP/1.1 200 OK" + cannedHeaders + "ok",
		`{"status":"x"}`,
		"HTTP/1.1 ",
	} {
		if _, _, ok := parseCanned([]byte(p)); ok {
			t.Errorf("%q taken for an answer of net/http's own", p)
		}
	}
}
