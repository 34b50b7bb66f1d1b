package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/ws"
)

// TestTrailingSlash: every operation also answers at its path with one
// trailing slash, as the original interface's documents spell some of
// them: the same answer, no redirect. /api/v2/ and doubled slashes stay 404.
func TestTrailingSlash(t *testing.T) {
	f := newSpecFixture(t)
	f.reset(t)
	srv := serveConfig(t, f.self.config(false))
	bob := f.other.PeerID().String()
	token := http.Header{"X-Auth-Token": {testToken}}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/aliases", ""},
		{"GET", "/aliases/bob", ""},
		{"GET", "/channels", ""},
		{"GET", "/channels/" + bob + "/outgoing", ""},
		{"GET", "/tickets", ""},
		{"GET", "/settings", ""},
		{"GET", "/node/info", ""},
		{"GET", "/account/addresses", ""},
		{"POST", "/messages", `{"body":"hi","recipient":"` + bob + `"}`},
		{"GET", "/messages", ""},
		{"GET", "/messages/" + messageID(fakeDelivered), ""},
		{"POST", "/aliases", `{"peerId":"` + bob + `","alias":"carol"}`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			want, wantBody := send(t, tc.method, srv.URL+Prefix+tc.path, token, tc.body)
			got, gotBody := send(t, tc.method, srv.URL+Prefix+tc.path+"/", token, tc.body)
			if got.StatusCode != want.StatusCode || string(gotBody) != string(wantBody) {
				t.Fatalf("with a slash: %d %s; without: %d %s", got.StatusCode, gotBody, want.StatusCode, wantBody)
			}
			if got.StatusCode >= 300 && got.StatusCode < 400 || got.StatusCode == http.StatusNotFound {
				t.Fatalf("with a slash: %d", got.StatusCode)
			}
		})
	}
	// The token is still needed, and only one slash is taken off.
	if resp, body := send(t, "GET", srv.URL+Prefix+"/aliases/", nil, ""); resp.StatusCode != http.StatusForbidden || string(body) != want403 {
		t.Errorf("without a token: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{Prefix + "/", Prefix + "/aliases//", Prefix + "/nothing/"} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+p, nil)
		req.Header.Set("X-Auth-Token", testToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// recordingStreams records what the server hands to the streams.
type recordingStreams struct {
	calls       chan string
	hasDeadline bool
}

func (s *recordingStreams) ServeMessages(w http.ResponseWriter, r *http.Request, since *uint64) {
	_, s.hasDeadline = r.Context().Deadline()
	v := "messages"
	if since != nil {
		v += " since " + strings.TrimSpace(r.URL.Query().Get("since"))
	}
	s.calls <- v
	w.WriteHeader(http.StatusNoContent)
}

func (s *recordingStreams) ServeAdmin(w http.ResponseWriter, r *http.Request, authEnabled bool) {
	_, s.hasDeadline = r.Context().Deadline()
	s.calls <- "admin"
	w.WriteHeader(http.StatusNoContent)
}

// TestStreamAuthentication: the streams take the token in the headers, the
// apiToken query parameter or the X-Auth-Token cookie; a missing or wrong
// one gets the 403 before the stream is reached. Other operations do not
// take the token from the query or a cookie.
func TestStreamAuthentication(t *testing.T) {
	rec := &recordingStreams{calls: make(chan string, 10)}
	cfg := newFakeNode(t).config(false)
	cfg.Streams = rec
	srv := serveConfig(t, cfg)
	base := srv.URL + Prefix
	for _, tc := range []struct {
		name, path string
		header     http.Header
		ok         bool
	}{
		{"header", "/messages/websocket", http.Header{"X-Auth-Token": {testToken}}, true},
		{"basic", "/node/stream/websocket", http.Header{"Authorization": {basic(testToken)}}, true},
		{"query", "/messages/websocket?apiToken=" + url.QueryEscape(testToken), nil, true},
		{"query, trailing slash", "/messages/websocket/?apiToken=" + url.QueryEscape(testToken), nil, true},
		{"cookie", "/node/stream/websocket", http.Header{"Cookie": {"X-Auth-Token=" + url.QueryEscape(testToken)}}, true},
		{"lower-case cookie", "/messages/websocket", http.Header{"Cookie": {"x-auth-token=" + url.QueryEscape(testToken)}}, true},
		{"no token", "/messages/websocket", nil, false},
		{"wrong query", "/messages/websocket?apiToken=wrong", nil, false},
		{"wrong cookie", "/node/stream/websocket", http.Header{"Cookie": {"X-Auth-Token=wrong"}}, false},
		{"query on an operation", "/node/version?apiToken=" + url.QueryEscape(testToken), nil, false},
		{"cookie on an operation", "/node/version", http.Header{"Cookie": {"X-Auth-Token=" + url.QueryEscape(testToken)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := wsUpgrade()
			for k, v := range tc.header {
				h[k] = v
			}
			resp, body := send(t, http.MethodGet, base+tc.path, h, "")
			if !tc.ok {
				if resp.StatusCode != http.StatusForbidden || string(body) != want403 {
					t.Fatalf("got %d %s, want the 403", resp.StatusCode, body)
				}
				select {
				case c := <-rec.calls:
					t.Fatalf("stream reached: %s", c)
				default:
				}
				return
			}
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			<-rec.calls
		})
	}
}

// TestStreamsHaveNoTimeout: a stream lasts as long as its client, so it is
// not bound by the operation timeout that every other operation has.
func TestStreamsHaveNoTimeout(t *testing.T) {
	rec := &recordingStreams{calls: make(chan string, 10)}
	cfg := newFakeNode(t).config(false)
	cfg.Streams = rec
	cfg.Timeout = time.Hour
	srv := serveConfig(t, cfg)
	for _, p := range []string{"/messages/websocket?since=7", "/node/stream/websocket"} {
		resp, body := send(t, http.MethodGet, srv.URL+Prefix+p, http.Header{"X-Auth-Token": {testToken}, "Connection": {"upgrade"}, "Upgrade": {"WebSocket"}}, "")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
		if call := <-rec.calls; rec.hasDeadline || (p[1] == 'm' && call != "messages since 7") {
			t.Errorf("%s: call %q, deadline %v", p, call, rec.hasDeadline)
		}
	}
}

// TestMessageStreamOverREST: a WebSocket client on the REST port receives the messages the node
// keeps in its inbox, with their seqs as ids, and ?since= replays.
func TestMessageStreamOverREST(t *testing.T) {
	mail := newFakeMail()
	mail.reset()
	streams, err := ws.NewAppStreams(ws.NewHub(nil), mail, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- streams.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	cfg := newFakeNode(t).config(false)
	cfg.Streams = streams
	srv := serveConfig(t, cfg)
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + Prefix + "/messages/websocket?apiToken=" + url.QueryEscape(testToken)
	dial := func(u string) *websocket.Conn {
		dctx, dcancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer dcancel()
		c, _, err := websocket.Dial(dctx, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	read := func(c *websocket.Conn) ws.AppMessage {
		rctx, rcancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer rcancel()
		_, b, err := c.Read(rctx)
		if err != nil {
			t.Fatal(err)
		}
		var m ws.AppMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// since=0 replays the kept messages, 1 to 3 (reset's), then goes on live.
	c := dial(wsURL + "&since=0")
	first := read(c)
	if first.ID != 1 || first.Body != "hello <b>\x1b[31m" || first.RepliesLeft != 2 || first.MessageID != "0x01000000000000000000000000000000" {
		t.Fatalf("first %+v", first)
	}
	if m := read(c); m.ID != 2 || !m.Reply || m.InReplyTo != messageID(fakeDelivered) {
		t.Fatalf("second %+v", m)
	}
	if m := read(c); m.ID != 3 {
		t.Fatalf("third %+v", m)
	}
	mail.mu.Lock()
	mail.inbox = append(mail.inbox, store.InboxMessage{Seq: 4, ID: [16]byte{4}, Received: fakeReceived, Body: []byte("fourth")})
	fourth := mail.inbox[3]
	mail.mu.Unlock()
	streams.Event(ws.EventReceived, fourth.ID, "", fourth)
	if m := read(c); m.Body != "fourth" || m.ID != 4 {
		t.Fatalf("live %+v", m)
	}
	again := dial(strings.Replace(wsURL, "websocket?", "websocket/?", 1) + "&since=" + strconv.FormatUint(first.ID+1, 10))
	if m := read(again); m.ID != 3 {
		t.Fatalf("replay since %d: %+v", first.ID+1, m)
	}
}

// TestHealthChecks: /healthz and /readyz need no token; /readyz is 503
// naming what is not ready.
func TestHealthChecks(t *testing.T) {
	for _, tc := range []struct {
		name         string
		health       []health.Checker
		status       int
		wantNotReady []string
	}{
		{"no checks", nil, 200, []string{}},
		{"ready", []health.Checker{health.Static{{Name: "chain", Ready: true}, {Name: "p2p", Ready: true}}}, 200, []string{}},
		{"not ready", []health.Checker{health.Static{{Name: "chain", Ready: false, Detail: "provider down"}, {Name: "indexer", Ready: false}, {Name: "p2p", Ready: true}}},
			503, []string{"chain", "indexer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newFakeNode(t).config(false)
			cfg.Health = tc.health
			srv := serveConfig(t, cfg)
			resp, body := send(t, http.MethodGet, srv.URL+HealthPath, nil, "")
			if resp.StatusCode != 200 || string(body) != "{\"status\":\"ok\"}\n" {
				t.Fatalf("healthz: %d %s", resp.StatusCode, body)
			}
			resp, body = send(t, http.MethodGet, srv.URL+ReadyPath, nil, "")
			var got Readiness
			if resp.StatusCode != tc.status || json.Unmarshal(body, &got) != nil {
				t.Fatalf("readyz: %d %s", resp.StatusCode, body)
			}
			if got.Ready != (tc.status == 200) || !slices.Equal(got.NotReady, tc.wantNotReady) || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
				t.Fatalf("readyz: %s", body)
			}
			if tc.health != nil && !strings.Contains(string(body), `"detail":"provider down"`) && tc.status == 503 {
				t.Fatalf("readyz lacks the detail: %s", body)
			}
		})
	}
}

// TestInfoOriginalFields: /node/info also carries the original interface's
// fields, derived from relayd's.
func TestInfoOriginalFields(t *testing.T) {
	n := newFakeNode(t)
	n.transport.setPeers(peers.Info{ID: newPeerID(t), Connected: true, Quality: 0.9}, peers.Info{ID: newPeerID(t), Connected: true, Quality: 0.4})
	srv, _ := serve(t, n, false)
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth)
	var got Info
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	if got.Environment != "test" || !slices.Equal(got.ListeningAddress, []string{"/ip4/127.0.0.1/tcp/9091"}) ||
		got.AnnouncedAddress == nil || got.RelayToken != got.TokenContract || got.RelayChannels != got.ChannelsContract ||
		got.RelayToken == "" || got.ChannelClosurePeriod != 1 || got.ConnectivityStatus != "Yellow" || !got.IsEligible {
		t.Fatalf("original fields: %s", body)
	}
	if !strings.Contains(body, `"announcedAddress":[]`) {
		t.Fatalf("announcedAddress must be an array: %s", body)
	}
}

func TestConnectivity(t *testing.T) {
	for _, tc := range []struct {
		peers []PeerInfo
		want  string
	}{
		{nil, "Red"},
		{[]PeerInfo{{Quality: 1}}, "Red"}, // known, not connected
		{[]PeerInfo{{Connected: true, Quality: 0.5}}, "Orange"},
		{[]PeerInfo{{Connected: true, Quality: 0.6}, {Connected: true}}, "Yellow"},
		{[]PeerInfo{{Connected: true, Quality: 0.6}, {Connected: true, Quality: 1}}, "Green"},
	} {
		if got := connectivity(tc.peers); got != tc.want {
			t.Errorf("connectivity(%+v) = %s, want %s", tc.peers, got, tc.want)
		}
	}
}

// TestInfoClosurePeriodRoundsUp: the original gives minutes, rounded up.
func TestInfoClosurePeriodRoundsUp(t *testing.T) {
	for secs, want := range map[uint64]uint64{0: 0, 1: 1, 60: 1, 61: 2, 300: 5} {
		cfg := newFakeNode(t).config(false)
		cfg.ChainInfo = fakeChainInfo{closure: time.Duration(secs) * time.Second}
		srv := serveConfig(t, cfg)
		_, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth)
		var got Info
		if json.Unmarshal([]byte(body), &got) != nil || got.ChannelClosurePeriod != want {
			t.Errorf("closure %d s: %s, want %d minutes", secs, body, want)
		}
	}
}

// TestPeersOriginalFields: peers carry multiAddr, heartbeats, lastSeen in
// milliseconds, backoff and isNew; quality filters.
func TestPeersOriginalFields(t *testing.T) {
	n := newFakeNode(t)
	known, fresh := newPeerID(t), newPeerID(t)
	n.transport.setPeers(
		peers.Info{ID: known, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1"), ma.StringCast("/ip4/10.0.0.1/tcp/1")}, Quality: 0.8,
			Connected: true, LastSeen: time.UnixMilli(1795305600123), HeartbeatsSent: 5, HeartbeatsSucceeded: 4},
		peers.Info{ID: fresh, Quality: 0.2},
	)
	srv, _ := serve(t, n, false)
	_, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/peers", auth)
	var raw struct {
		Announced []map[string]any `json:"announced"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil || len(raw.Announced) != 2 {
		t.Fatalf("%s", body)
	}
	a, b := raw.Announced[0], raw.Announced[1]
	if a["multiAddr"] != "/ip4/127.0.0.1/tcp/1" || a["lastSeen"] != 1795305600123.0 || a["isNew"] != false || a["backoff"] != 0.0 {
		t.Errorf("known peer: %v", a)
	}
	if hb, _ := a["heartbeats"].(map[string]any); hb["sent"] != 5.0 || hb["success"] != 4.0 {
		t.Errorf("heartbeats: %v", a["heartbeats"])
	}
	if _, has := b["multiAddr"]; has || b["isNew"] != true || b["lastSeen"] != 0.0 || fmt.Sprint(b["multiAddrs"]) != "[]" {
		t.Errorf("new peer: %v", b)
	}
	if a["peerId"] != known.String() || a["multiAddrs"].([]any)[1] != "/ip4/10.0.0.1/tcp/1" || b["peerId"] != fresh.String() {
		t.Errorf("peers %v, %v", a, b)
	}
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/peers?quality=0.5", auth)
	var got PeerList
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Announced) != 1 || got.Announced[0].PeerID != known.String() || len(got.Connected) != 1 {
		t.Fatalf("quality 0.5: %d %s", status, body)
	}
	for _, q := range []string{"1.5", "-1", "NaN", "x", "", "1e400"} {
		status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/peers?quality="+q, auth)
		if status != 400 || !strings.Contains(body, "INVALID_INPUT") {
			t.Errorf("quality %q: %d %s", q, status, body)
		}
	}
}

// TestTicketEpoch: tickets carry the original's epoch, the channel epoch.
func TestTicketEpoch(t *testing.T) {
	n := newFakeNode(t)
	other, _ := identity.Generate()
	tk := fakeTicket(other.Address(), n.Address(), 1)
	tk.Ticket.Epoch = 3
	n.chain.reset(nil, tk)
	srv, _ := serve(t, n, false)
	for _, p := range []string{"/tickets", "/channels/" + other.PeerID().String() + "/tickets"} {
		_, _, body := do(t, http.MethodGet, srv.URL+Prefix+p, auth)
		var got []Ticket
		if json.Unmarshal([]byte(body), &got) != nil || len(got) != 1 || got[0].Epoch != "3" || got[0].ChannelEpoch != "3" {
			t.Errorf("%s: %s", p, body)
		}
	}
}

// TestMessageToAlias: the recipient may be an alias, resolved to its
// PeerId; a PeerId is read before the aliases; "me" is this node (refused).
func TestMessageToAlias(t *testing.T) {
	n := newFakeNode(t)
	bob, _ := identity.Generate()
	carol, _ := identity.Generate()
	// The store holds an alias spelt like bob's PeerId (refused since, but written by older code).
	n.aliases.set(map[string]string{"bob": bob.PeerID().String(), bob.PeerID().String(): carol.PeerID().String()})
	var to peer.ID
	n.messenger.send = func(_ context.Context, id peer.ID, _ string) (router.Sent, error) {
		to = id
		return router.Sent{Ack: ack(0x02, 0)}, nil
	}
	srv, _ := serve(t, n, false)
	for _, tc := range []struct {
		recipient string
		status    int
		want      peer.ID
		msg       string
	}{
		{"bob", 202, bob.PeerID(), ""},
		{bob.PeerID().String(), 202, bob.PeerID(), ""},
		{"me", 400, "", "recipient is this node itself"},
		{"nobody", 400, "", `recipient "nobody" is neither a valid secp256k1 PeerId nor an alias`},
	} {
		to = ""
		status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi","recipient":"`+tc.recipient+`"}`)
		var e ErrorBody
		json.Unmarshal([]byte(body), &e)
		if status != tc.status || to != tc.want || !strings.Contains(e.Error, tc.msg) {
			t.Errorf("recipient %q: %d %s, sent to %q", tc.recipient, status, body, to)
		}
	}
}

// TestPathRefusedInWords: a message body that chooses the path or its
// length is refused, saying that the node picks the path.
func TestPathRefusedInWords(t *testing.T) {
	srv, _ := newTestServer(t, false)
	other, _ := identity.Generate()
	for field, value := range map[string]string{"path": `["` + other.PeerID().String() + `"]`, "hops": "1"} {
		status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth,
			`{"body":"hi","recipient":"`+other.PeerID().String()+`","`+field+`":`+value+`}`)
		if status != 400 || !strings.Contains(body, `unknown field \"`+field+`\": the node picks the path`) ||
			!strings.Contains(body, "this API does not let the caller choose") {
			t.Errorf("%s: %d %s", field, status, body)
		}
	}
}

// checkerFunc is a health.Checker.
type checkerFunc func(context.Context) []health.Check

func (f checkerFunc) Checks(ctx context.Context) []health.Check { return f(ctx) }

// TestReadyzAddsUpCheckers: /readyz lists the checks of every checker in their order, and is
// ready only when each is; the checks run under a deadline, so one that hangs cannot hold the
// answer forever.
func TestReadyzAddsUpCheckers(t *testing.T) {
	var deadline bool
	relay := checkerFunc(func(ctx context.Context) []health.Check {
		_, deadline = ctx.Deadline()
		return []health.Check{{Name: "relay", Ready: true}, {Name: "store", Ready: false, Detail: "store is read-only"}}
	})
	for _, tc := range []struct {
		name     string
		checkers []health.Checker
		status   int
		want     Readiness
	}{
		{"all ready", []health.Checker{health.Static{{Name: "chain", Ready: true}}, health.Static{{Name: "indexer", Ready: true}, {Name: "p2p", Ready: true}}},
			200, Readiness{Ready: true, NotReady: []string{}, Checks: []health.Check{{Name: "chain", Ready: true}, {Name: "indexer", Ready: true}, {Name: "p2p", Ready: true}}}},
		{"one not ready", []health.Checker{health.Static{{Name: "chain", Ready: true}}, relay, health.Static{{Name: "p2p", Ready: false, Detail: "no peer"}}},
			503, Readiness{Ready: false, NotReady: []string{"store", "p2p"}, Checks: []health.Check{{Name: "chain", Ready: true},
				{Name: "relay", Ready: true}, {Name: "store", Ready: false, Detail: "store is read-only"}, {Name: "p2p", Ready: false, Detail: "no peer"}}}},
		{"a checker with nothing to say", []health.Checker{health.Static{}, health.Static{{Name: "chain", Ready: true}}},
			200, Readiness{Ready: true, NotReady: []string{}, Checks: []health.Check{{Name: "chain", Ready: true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newFakeNode(t).config(false)
			cfg.Health = tc.checkers
			srv := serveConfig(t, cfg)
			resp, body := send(t, http.MethodGet, srv.URL+ReadyPath, nil, "")
			want, _ := json.Marshal(tc.want)
			if resp.StatusCode != tc.status || string(body) != string(want)+"\n" {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tc.status, want)
			}
		})
	}
	if !deadline {
		t.Error("the checks ran without a deadline")
	}
}
