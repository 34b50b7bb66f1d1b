package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// restCall is one request the fake REST API got.
type restCall struct {
	method, path, query, token, contentType string
	body                                    map[string]any
}

// fakeREST answers the message operations as a node does, recording each call.
type fakeREST struct {
	mu    sync.Mutex
	calls []restCall
	empty bool // the inbox is empty
}

func (f *fakeREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := restCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, token: r.Header.Get("x-auth-token"), contentType: r.Header.Get("Content-Type")}
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		json.Unmarshal(b, &c.body)
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	empty := f.empty
	f.mu.Unlock()
	answer := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body+"\n")
	}
	const msg = `{"seq":7,"id":"0x09000000000000000000000000000000","body":"hi\u001b[31m","receivedAt":"2026-11-24T08:00:00.123Z","reply":false,"repliesLeft":2}`
	switch {
	case c.token != "S3cret!token":
		answer(403, `{"status":403,"challenge":"Basic realm=relayd","message":"You must authenticate to access relayd."}`)
	case r.Method == "POST" && c.path == "/api/v2/messages" && c.body["recipient"] == "nobody":
		answer(400, `{"status":"INVALID_PEERID","error":"recipient \"nobody\" is neither a valid secp256k1 PeerId nor an alias"}`)
	case r.Method == "POST" && c.path == "/api/v2/messages":
		answer(202, `"0x5e000000000000000000000000000001"`)
	case r.Method == "GET" && c.path == "/api/v2/messages":
		answer(200, `[`+msg+`,{"seq":8,"id":"0x0a000000000000000000000000000000","body":"yes","receivedAt":"2026-11-24T08:00:01.000Z","reply":true,"inReplyTo":"0x5e000000000000000000000000000001","repliesLeft":0}]`)
	case r.Method == "POST" && c.path == "/api/v2/messages/pop" && empty:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && c.path == "/api/v2/messages/pop":
		answer(200, msg)
	case r.Method == "POST" && c.path == "/api/v2/messages/inbox/7/reply":
		answer(202, `{"id":"0x7e000000000000000000000000000001","repliesLeft":1}`)
	case r.Method == "POST" && strings.HasPrefix(c.path, "/api/v2/messages/inbox/"):
		answer(409, `{"status":"NO_REPLY_BLOCK","error":"cannot reply: no reply block is left for this message"}`)
	case r.Method == "GET" && c.path == "/api/v2/messages/0x5e000000000000000000000000000001":
		answer(200, `{"id":"0x5e000000000000000000000000000001","recipient":"16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT","state":"failed",`+
			`"reason":"no acknowledgement\u001b","fragments":3,"acknowledged":2,"attempts":8,"createdAt":"2026-11-24T08:00:00.000Z","updatedAt":"2026-11-24T08:01:00.000Z","replies":1}`)
	default:
		answer(404, `{"status":"MESSAGE_NOT_FOUND","error":"cannot message status: no such message"}`)
	}
}

// TestMessageSubcommands: relayctl send, inbox, reply and status call the REST operations with
// the token, and print the answers for people (received text escaped) or, with --json, as they
// came; a refusal is the node's envelope on stderr and exit status 1.
func TestMessageSubcommands(t *testing.T) {
	f := &fakeREST{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("RELAYD_API_TOKEN", "S3cret!token")
	t.Setenv("RELAYCTL_API_URL", srv.URL)
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		out    string
		errOut string
		call   restCall
	}{
		{"send", []string{"send", "bob", "hello", "there"}, "", 0, "0x5e000000000000000000000000000001\n", "",
			restCall{method: "POST", path: "/api/v2/messages", body: map[string]any{"body": "hello there", "recipient": "bob"}}},
		{"send with options", []string{"send", "--replies", "3", "--reliable", "bob", "hi"}, "", 0, "0x5e000000000000000000000000000001\n", "",
			restCall{method: "POST", path: "/api/v2/messages", body: map[string]any{"body": "hi", "recipient": "bob", "replies": 3.0, "reliable": true}}},
		{"send from stdin", []string{"send", "bob", "-"}, "line one\nline two\n", 0, "0x5e000000000000000000000000000001\n", "",
			restCall{method: "POST", path: "/api/v2/messages", body: map[string]any{"body": "line one\nline two", "recipient": "bob"}}},
		{"send, refused", []string{"send", "nobody", "hi"}, "", 1, "", "relayctl send: 400 INVALID_PEERID: recipient \"nobody\" is neither a valid secp256k1 PeerId nor an alias\n",
			restCall{method: "POST", path: "/api/v2/messages", body: map[string]any{"body": "hi", "recipient": "nobody"}}},
		{"inbox", []string{"inbox", "--since", "6", "--limit", "2"}, "", 0,
			"#7 2026-11-24T08:00:00.123Z, 2 replies left: hi\\x1b[31m\n#8 2026-11-24T08:00:01.000Z, reply to 0x5e000000000000000000000000000001: yes\n", "",
			restCall{method: "GET", path: "/api/v2/messages", query: "limit=2&since=6"}},
		{"inbox --json", []string{"inbox", "--json"}, "", 0, "[", "", restCall{method: "GET", path: "/api/v2/messages"}},
		{"pop", []string{"inbox", "--pop"}, "", 0, "#7 2026-11-24T08:00:00.123Z, 2 replies left: hi\\x1b[31m\n", "",
			restCall{method: "POST", path: "/api/v2/messages/pop"}},
		{"reply", []string{"reply", "7", "thanks"}, "", 0, "0x7e000000000000000000000000000001 (1 reply blocks left)\n", "",
			restCall{method: "POST", path: "/api/v2/messages/inbox/7/reply", body: map[string]any{"body": "thanks"}}},
		{"reply, none left", []string{"reply", "8", "thanks"}, "", 1, "", "relayctl reply: 409 NO_REPLY_BLOCK: cannot reply: no reply block is left for this message\n",
			restCall{method: "POST", path: "/api/v2/messages/inbox/8/reply", body: map[string]any{"body": "thanks"}}},
		{"status", []string{"status", "0x5e000000000000000000000000000001"}, "", 0,
			"0x5e000000000000000000000000000001 to 16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT: failed, 2 of 3 packets acknowledged, 8 rounds, 1 reply blocks; " +
				"accepted 2026-11-24T08:00:00.000Z, last change 2026-11-24T08:01:00.000Z\nreason: no acknowledgement\\x1b\n", "",
			restCall{method: "GET", path: "/api/v2/messages/0x5e000000000000000000000000000001"}},
		{"status, unknown", []string{"status", "0x00"}, "", 1, "", "relayctl status: 404 MESSAGE_NOT_FOUND: cannot message status: no such message\n",
			restCall{method: "GET", path: "/api/v2/messages/0x00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.calls = nil
			f.mu.Unlock()
			var stdout, stderr strings.Builder
			code := messagesMain(t.Context(), tc.args[0], tc.args[1:], strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code || (!strings.HasSuffix(tc.name, "--json") && stdout.String() != tc.out) || stderr.String() != tc.errOut {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tc.code, tc.out, tc.errOut)
			}
			if strings.HasSuffix(tc.name, "--json") && !json.Valid([]byte(stdout.String())) {
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
			wb, _ := json.Marshal(tc.call.body)
			gb, _ := json.Marshal(got.body)
			if string(wb) != string(gb) {
				t.Fatalf("body %s, want %s", gb, wb)
			}
		})
	}
	f.empty = true
	var stdout, stderr strings.Builder
	if code := messagesMain(t.Context(), "inbox", []string{"--pop"}, nil, &stdout, &stderr); code != 0 || stdout.String() != "" || stderr.String() != "" {
		t.Fatalf("pop an empty inbox: %d %q %q", code, stdout.String(), stderr.String())
	}
}

// TestMessageSubcommandUsage: bad arguments are exit status 2 with a reason, before any call;
// a wrong token is the node's 403, without the token in what relayctl prints.
func TestMessageSubcommandUsage(t *testing.T) {
	f := &fakeREST{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "bob"}, "send needs a recipient and a text"},
		{[]string{"send", "bob", "-"}, "standard input is empty"},
		{[]string{"inbox", "extra"}, "inbox takes no arguments"},
		{[]string{"reply", "x", "hi"}, `"x" is not a message's seq`},
		{[]string{"reply", "0", "hi"}, `"0" is not a message's seq`},
		{[]string{"status"}, "status needs one message id"},
		{[]string{"status", "--api", "ftp://x", "0x00"}, "--api must be the node's REST URL"},
	} {
		var stdout, stderr strings.Builder
		code := messagesMain(t.Context(), tc.args[0], append([]string{"--api", srv.URL}, tc.args[1:]...), strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	if len(f.calls) != 0 {
		t.Fatalf("%d calls made on bad usage", len(f.calls))
	}
	var stdout, stderr strings.Builder
	code := messagesMain(t.Context(), "inbox", []string{"--api", srv.URL, "--apiToken", "wrong-token"}, nil, &stdout, &stderr)
	if code != 1 || stderr.String() != "relayctl inbox: 403 You must authenticate to access relayd.\n" || strings.Contains(stderr.String(), "wrong-token") {
		t.Fatalf("wrong token: %d %q", code, stderr.String())
	}
}
