package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
)

const testToken = "S3cret!token"

const want403 = `{"status":403,"challenge":"Basic realm=relayd","message":"You must authenticate to access relayd."}` + "\n"

// fakeNode is the node as the API sees it, with scripted answers.
type fakeNode struct {
	*identity.Identity
	aliases map[string]string
	peers   []PeerInfo
	ping    func(context.Context, peer.ID) (time.Duration, error)

	send         func(context.Context, peer.ID, string) (string, error)
	withdrawn    []string
	openChannels map[peer.ID]bool
	tickets      []Ticket

	settingStrategy string
}

func (f *fakeNode) Version() string   { return "9.9.9" }
func (f *fakeNode) Peers() []PeerInfo { return f.peers }
func (f *fakeNode) Ping(ctx context.Context, id peer.ID) (time.Duration, error) {
	return f.ping(ctx, id)
}

func (f *fakeNode) Aliases() (map[string]string, error) {
	m := map[string]string{}
	for k, v := range f.aliases {
		m[k] = v
	}
	return m, nil
}
func (f *fakeNode) SetAlias(a string, id peer.ID) error { f.aliases[a] = id.String(); return nil }
func (f *fakeNode) DeleteAlias(a string) error {
	if _, ok := f.aliases[a]; !ok {
		return fmt.Errorf("alias %q: %w", a, ErrAliasNotFound)
	}
	delete(f.aliases, a)
	return nil
}

func (f *fakeNode) Settings() (map[string]any, error) {
	return map[string]any{"strategy": f.strategy(), "includeRecipient": false, "maxChannels": 5, "channelFunding": "10000000000000000000",
		"autoRedeem": false, "autoRedeemCount": 100, "autoRedeemValue": "1000000000000000000",
		"mixDelayMean": "20ms", "coverRate": 0, "relayers": 2}, nil
}

func (f *fakeNode) strategy() string {
	if f.settingStrategy == "" {
		return "passive"
	}
	return f.settingStrategy
}

// UpdateSettings knows only "strategy", as the node's adapter answers.
func (f *fakeNode) UpdateSettings(v map[string]json.RawMessage) (map[string]any, error) {
	for name, raw := range v {
		if name != "strategy" {
			return nil, &Error{http.StatusBadRequest, CodeInvalidSetting, "no setting " + quote(name)}
		}
		var st string
		if json.Unmarshal(raw, &st) != nil || (st != "passive" && st != "promiscuous") {
			return nil, &Error{http.StatusBadRequest, CodeInvalidSettingValue, "strategy must be passive or promiscuous"}
		}
		f.settingStrategy = st
	}
	return f.Settings()
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeNode{Identity: id, aliases: map[string]string{}, openChannels: map[peer.ID]bool{}}
}

func newTestServer(t *testing.T, disableAuth bool) (*httptest.Server, *fakeNode) {
	t.Helper()
	return serve(t, newFakeNode(t), disableAuth)
}

func serve(t *testing.T, n *fakeNode, disableAuth bool) (*httptest.Server, *fakeNode) {
	t.Helper()
	s, err := New(n.config(disableAuth))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, n
}

func do(t *testing.T, method, url string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	return doBody(t, method, url, header, "")
}

func doBody(t *testing.T, method, url string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	resp, b := send(t, method, url, h, body)
	return resp.StatusCode, resp.Header, string(b)
}

func basic(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }

func TestAuthentication(t *testing.T) {
	srv, _ := newTestServer(t, false)
	url := srv.URL + "/api/v2/account/addresses"
	tests := []struct {
		name   string
		header map[string]string
		ok     bool
	}{
		{"no token", nil, false},
		{"wrong x-auth-token", map[string]string{"x-auth-token": "S3cret!tokem"}, false},
		{"wrong basic", map[string]string{"Authorization": basic("nope-nope-nope")}, false},
		{"basic with trailing newline", map[string]string{"Authorization": basic(testToken + "\n")}, false},
		{"basic not base64", map[string]string{"Authorization": "Basic !!!"}, false},
		{"bearer scheme", map[string]string{"Authorization": "Bearer " + testToken}, false},
		{"token prefix", map[string]string{"x-auth-token": testToken[:8]}, false},
		{"basic token", map[string]string{"Authorization": basic(testToken)}, true},
		{"basic token:x", map[string]string{"Authorization": basic(testToken + ":x")}, true},
		{"basic lower-case scheme", map[string]string{"Authorization": "basic " + base64.StdEncoding.EncodeToString([]byte(testToken))}, true},
		{"x-auth-token", map[string]string{"x-auth-token": testToken}, true},
		{"wrong x-auth-token, right basic", map[string]string{"x-auth-token": "wrong-wrong", "Authorization": basic(testToken)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, hdr, body := do(t, http.MethodGet, url, tt.header)
			if tt.ok {
				if status != http.StatusOK {
					t.Fatalf("status %d body %s", status, body)
				}
				return
			}
			if status != http.StatusForbidden || body != want403 {
				t.Fatalf("got %d %q, want 403 %q", status, body, want403)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
		})
	}
}

func TestAuthCoversUnknownPathsAndWrongMethods(t *testing.T) {
	srv, _ := newTestServer(t, false)
	for _, path := range []string{"/api/v2/nothing/here", "/api/v2/account/address"} {
		status, _, body := do(t, http.MethodDelete, srv.URL+path, nil)
		if status != http.StatusForbidden || body != want403 {
			t.Fatalf("%s without token: %d %s", path, status, body)
		}
	}
}

func TestDisabledAuth(t *testing.T) {
	srv, _ := newTestServer(t, true)
	if status, _, body := do(t, http.MethodGet, srv.URL+"/api/v2/account/address", nil); status != http.StatusOK {
		t.Fatalf("got %d %s", status, body)
	}
}

func TestAddressOperations(t *testing.T) {
	srv, id := newTestServer(t, false)
	auth := map[string]string{"x-auth-token": testToken}

	status, _, body := do(t, http.MethodGet, srv.URL+"/api/v2/account/address", auth)
	if status != http.StatusOK {
		t.Fatalf("address: %d %s", status, body)
	}
	var short map[string]string
	if err := json.Unmarshal([]byte(body), &short); err != nil {
		t.Fatal(err)
	}
	if len(short) != 2 || short["nativeAddress"] != id.Address().Hex() || short["relayAddress"] != id.PeerID().String() {
		t.Fatalf("address body %s", body)
	}

	status, _, body = do(t, http.MethodGet, srv.URL+"/api/v2/account/addresses", auth)
	if status != http.StatusOK {
		t.Fatalf("addresses: %d %s", status, body)
	}
	var long map[string]string
	if err := json.Unmarshal([]byte(body), &long); err != nil {
		t.Fatal(err)
	}
	if len(long) != 4 || long["nativeAddress"] != id.Address().Hex() || long["native"] != long["nativeAddress"] ||
		long["relayAddress"] != id.PeerID().String() || long["relay"] != long["relayAddress"] {
		t.Fatalf("addresses body %s", body)
	}
}

func TestNotFoundAndMethodNotAllowedAreJSON(t *testing.T) {
	srv, _ := newTestServer(t, false)
	auth := map[string]string{"x-auth-token": testToken}
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/v2/no/such/thing", http.StatusNotFound, CodeNotFound},
		{http.MethodGet, "/elsewhere", http.StatusNotFound, CodeNotFound},
		{http.MethodPost, "/api/v2/account/addresses", http.StatusMethodNotAllowed, CodeInvalidInput},
	}
	for _, tt := range tests {
		status, hdr, body := do(t, tt.method, srv.URL+tt.path, auth)
		var e ErrorBody
		if status != tt.status || json.Unmarshal([]byte(body), &e) != nil || e.Status != tt.code || e.Error == "" {
			t.Fatalf("%s %s: %d %s", tt.method, tt.path, status, body)
		}
		if tt.status == http.StatusMethodNotAllowed && hdr.Get("Allow") != "GET" {
			t.Fatalf("Allow header %q", hdr.Get("Allow"))
		}
	}
}
