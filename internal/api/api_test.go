package api

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/settings"
)

const testToken = "S3cret!token"

const want403 = `{"status":403,"challenge":"Basic realm=relayd","message":"You must authenticate to access relayd."}` + "\n"

// fakeNode is the node as the API sees it: the real rooms where they are cheap (its identity, a
// peer directory over an in-memory alias store, settings over an in-memory store, a channel
// graph) and scripted fakes for what needs a network or a chain (fake_test.go).
type fakeNode struct {
	*identity.Identity
	aliases       *memAliases
	settingsStore *memSettings
	settings      *settings.Settings
	graph         *channels.Graph
	dir           *peers.Directory
	transport     *fakeTransport
	discovery     *fakeDiscovery
	messenger     *fakeMessenger
	mail          *fakeMail
	sessions      *fakeSessions
	chain         *fakeChain
	chainInfo     fakeChainInfo
}

func newFakeNode(tb testing.TB) *fakeNode {
	tb.Helper()
	id, err := identity.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	n := &fakeNode{
		Identity:      id,
		aliases:       &memAliases{m: map[string]string{}},
		settingsStore: &memSettings{},
		graph:         channels.NewGraph(),
		transport:     &fakeTransport{},
		discovery:     &fakeDiscovery{self: id.PeerID()},
		messenger:     &fakeMessenger{},
		mail:          newFakeMail(),
		sessions:      &fakeSessions{},
		chain:         newFakeChain(id.Address()),
		chainInfo:     fakeChainInfo{closure: time.Minute},
	}
	n.discovery.transport = n.transport
	n.mail.reset()
	if n.settings, err = settings.Open(settings.Config{Store: n.settingsStore}); err != nil {
		tb.Fatal(err)
	}
	if n.dir, err = peers.New(peers.Config{Self: id.PeerID(), Announcements: n.graph, Aliases: n.aliases}); err != nil {
		tb.Fatal(err)
	}
	return n
}

// newPeerID is the PeerId of a fresh identity.
func newPeerID(tb testing.TB) peer.ID {
	tb.Helper()
	id, err := identity.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return id.PeerID()
}

// memAliases is a peers.AliasStore in memory; with err set, every call fails with it.
type memAliases struct {
	mu  sync.Mutex
	m   map[string]string
	err error
}

func (s *memAliases) Aliases() ([][2]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out [][2]string
	for _, k := range slices.Sorted(maps.Keys(s.m)) {
		out = append(out, [2]string{k, s.m[k]})
	}
	return out, nil
}

func (s *memAliases) Alias(a string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "", false, s.err
	}
	v, ok := s.m[a]
	return v, ok, nil
}

func (s *memAliases) SetAlias(a, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.m[a] = id
	return nil
}

func (s *memAliases) DeleteAlias(a string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false, s.err
	}
	_, ok := s.m[a]
	delete(s.m, a)
	return ok, nil
}

// set replaces the stored aliases (alias → PeerId text), which need not be valid ones.
func (s *memAliases) set(m map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m, s.err = maps.Clone(m), nil
}

// get returns the PeerId text an alias names.
func (s *memAliases) get(a string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[a]
	return v, ok
}

// fail makes every later call fail with err.
func (s *memAliases) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// memSettings is a settings.Store in memory; with err set, PutSettings fails with it (Settings
// does not: settings.Open reads it once).
type memSettings struct {
	mu  sync.Mutex
	m   map[string][]byte
	err error
}

func (s *memSettings) Settings() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.m), nil
}

func (s *memSettings) PutSettings(v map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	maps.Copy(s.m, v)
	return nil
}

func (s *memSettings) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func newTestServer(t *testing.T, disableAuth bool) (*httptest.Server, *fakeNode) {
	t.Helper()
	return serve(t, newFakeNode(t), disableAuth)
}

func serve(t *testing.T, n *fakeNode, disableAuth bool) (*httptest.Server, *fakeNode) {
	t.Helper()
	return serveConfig(t, n.config(disableAuth)), n
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

// TestNew: Self, Peers, Transport and Settings are required, and the token unless
// authentication is off.
func TestNew(t *testing.T) {
	n := newFakeNode(t)
	for name, cfg := range map[string]Config{
		"no Self":      {Token: testToken, Peers: n.dir, Transport: n.transport, Settings: n.settings},
		"no Peers":     {Token: testToken, Self: n.Identity, Transport: n.transport, Settings: n.settings},
		"no Transport": {Token: testToken, Self: n.Identity, Peers: n.dir, Settings: n.settings},
		"no Settings":  {Token: testToken, Self: n.Identity, Peers: n.dir, Transport: n.transport},
		"no Token":     {Self: n.Identity, Peers: n.dir, Transport: n.transport, Settings: n.settings},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(Config{DisableAuth: true, Self: n.Identity, Peers: n.dir, Transport: n.transport, Settings: n.settings}); err != nil {
		t.Errorf("authentication off, no Token: %v", err)
	}
}

// TestOnlyRequiredParts: a server given only the parts it needs answers what needs nothing else,
// shows no peers, addresses or chain fields, and answers 503 where a part is missing.
func TestOnlyRequiredParts(t *testing.T) {
	n := newFakeNode(t)
	srv := serveConfig(t, Config{Token: testToken, Self: n.Identity, Peers: n.dir, Transport: &fakeTransport{}, Settings: n.settings})
	other := newPeerID(t).String()
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string // the body, or for an error the code
	}{
		{"GET", "/account/address", "", 200, `{"nativeAddress":"` + n.Address().Hex() + `","relayAddress":"` + n.PeerID().String() + `"}`},
		{"GET", "/aliases", "", 200, `{"me":"` + n.PeerID().String() + `"}`},
		{"GET", "/node/version", "", 200, `""`},
		{"GET", "/node/peers", "", 200, `{"connected":[],"announced":[]}`},
		{"GET", "/node/entryNodes", "", 200, `{}`},
		{"GET", "/peerInfo/" + other, "", 200, `{"announced":[],"observed":[]}`},
		{"POST", "/messages/sign", `{"message":"hi"}`, 200, ""},
		{"PUT", "/settings/strategy", `{"settingValue":"passive"}`, 204, ""},
		{"POST", "/messages", `{"body":"hi","recipient":"` + other + `"}`, 503, CodeUnknownFailure},
		{"GET", "/account/balances", "", 503, CodeUnknownFailure},
		{"GET", "/channels", "", 503, CodeUnknownFailure},
		{"GET", "/tickets", "", 503, CodeUnknownFailure},
		{"GET", "/tickets/statistics", "", 503, CodeUnknownFailure},
		{"GET", "/node/graph", "", 503, CodeUnknownFailure},
		{"GET", "/node/metrics", "", 503, CodeUnknownFailure},
	} {
		status, _, body := doBody(t, tc.method, srv.URL+Prefix+tc.path, auth, tc.body)
		if status != tc.status {
			t.Errorf("%s %s: got %d %s, want %d", tc.method, tc.path, status, body, tc.status)
			continue
		}
		var e ErrorBody
		switch {
		case status >= 400 && (json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.want || e.Error == ""):
			t.Errorf("%s %s: %s, want code %s", tc.method, tc.path, body, tc.want)
		case status < 400 && tc.want != "" && body != tc.want+"\n":
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, body, tc.want)
		}
	}
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth)
	var info Info
	if status != 200 || json.Unmarshal([]byte(body), &info) != nil || info.ChainID != 0 || info.TokenContract != "" || info.IndexedBlock != 0 ||
		info.ListeningAddresses == nil || len(info.ListeningAddresses) != 1 || info.ConnectivityStatus != "Red" {
		t.Errorf("info: %d %s", status, body)
	}
	resp, body2 := send(t, http.MethodGet, srv.URL+ReadyPath, nil, "")
	if resp.StatusCode != 200 || string(body2) != `{"ready":true,"notReady":[],"checks":[]}`+"\n" {
		t.Errorf("readyz: %d %s", resp.StatusCode, body2)
	}
}

// TestInfo: GET /node/info is the chain's description, the indexer's progress, the graph's
// counts and this node's own announcement, the transport's addresses and the network's name.
func TestInfo(t *testing.T) {
	f := newSpecFixture(t)
	srv := serveConfig(t, f.self.config(false))
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth)
	var got Info
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	want := Info{Network: "test", ListeningAddresses: []string{"/ip4/127.0.0.1/tcp/9091"}, AnnouncedAddresses: []string{"/ip4/203.0.113.1/tcp/9091"},
		ChainID: 1337, ChannelsContract: "0x0000000000000000000000000000000000000001", TokenContract: "0x0000000000000000000000000000000000000002",
		TokenSymbol: "RELAY", ClosurePeriod: 60, IndexedBlock: 42, ChannelsIndexed: 4, PeersAnnounced: 4, Inbox: true, Sessions: true,
		Environment: "test", AnnouncedAddress: []string{"/ip4/203.0.113.1/tcp/9091"}, ListeningAddress: []string{"/ip4/127.0.0.1/tcp/9091"},
		RelayToken: "0x0000000000000000000000000000000000000002", RelayChannels: "0x0000000000000000000000000000000000000001",
		ChannelClosurePeriod: 1, ConnectivityStatus: "Yellow", IsEligible: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("info\n%+v, want\n%+v", got, want)
	}
}

// fakeLayers is a node's place in the layers as the test says.
type fakeLayers struct {
	st layers.Status
	ok bool
}

func (f fakeLayers) Status() (layers.Status, bool) { return f.st, f.ok }

// TestInfoTopology: /node/info's topology is absent on free routes, has a null epoch and layer
// before the first draw, and the node's layer (1 the first) once drawn; each answer is one the
// document allows.
func TestInfoTopology(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	shape := layers.Status{Layers: 3, Width: 4, EpochBlocks: 100}
	drawn := shape
	drawn.Drawn, drawn.Epoch, drawn.NextEpochBlock, drawn.Relayers, drawn.Layer, drawn.Grace = true, 7, 800, 12, 2, true
	outside := drawn
	outside.Layer = 0
	for name, tc := range map[string]struct {
		layers Layers
		want   string // the topology's JSON; "" for none
	}{
		"no layers":    {nil, ""},
		"free routes":  {fakeLayers{}, ""},
		"not drawn":    {fakeLayers{shape, true}, `{"layers":3,"width":4,"epochBlocks":100,"epoch":null,"nextEpochBlock":null,"relayers":0,"layer":null,"grace":false}`},
		"relayer":      {fakeLayers{drawn, true}, `{"layers":3,"width":4,"epochBlocks":100,"epoch":7,"nextEpochBlock":800,"relayers":12,"layer":2,"grace":true}`},
		"outside them": {fakeLayers{outside, true}, `{"layers":3,"width":4,"epochBlocks":100,"epoch":7,"nextEpochBlock":800,"relayers":12,"layer":null,"grace":true}`},
	} {
		cfg := f.self.config(false)
		cfg.Layers = tc.layers
		srv := serveConfig(t, cfg)
		status, header, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth)
		var got struct {
			Topology json.RawMessage `json:"topology"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s: %d %s", name, status, body)
		}
		if string(got.Topology) != tc.want {
			t.Errorf("%s: topology %s, want %s", name, got.Topology, tc.want)
		}
		sp.checkResponse(t, http.MethodGet, "/node/info", status, header, []byte(body))
	}
}
