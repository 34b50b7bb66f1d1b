package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/router"
)

// recordingConfig serves n with its peer directory, transport, messenger and chain failing t
// when an operation reaches them to change something: every request the tests send is invalid.
func recordingConfig(t *testing.T, n *fakeNode) Config {
	cfg := n.config(false)
	cfg.Peers = recordingPeers{cfg.Peers, t}
	cfg.Transport = recordingTransport{cfg.Transport, t}
	cfg.Messenger = recordingMessenger{t}
	cfg.Chain = recordingChain{cfg.Chain, t}
	return cfg
}

type recordingPeers struct {
	Peers
	t *testing.T
}

func (p recordingPeers) SetAlias(a string, id peer.ID) error {
	p.t.Errorf("invalid request reached the node: SetAlias(%q, %s)", a, id)
	return nil
}

type recordingTransport struct {
	Transport
	t *testing.T
}

func (tr recordingTransport) Ping(context.Context, peer.ID) (time.Duration, error) {
	tr.t.Error("invalid request reached the node: Ping")
	return 0, nil
}

type recordingMessenger struct{ t *testing.T }

func (m recordingMessenger) Send(context.Context, peer.ID, string) (router.Sent, error) {
	m.t.Error("invalid request reached the node: Send")
	return router.Sent{}, nil
}

type recordingChain struct {
	Chain
	t *testing.T
}

func (c recordingChain) Withdraw(context.Context, bool, *big.Int, common.Address) (common.Hash, error) {
	c.t.Error("invalid request reached the node: Withdraw")
	return common.Hash{}, nil
}

func (c recordingChain) OpenChannel(context.Context, common.Address, *big.Int) ([32]byte, common.Hash, error) {
	c.t.Error("invalid request reached the node: OpenChannel")
	return [32]byte{}, common.Hash{}, nil
}

func (c recordingChain) CloseChannel(context.Context, common.Address, bool) (common.Hash, channels.Status, error) {
	c.t.Error("invalid request reached the node: CloseChannel")
	return common.Hash{}, 0, nil
}

// TestValidation: input the document does not allow is refused with 400,
// the code of the offending field and a message naming it, before the
// handler runs.
func TestValidation(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	srv := serveConfig(t, recordingConfig(t, f.self))
	bob := f.other.PeerID().String()
	jsonHeader := http.Header{"X-Auth-Token": {testToken}, "Content-Type": {"application/json"}}
	tests := []struct {
		name, path, body string
		header           http.Header // default: token and JSON
		code, msg        string
	}{
		{"truncated JSON", "/node/ping", `{"peerId":`, nil, CodeInvalidInput, "invalid JSON body"},
		{"malformed JSON", "/node/ping", `{"peerId" 1}`, nil, CodeInvalidInput, "malformed JSON at byte 11"},
		{"empty body", "/node/ping", ``, nil, CodeInvalidInput, "request body is empty"},
		{"whitespace body", "/node/ping", " \n", nil, CodeInvalidInput, "request body is empty"},
		{"trailing data", "/node/ping", `{"peerId":"` + bob + `"} {}`, nil, CodeInvalidInput, "after the JSON object"},
		{"stray closing brace", "/node/ping", `{"peerId":"` + bob + `"}}`, nil, CodeInvalidInput, "after the JSON object"},
		{"stray closing bracket", "/aliases", `{"peerId":"` + bob + `","alias":"x"}]`, nil, CodeInvalidInput, "after the JSON object"},
		{"oversized", "/node/ping", `{"peerId":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, nil, CodeInvalidInput, "larger than 65536 bytes"},
		{"array body", "/node/ping", `[]`, nil, CodeInvalidInput, "request body must be a JSON object, not a JSON array"},
		{"null body", "/node/ping", `null`, nil, CodeInvalidInput, "request body must be a JSON object, not null"},
		{"string body", "/node/ping", `"hi"`, nil, CodeInvalidInput, "request body must be a JSON object, not a JSON string"},
		{"missing peerId", "/node/ping", `{}`, nil, CodeInvalidPeerID, "peerId is required"},
		{"peerId wrong type", "/node/ping", `{"peerId":42}`, nil, CodeInvalidPeerID, `field "peerId" must be a string, not a JSON number`},
		{"peerId null", "/node/ping", `{"peerId":null}`, nil, CodeInvalidPeerID, `field "peerId" must be a string, not null`},
		{"peerId pattern", "/node/ping", `{"peerId":"16Uiu2HAmNOPE"}`, nil, CodeInvalidPeerID, `peerId "16Uiu2HAmNOPE" is not a valid secp256k1 PeerId`},
		{"peerId is an address", "/node/ping", `{"peerId":"0x035C68d5251AfF759Ea945A05783F2290EA0Accf"}`, nil, CodeInvalidPeerID, "is not a valid secp256k1 PeerId"},
		{"unknown field", "/node/ping", `{"peerId":"` + bob + `","extra":1}`, nil, CodeInvalidInput, `request body has an unknown field "extra"`},
		{"unknown field wins over a bad one", "/node/ping", `{"peerId":"x","extra":1}`, nil, CodeInvalidInput, `unknown field "extra"`},
		{"misspelt field", "/node/ping", `{"peerid":"` + bob + `"}`, nil, CodeInvalidInput, `unknown field "peerid"`},
		{"unknown fields", "/node/ping", `{"b":1,"a":2}`, nil, CodeInvalidInput, `unknown fields "a", "b"`},
		{"text content type", "/node/ping", `{"peerId":"` + bob + `"}`, http.Header{"X-Auth-Token": {testToken}, "Content-Type": {"text/plain"}}, CodeInvalidInput, "Content-Type must be application/json"},
		{"form content type", "/node/ping", `peerId=x`, http.Header{"X-Auth-Token": {testToken}, "Content-Type": {"application/x-www-form-urlencoded"}}, CodeInvalidInput, "Content-Type must be application/json"},
		{"bad content type", "/node/ping", `{}`, http.Header{"X-Auth-Token": {testToken}, "Content-Type": {";;"}}, CodeInvalidInput, "Content-Type must be application/json"},

		{"alias missing", "/aliases", `{"peerId":"` + bob + `"}`, nil, CodeInvalidInput, "alias is required"},
		{"alias and peerId missing", "/aliases", `{}`, nil, "", "is required"},
		{"alias wrong type", "/aliases", `{"peerId":"` + bob + `","alias":7}`, nil, CodeInvalidInput, `field "alias" must be a string, not a JSON number`},
		{"alias with space", "/aliases", `{"peerId":"` + bob + `","alias":"a b"}`, nil, CodeInvalidInput, "alias must be 1 to 64 printable characters without spaces"},
		{"alias empty", "/aliases", `{"peerId":"` + bob + `","alias":""}`, nil, CodeInvalidInput, "alias must be 1 to 64"},
		{"alias too long", "/aliases", `{"peerId":"` + bob + `","alias":"` + strings.Repeat("a", 65) + `"}`, nil, CodeInvalidInput, "must be 1 to 64"},
		{"alias peer invalid", "/aliases", `{"peerId":"nope","alias":"x"}`, nil, CodeInvalidPeerID, `peerId "nope" is not a valid secp256k1 PeerId`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = jsonHeader
			}
			resp, body := send(t, http.MethodPost, srv.URL+Prefix+tc.path, h, tc.body)
			var e ErrorBody
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil {
				t.Fatalf("got %d %s, want 400", resp.StatusCode, body)
			}
			if (tc.code != "" && e.Status != tc.code) || !strings.Contains(e.Error, tc.msg) {
				t.Fatalf("got %s, want %s containing %q", body, tc.code, tc.msg)
			}
			sp.checkResponse(t, http.MethodPost, tc.path, resp.StatusCode, resp.Header, body)
		})
	}
}

// TestValidatorRunsBeforeHandler tells the validator's answer from the
// handler's: the handler would call a mistyped peerId INVALID_INPUT.
func TestValidatorRunsBeforeHandler(t *testing.T) {
	srv := serveConfig(t, recordingConfig(t, newFakeNode(t)))
	resp, body := send(t, http.MethodPost, srv.URL+Prefix+"/node/ping", http.Header{"X-Auth-Token": {testToken}}, `{"peerId":42}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"status":"INVALID_PEERID"`) {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
}

// TestValidationAgreesWithHandler: where both check the same thing, the
// validator and the handler say the same.
func TestValidationAgreesWithHandler(t *testing.T) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var handled bool
	h := v.wrap(func(http.ResponseWriter, *http.Request) { handled = true })
	for _, body := range []string{`{"peerId":`, ``, `{"peerId":"a"} {}`, `{"peerId":"` + strings.Repeat("a", MaxBodyBytes) + `"}`} {
		handled = false
		req := httptest.NewRequest(http.MethodPost, Prefix+"/node/ping", strings.NewReader(body))
		want := httptest.NewRecorder()
		req.Body = http.MaxBytesReader(want, req.Body, MaxBodyBytes)
		decodeBody(want, req, &PingRequest{})

		req = httptest.NewRequest(http.MethodPost, Prefix+"/node/ping", strings.NewReader(body))
		got := httptest.NewRecorder()
		req.Body = http.MaxBytesReader(got, req.Body, MaxBodyBytes)
		h(got, req)
		if handled || got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Errorf("body %.20q: validator %d %s, handler %d %s", body, got.Code, got.Body, want.Code, want.Body)
		}
	}
}

// FuzzValidation: no request body makes an operation fail with anything
// but a documented answer, nor panic.
func FuzzValidation(f *testing.F) {
	for _, s := range []string{`{"peerId":"x"}`, `{`, `[]`, `{"peerId":1}`, `null`, `{"peerId":"a"}{}`,
		`{"peerId":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","alias":"b"}`, `{"alias":{"x":[1,2]}}`, `"\u0000"`,
		`{"peerId":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","amount":"1"}`, `{"amount":"0x10","currency":"relay","recipient":"0x035C68d5251AfF759Ea945A05783F2290EA0Accf"}`,
		`{"body":"hi","recipient":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz"}`, `{"peerId":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","direction":"incoming"}`,
		`{"message":"hello"}`, `{"body":"hi","recipient":"me"}`, `{"body":"hi","recipient":"bob","path":[]}`,
		`{"body":"hi","recipient":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","replies":2,"reliable":true}`,
		`{"body":"hi","recipient":"me","replies":2.5}`, `{"body":"thanks"}`,
		`{"destination":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","protocol":"tcp","target":"example.org:443"}`,
		`{"destination":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz","protocol":"udp","service":"dns","listen":"[::1]:0"}`} {
		f.Add(s)
	}
	n := newFakeNode(f)
	s, err := New(n.config(false))
	if err != nil {
		f.Fatal(err)
	}
	// The answers each operation may give to a request body; 400 is
	// always allowed.
	ops := []struct {
		method, path string
		ok           []int
	}{
		{http.MethodPost, "/aliases", []int{http.StatusCreated}},
		{http.MethodPost, "/node/ping", []int{http.StatusOK}},
		{http.MethodPost, "/account/withdraw", []int{http.StatusOK, http.StatusUnprocessableEntity}},
		{http.MethodPost, "/messages", []int{http.StatusAccepted, http.StatusRequestEntityTooLarge}},
		{http.MethodPost, "/messages/inbox/1/reply", []int{http.StatusAccepted, http.StatusConflict, http.StatusRequestEntityTooLarge}},
		{http.MethodPost, "/channels", []int{http.StatusCreated, http.StatusConflict, http.StatusUnprocessableEntity}},
		{http.MethodDelete, "/channels", []int{http.StatusOK, http.StatusNotFound}},
		{http.MethodPost, "/messages/sign", []int{http.StatusOK}},
		{http.MethodPost, "/sessions", []int{http.StatusCreated, http.StatusConflict, http.StatusTooManyRequests}},
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, op := range ops {
			path := op.path
			req := httptest.NewRequest(op.method, Prefix+path, strings.NewReader(body))
			req.Host = "127.0.0.1:3001" // httptest's example.com is no name of the node
			req.Header.Set("x-auth-token", testToken)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusBadRequest && !slices.Contains(op.ok, rec.Code) {
				t.Fatalf("%s %s %q: %d %s", op.method, path, body, rec.Code, rec.Body)
			}
			if rec.Code == http.StatusBadRequest {
				var e ErrorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status == "" || e.Error == "" {
					t.Fatalf("%s %s %q: 400 without the envelope: %s", op.method, path, body, rec.Body)
				}
			}
		}
	})
}

// TestValidationChainOps: the validator refuses bad input of the account,
// message and channel operations with the code and the message the
// handler's own checks give, before the node is reached.
func TestValidationChainOps(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	srv := serveConfig(t, recordingConfig(t, f.self))
	bob := f.other.PeerID().String()
	wallet := "0x035C68d5251AfF759Ea945A05783F2290EA0Accf"
	tests := []struct {
		name, method, path, body string
		code, msg                string
	}{
		{"withdraw zero", "POST", "/account/withdraw", `{"amount":"0","currency":"RELAY","recipient":"` + wallet + `"}`,
			CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string"},
		{"withdraw negative", "POST", "/account/withdraw", `{"amount":"-5","currency":"RELAY","recipient":"` + wallet + `"}`,
			CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string"},
		{"withdraw 79 digits", "POST", "/account/withdraw", `{"amount":"` + strings.Repeat("9", 79) + `","currency":"RELAY","recipient":"` + wallet + `"}`,
			CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string"},
		{"withdraw without currency", "POST", "/account/withdraw", `{"amount":"1","recipient":"` + wallet + `"}`,
			CodeInvalidCurrency, "currency is required"},
		{"withdraw currency number", "POST", "/account/withdraw", `{"amount":"1","currency":1,"recipient":"` + wallet + `"}`,
			CodeInvalidCurrency, `field "currency" must be a string, not a JSON number`},
		{"withdraw without recipient", "POST", "/account/withdraw", `{"amount":"1","currency":"NATIVE"}`,
			CodeInvalidAddress, "recipient is required"},
		{"withdraw bad recipient", "POST", "/account/withdraw", `{"amount":"1","currency":"NATIVE","recipient":"0x12"}`,
			CodeInvalidAddress, `recipient "0x12" is not a valid chain address`},
		{"message empty", "POST", "/messages", `{"body":"","recipient":"` + bob + `"}`,
			CodeInvalidInput, "body must be a non-empty message text"},
		{"message without recipient", "POST", "/messages", `{"body":"hi"}`,
			CodeInvalidPeerID, "recipient is required"},
		{"message with hops", "POST", "/messages", `{"body":"hi","recipient":"` + bob + `","hops":2}`,
			CodeInvalidInput, `request body has an unknown field "hops"`},
		{"open channel, zero", "POST", "/channels", `{"peerId":"` + bob + `","amount":"000"}`,
			CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string"},
		{"open channel, bad peer", "POST", "/channels", `{"peerId":"nope","amount":"1"}`,
			CodeInvalidPeerID, `peerId "nope" is not a valid secp256k1 PeerId`},
		{"close by body, bad direction", "DELETE", "/channels", `{"peerId":"` + bob + `","direction":"out"}`,
			CodeInvalidInput, `direction must be "incoming" or "outgoing"`},
		{"close by body, no direction", "DELETE", "/channels", `{"peerId":"` + bob + `"}`,
			CodeInvalidInput, "direction is required"},
		{"close by body, empty", "DELETE", "/channels", ``,
			CodeInvalidInput, "request body is empty"},
		{"close, bad direction", "DELETE", "/channels/" + bob + "/out", ``,
			CodeInvalidInput, `direction must be "incoming" or "outgoing"`},
		{"channels, bad flag", "GET", "/channels?includingClosed=yes", ``,
			CodeInvalidInput, "includingClosed must be true or false"},
		{"close, bad peer", "DELETE", "/channels/nope/outgoing", ``,
			CodeInvalidPeerID, `peerId "nope" is not a valid secp256k1 PeerId`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, tc.method, srv.URL+Prefix+tc.path, http.Header{"X-Auth-Token": {testToken}}, tc.body)
			var e ErrorBody
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil {
				t.Fatalf("got %d %s, want 400", resp.StatusCode, body)
			}
			if e.Status != tc.code || !strings.Contains(e.Error, tc.msg) {
				t.Fatalf("got %s, want %s containing %q", body, tc.code, tc.msg)
			}
			sp.checkResponse(t, tc.method, tc.path, resp.StatusCode, resp.Header, body)
		})
	}
}
