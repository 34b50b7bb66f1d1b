package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/api/openapi"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/store"
)

// spec is the OpenAPI document as the tests use it: the model and a router
// from requests to its operations.
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &spec{doc: doc, router: router}
}

// operations lists the documented operations as "METHOD /path", sorted.
func (sp *spec) operations() []string {
	var ops []string
	for path, item := range sp.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	sort.Strings(ops)
	return ops
}

// route finds the documented operation of a request to Prefix+path.
func (sp *spec) route(t *testing.T, method, path string) (*http.Request, *routers.Route, map[string]string) {
	t.Helper()
	req := httptest.NewRequest(method, Prefix+path, nil)
	route, params, err := sp.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not a documented operation: %v", method, path, err)
	}
	return req, route, params
}

// checkResponse fails t unless status, header and body are a response the
// document declares for the operation at method and Prefix+path: the status
// must be listed, the Content-Type and body must match its schema, and a
// response documented without content must have an empty body.
func (sp *spec) checkResponse(t *testing.T, method, path string, status int, header http.Header, body []byte) {
	t.Helper()
	req, route, params := sp.route(t, method, path)
	err := openapi3filter.ValidateResponse(t.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		t.Errorf("%s %s answered %d %q, which the document does not allow:\n%v", method, path, status, body, err)
		return
	}
	if resp := route.Operation.Responses.Status(status); resp != nil && len(resp.Value.Content) == 0 && len(body) != 0 {
		t.Errorf("%s %s answered %d with body %q; the document says it has none", method, path, status, body)
	}
}

// TestSpecMatchesRoutes: every served route is documented and every
// documented operation is served.
func TestSpecMatchesRoutes(t *testing.T) {
	sp := loadSpec(t)
	s, err := New(newFakeNode(t).config(false))
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, rt := range s.Routes() {
		served = append(served, rt.Method+" "+rt.Pattern)
	}
	documented := sp.operations()
	var undocumented, unserved []string
	for _, op := range served {
		if !slices.Contains(documented, op) {
			undocumented = append(undocumented, op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			unserved = append(unserved, op)
		}
	}
	if len(undocumented) > 0 {
		t.Errorf("served but missing from internal/api/openapi/openapi.yaml:\n  %s", strings.Join(undocumented, "\n  "))
	}
	if len(unserved) > 0 {
		t.Errorf("documented in openapi.yaml but not served:\n  %s", strings.Join(unserved, "\n  "))
	}
}

// specFixture is what the rows of specCases refer to.
type specFixture struct {
	self  *fakeNode          // the node under test
	other *identity.Identity // a peer that answers pings; aliased "bob"
	far   *identity.Identity // a peer that never answers
	// stranger is a peer the node knows no address of.
	stranger *identity.Identity
	// closing is a peer whose outgoing channel is PendingToClose; messages
	// to it find only depleted channels.
	closing *identity.Identity
}

// errStoreClosed is the failure of the node's stores, for the 500 answers; its text must stay
// in the log.
var errStoreClosed = errors.New("store is closed: /var/lib/relayd/db")

// specCase is one exercised response of a documented operation.
type specCase struct {
	name   string
	method string
	path   string // relative to Prefix, parameters filled in
	body   string // request body; sent as application/json when set
	status int    // the expected status
	code   string // the expected error envelope code, for failures
	// failing serves the request from a node whose stores (aliases, settings) fail.
	failing bool
	// fault, when set, is the error of every chain-side call of the node
	// (messenger, chain, tickets) and of its signing key.
	fault error
	// noChain serves the request from a node started without a chain (nor
	// messenger, courier, streams or metrics).
	noChain bool
	// noMail serves the request from a node with a chain but without the courier.
	noMail bool
	// noSessions serves the request from a node without the session gateway.
	noSessions bool
	// setup, when set, changes the fixture's node after its reset.
	setup func(f *specFixture)
	// header is sent with the token.
	header http.Header
}

// Failures of the node's chain side, as the ledger reports them.
var (
	errChainFault   = errors.New("indexer: database is closed")
	errChainTimeout = fmt.Errorf("wait for receipt of 0x01: %w", context.DeadlineExceeded)
	errProviderDown = fmt.Errorf("%w: dial tcp 10.1.2.3:8545: connection refused", ledger.ErrChainUnavailable)
	errReverted     = fmt.Errorf("%w: WrongChannelState()", ledger.ErrContractRefused)
	errNoGas        = fmt.Errorf("%w: insufficient funds for gas * price + value", ledger.ErrNotEnoughBalance)
)

// specCases is the table of TestSpecResponses. Add one row per documented
// status of every new operation (403 is covered for all operations by
// TestEveryOperationNeedsToken); the test fails naming any documented
// status without a row.
func specCases(f *specFixture) []specCase {
	peerBody := func(id string) string { return `{"peerId":"` + id + `"}` }
	bob := f.other.PeerID().String()
	self := f.self.PeerID().String()
	far := f.far.PeerID().String()
	closing := f.closing.PeerID().String()
	withdraw := func(amount, currency, recipient string) string {
		return `{"amount":"` + amount + `","currency":"` + currency + `","recipient":"` + recipient + `"}`
	}
	wallet := "0x035C68d5251AfF759Ea945A05783F2290EA0Accf"
	message := func(body, recipient string) string { return `{"body":"` + body + `","recipient":"` + recipient + `"}` }
	open := func(id, amount string) string { return `{"peerId":"` + id + `","amount":"` + amount + `"}` }
	channel := func(id, dir string) string { return `{"peerId":"` + id + `","direction":"` + dir + `"}` }
	session := func(dest, protocol, rest string) string {
		return `{"destination":"` + dest + `","protocol":"` + protocol + `",` + rest + `}`
	}
	return []specCase{
		{name: "address", method: "GET", path: "/account/address", status: 200},
		{name: "addresses", method: "GET", path: "/account/addresses", status: 200},

		{name: "balances", method: "GET", path: "/account/balances", status: 200},
		{name: "balances, chain fails", method: "GET", path: "/account/balances", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "balances, no chain", method: "GET", path: "/account/balances", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "balances, provider down", method: "GET", path: "/account/balances", status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "balances, timeout", method: "GET", path: "/account/balances", status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "withdraw token", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 200},
		{name: "withdraw native, lower case", method: "POST", path: "/account/withdraw", body: withdraw("1000", "native", wallet), status: 200},
		{name: "withdraw token, lower case", method: "POST", path: "/account/withdraw", body: withdraw("1000", "relay", wallet), status: 200},
		{name: "withdraw zero", method: "POST", path: "/account/withdraw", body: withdraw("0", "RELAY", wallet), status: 400, code: CodeInvalidAmount},
		{name: "withdraw fraction", method: "POST", path: "/account/withdraw", body: withdraw("1.5", "RELAY", wallet), status: 400, code: CodeInvalidAmount},
		{name: "withdraw number amount", method: "POST", path: "/account/withdraw", body: `{"amount":1,"currency":"RELAY","recipient":"` + wallet + `"}`, status: 400, code: CodeInvalidAmount},
		{name: "withdraw unknown currency", method: "POST", path: "/account/withdraw", body: withdraw("1000", "ETH", wallet), status: 400, code: CodeInvalidCurrency},
		{name: "withdraw without currency", method: "POST", path: "/account/withdraw", body: `{"amount":"1","recipient":"` + wallet + `"}`, status: 400, code: CodeInvalidCurrency},
		{name: "withdraw to bad address", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", "0x12"), status: 400, code: CodeInvalidAddress},
		{name: "withdraw to a PeerId", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", bob), status: 400, code: CodeInvalidAddress},
		{name: "withdraw to a lower-case address", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", strings.ToLower(wallet)), status: 200},
		{name: "withdraw to an upper-case address", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", "0x"+strings.ToUpper(wallet[2:])), status: 200},
		{name: "withdraw, wrong checksum", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", "0x035c68d5251AfF759Ea945A05783F2290EA0Accf"), status: 400, code: CodeInvalidAddress},
		{name: "withdraw over balance", method: "POST", path: "/account/withdraw", body: withdraw("600000000000000000", "RELAY", wallet), status: 422, code: CodeNotEnoughBalance},
		{name: "withdraw, contract refuses", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 422, code: CodeUnknownFailure, fault: errReverted},
		{name: "withdraw, chain fails", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "withdraw, no chain", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "withdraw, provider down", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "withdraw, timeout", method: "POST", path: "/account/withdraw", body: withdraw("1000", "RELAY", wallet), status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "send message", method: "POST", path: "/messages", body: message("hello", bob), status: 202},
		{name: "send 500 bytes", method: "POST", path: "/messages", body: message(strings.Repeat("a", 500), bob), status: 202},
		{name: "send to bad peer", method: "POST", path: "/messages", body: message("hello", "16Uiu2HAmNOPE"), status: 400, code: CodeInvalidPeerID},
		{name: "send to self", method: "POST", path: "/messages", body: message("hello", self), status: 400, code: CodeInvalidPeerID},
		{name: "send empty", method: "POST", path: "/messages", body: message("", bob), status: 400, code: CodeInvalidInput},
		{name: "send with a path", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","path":["` + far + `"]}`, status: 400, code: CodeInvalidInput},
		{name: "send with hops", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","hops":1}`, status: 400, code: CodeInvalidInput},
		{name: "send to an alias", method: "POST", path: "/messages", body: message("hello", "bob"), status: 202},
		{name: "send to me", method: "POST", path: "/messages", body: message("hello", "me"), status: 400, code: CodeInvalidPeerID},
		{name: "send to an unknown alias", method: "POST", path: "/messages", body: message("hello", "nobody"), status: 400, code: CodeInvalidPeerID},
		{name: "send, alias store fails", method: "POST", path: "/messages", body: message("hello", "bob"), status: 500, code: CodeUnknownFailure, failing: true},

		{name: "message stream", method: "GET", path: "/messages/websocket", header: wsUpgrade(), status: 101},
		{name: "message stream since", method: "GET", path: "/messages/websocket?since=0", header: wsUpgrade(), status: 101},
		{name: "message stream, not an upgrade", method: "GET", path: "/messages/websocket", status: 400, code: CodeInvalidInput},
		{name: "message stream, bad since", method: "GET", path: "/messages/websocket?since=-1", header: wsUpgrade(), status: 400, code: CodeInvalidInput},
		{name: "message stream, since twice", method: "GET", path: "/messages/websocket?since=1&since=2", header: wsUpgrade(), status: 400, code: CodeInvalidInput},
		{name: "message stream, none", method: "GET", path: "/messages/websocket", header: wsUpgrade(), status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "admin stream", method: "GET", path: "/node/stream/websocket", header: wsUpgrade(), status: 101},
		{name: "admin stream, not an upgrade", method: "GET", path: "/node/stream/websocket", status: 400, code: CodeInvalidInput},
		{name: "admin stream, none", method: "GET", path: "/node/stream/websocket", header: wsUpgrade(), status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "sign", method: "POST", path: "/messages/sign", body: `{"message":"hello"}`, status: 200},
		{name: "sign empty", method: "POST", path: "/messages/sign", body: `{"message":""}`, status: 200},
		{name: "sign without message", method: "POST", path: "/messages/sign", body: `{}`, status: 400, code: CodeInvalidInput},
		{name: "sign fails", method: "POST", path: "/messages/sign", body: `{"message":"hello"}`, status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "sign, old path", method: "POST", path: "/message/sign", body: `{"message":"hello"}`, status: 200},
		{name: "sign, old path, bad body", method: "POST", path: "/message/sign", body: `{"message":1}`, status: 400, code: CodeInvalidInput},
		{name: "sign, old path, fails", method: "POST", path: "/message/sign", body: `{"message":"hello"}`, status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "send 501 bytes", method: "POST", path: "/messages", body: message(strings.Repeat("é", 250)+"a", bob), status: 202},
		{name: "send 501 bytes, no courier", method: "POST", path: "/messages", body: message(strings.Repeat("é", 250)+"a", bob), status: 400, code: CodeMessageTooLarge, noMail: true},
		{name: "send 64 KiB", method: "POST", path: "/messages", body: message(strings.Repeat("a", 64<<10), bob), status: 202},
		{name: "send 64 KiB of escapes", method: "POST", path: "/messages", body: message(strings.Repeat(`\u0001`, 64<<10), bob), status: 202},
		{name: "send over maxMessageBytes", method: "POST", path: "/messages", body: message(strings.Repeat("a", 64<<10+1), bob), status: 413, code: CodePayloadTooLarge},
		{name: "send a request over the limit", method: "POST", path: "/messages", body: message(strings.Repeat(`\u0001`, 64<<10+700), bob), status: 413, code: CodePayloadTooLarge},
		{name: "send with replies", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":16}`, status: 202},
		{name: "send with replies 2.0", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":2.0}`, status: 202},
		{name: "send with replies 0", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":0,"reliable":false}`, status: 202},
		{name: "send reliable", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","reliable":true}`, status: 202},
		{name: "send reliable to an alias", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"bob","reliable":true}`, status: 202},
		{name: "send reliable to me", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"me","reliable":true}`, status: 400, code: CodeInvalidPeerID},
		{name: "send with replies 17", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":17}`, status: 400, code: CodeInvalidInput},
		{name: "send with replies -1", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":-1}`, status: 400, code: CodeInvalidInput},
		{name: "send with replies 1.5", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":1.5}`, status: 400, code: CodeInvalidInput},
		{name: "send with replies a string", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":"2"}`, status: 400, code: CodeInvalidInput},
		{name: "send reliable a string", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","reliable":"yes"}`, status: 400, code: CodeInvalidInput},
		{name: "send malformed JSON", method: "POST", path: "/messages", body: `{"body":"hi","recipient":`, status: 400, code: CodeInvalidInput},
		{name: "send with replies, no courier", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","replies":1}`, status: 503, code: CodeUnknownFailure, noMail: true},
		{name: "send reliable, no courier", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","reliable":true}`, status: 503, code: CodeUnknownFailure, noMail: true},
		{name: "send reliable, store full", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","reliable":true}`, status: 507, code: CodeStoreFull,
			fault: fmt.Errorf("%w: %w", courier.ErrFull, store.ErrOutboxFull)},
		{name: "send reliable, courier fails", method: "POST", path: "/messages", body: `{"body":"hi","recipient":"` + bob + `","reliable":true}`, status: 500, code: CodeUnknownFailure, fault: errChainFault},

		{name: "inbox", method: "GET", path: "/messages", status: 200},
		{name: "inbox since 1, limit 1", method: "GET", path: "/messages?since=1&limit=1", status: 200},
		{name: "inbox limit 1000", method: "GET", path: "/messages?limit=1000", status: 200},
		{name: "inbox, empty", method: "GET", path: "/messages?since=3", status: 200},
		{name: "inbox, limit 0", method: "GET", path: "/messages?limit=0", status: 400, code: CodeInvalidInput},
		{name: "inbox, limit 1001", method: "GET", path: "/messages?limit=1001", status: 400, code: CodeInvalidInput},
		{name: "inbox, since -1", method: "GET", path: "/messages?since=-1", status: 400, code: CodeInvalidInput},
		{name: "inbox, since a word", method: "GET", path: "/messages?since=last", status: 400, code: CodeInvalidInput},
		{name: "inbox, since twice", method: "GET", path: "/messages?since=1&since=2", status: 400, code: CodeInvalidInput},
		{name: "inbox, store fails", method: "GET", path: "/messages", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "inbox, no courier", method: "GET", path: "/messages", status: 503, code: CodeUnknownFailure, noMail: true},
		{name: "inbox, no chain", method: "GET", path: "/messages", status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "message state", method: "GET", path: "/messages/" + messageID(fakeDelivered), status: 200},
		{name: "message state, upper case", method: "GET", path: "/messages/0x" + strings.ToUpper(messageID(fakeDelivered)[2:]), status: 200},
		{name: "message state, unknown", method: "GET", path: "/messages/0x" + strings.Repeat("00", 16), status: 404, code: CodeMessageNotFound},
		{name: "message state, short id", method: "GET", path: "/messages/0x1234", status: 400, code: CodeInvalidInput},
		{name: "message state, no 0x", method: "GET", path: "/messages/" + strings.Repeat("ab", 16), status: 400, code: CodeInvalidInput},
		{name: "message state, not hex", method: "GET", path: "/messages/0x" + strings.Repeat("zz", 16), status: 400, code: CodeInvalidInput},
		{name: "message state, store fails", method: "GET", path: "/messages/" + messageID(fakeDelivered), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "message state, no courier", method: "GET", path: "/messages/" + messageID(fakeDelivered), status: 503, code: CodeUnknownFailure, noMail: true},

		{name: "pop", method: "POST", path: "/messages/pop", status: 200},
		{name: "pop, empty inbox", method: "POST", path: "/messages/pop", status: 204, setup: func(f *specFixture) { f.self.mail.inbox = nil }},
		{name: "pop, store fails", method: "POST", path: "/messages/pop", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "pop, no courier", method: "POST", path: "/messages/pop", status: 503, code: CodeUnknownFailure, noMail: true},

		{name: "delete message", method: "DELETE", path: "/messages/inbox/2", status: 204},
		{name: "delete unknown message", method: "DELETE", path: "/messages/inbox/7", status: 404, code: CodeMessageNotFound},
		{name: "delete message 0", method: "DELETE", path: "/messages/inbox/0", status: 400, code: CodeInvalidInput},
		{name: "delete message x", method: "DELETE", path: "/messages/inbox/x", status: 400, code: CodeInvalidInput},
		{name: "delete message, store fails", method: "DELETE", path: "/messages/inbox/2", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "delete message, no courier", method: "DELETE", path: "/messages/inbox/2", status: 503, code: CodeUnknownFailure, noMail: true},

		{name: "reply", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 202},
		{name: "reply on two blocks", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"` + strings.Repeat("a", 2*fakeReplyCapacity) + `"}`, status: 202},
		{name: "reply, too large for the blocks", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"` + strings.Repeat("a", 2*fakeReplyCapacity+1) + `"}`, status: 413, code: CodePayloadTooLarge},
		{name: "reply, a request over the limit", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"` + strings.Repeat(`\u0001`, 64<<10+700) + `"}`, status: 413, code: CodePayloadTooLarge},
		{name: "reply, no block", method: "POST", path: "/messages/inbox/3/reply", body: `{"body":"thanks"}`, status: 409, code: CodeNoReplyBlock},
		{name: "reply, unknown message", method: "POST", path: "/messages/inbox/7/reply", body: `{"body":"thanks"}`, status: 404, code: CodeMessageNotFound},
		{name: "reply, seq 0", method: "POST", path: "/messages/inbox/0/reply", body: `{"body":"thanks"}`, status: 400, code: CodeInvalidInput},
		{name: "reply, empty", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":""}`, status: 400, code: CodeInvalidInput},
		{name: "reply, a number", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":5}`, status: 400, code: CodeInvalidInput},
		{name: "reply, malformed JSON", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":`, status: 400, code: CodeInvalidInput},
		{name: "reply, unknown field", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"x","to":"me"}`, status: 400, code: CodeInvalidInput},
		{name: "reply, unreachable", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 422, code: CodePathNotFound,
			setup: func(f *specFixture) { f.self.mail.replyErr = fmt.Errorf("%w: dial 10.1.2.3", router.ErrUnreachable) }},
		{name: "reply, busy", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 503, code: CodeUnknownFailure,
			setup: func(f *specFixture) { f.self.mail.replyErr = router.ErrBusy }},
		{name: "reply, timeout", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 504, code: CodeTimeout, fault: errChainTimeout},
		{name: "reply, store fails", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "reply, no courier", method: "POST", path: "/messages/inbox/1/reply", body: `{"body":"thanks"}`, status: 503, code: CodeUnknownFailure, noMail: true},
		{name: "send, no path", method: "POST", path: "/messages", body: message("hello", far), status: 422, code: CodePathNotFound},
		{name: "send, depleted channel", method: "POST", path: "/messages", body: message("hello", closing), status: 422, code: CodeNotEnoughBalance},
		{name: "send, node fails", method: "POST", path: "/messages", body: message("hello", bob), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "send, no messenger", method: "POST", path: "/messages", body: message("hello", bob), status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "send, timeout", method: "POST", path: "/messages", body: message("hello", bob), status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "channels", method: "GET", path: "/channels", status: 200},
		{name: "channels including closed", method: "GET", path: "/channels?includingClosed=true", status: 200},
		{name: "channels not including closed", method: "GET", path: "/channels?includingClosed=false", status: 200},
		{name: "channels, bad flag", method: "GET", path: "/channels?includingClosed=yes", status: 400, code: CodeInvalidInput},
		{name: "channels, flag 1", method: "GET", path: "/channels?includingClosed=1", status: 400, code: CodeInvalidInput},
		{name: "channels, flag maybe", method: "GET", path: "/channels?includingClosed=maybe", status: 400, code: CodeInvalidInput},
		{name: "channels, undecodable query", method: "GET", path: "/channels?includingClosed=%zz", status: 400, code: CodeInvalidInput},
		{name: "channels, semicolon in query", method: "GET", path: "/channels?includingClosed=false;x=1", status: 400, code: CodeInvalidInput},
		{name: "channels, flag twice", method: "GET", path: "/channels?includingClosed=true&includingClosed=false", status: 400, code: CodeInvalidInput},
		{name: "channels, undecodable query, no chain", method: "GET", path: "/channels?includingClosed=%zz", status: 400, code: CodeInvalidInput, noChain: true},
		{name: "channels, no chain", method: "GET", path: "/channels", status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "open channel", method: "POST", path: "/channels", body: open(far, "100000000000000000"), status: 201},
		{name: "open channel, bad peer", method: "POST", path: "/channels", body: open("16Uiu2HAmNOPE", "1"), status: 400, code: CodeInvalidPeerID},
		{name: "open channel to self", method: "POST", path: "/channels", body: open(self, "1"), status: 400, code: CodeInvalidPeerID},
		{name: "open channel, zero", method: "POST", path: "/channels", body: open(far, "0"), status: 400, code: CodeInvalidAmount},
		{name: "open channel, no amount", method: "POST", path: "/channels", body: `{"peerId":"` + far + `"}`, status: 400, code: CodeInvalidAmount},
		{name: "open channel, already open", method: "POST", path: "/channels", body: open(bob, "1"), status: 409, code: CodeChannelOpen},
		{name: "open channel, closing", method: "POST", path: "/channels", body: open(closing, "1"), status: 409, code: CodeChannelOpen},
		{name: "open channel over balance", method: "POST", path: "/channels", body: open(far, "600000000000000000"), status: 422, code: CodeNotEnoughBalance},
		{name: "open channel, chain fails", method: "POST", path: "/channels", body: open(far, "1"), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "open channel, no chain", method: "POST", path: "/channels", body: open(far, "1"), status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "open channel, provider down", method: "POST", path: "/channels", body: open(far, "1"), status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "open channel, timeout", method: "POST", path: "/channels", body: open(far, "1"), status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "get outgoing channel", method: "GET", path: "/channels/" + bob + "/outgoing", status: 200},
		{name: "get closing channel", method: "GET", path: "/channels/" + closing + "/outgoing", status: 200},
		{name: "get incoming channel", method: "GET", path: "/channels/" + bob + "/incoming", status: 200},
		{name: "get channel, bad direction", method: "GET", path: "/channels/" + bob + "/sideways", status: 400, code: CodeInvalidInput},
		{name: "get channel, bad peer", method: "GET", path: "/channels/16Uiu2HAmNOPE/outgoing", status: 400, code: CodeInvalidPeerID},
		{name: "get channel with self", method: "GET", path: "/channels/" + self + "/incoming", status: 400, code: CodeInvalidPeerID},
		{name: "get missing channel", method: "GET", path: "/channels/" + far + "/outgoing", status: 404, code: CodeChannelNotFound},
		{name: "get channel, chain fails", method: "GET", path: "/channels/" + bob + "/outgoing", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "get channel, no chain", method: "GET", path: "/channels/" + bob + "/outgoing", status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "close: initiate", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 200},
		{name: "close: period not over", method: "DELETE", path: "/channels/" + closing + "/outgoing", status: 200},
		{name: "close incoming", method: "DELETE", path: "/channels/" + bob + "/incoming", status: 200},
		{name: "close, bad direction", method: "DELETE", path: "/channels/" + bob + "/both", status: 400, code: CodeInvalidInput},
		{name: "close, bad peer", method: "DELETE", path: "/channels/16Uiu2HAmNOPE/outgoing", status: 400, code: CodeInvalidPeerID},
		{name: "close with self", method: "DELETE", path: "/channels/" + self + "/outgoing", status: 400, code: CodeInvalidPeerID},
		{name: "close missing channel", method: "DELETE", path: "/channels/" + far + "/outgoing", status: 404, code: CodeChannelNotFound},
		{name: "close, no gas", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 422, code: CodeNotEnoughBalance, fault: errNoGas},
		{name: "close, chain fails", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "close, no chain", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "close, provider down", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "close, timeout", method: "DELETE", path: "/channels/" + bob + "/outgoing", status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "close by body: initiate", method: "DELETE", path: "/channels", body: channel(bob, "outgoing"), status: 200},
		{name: "close by body: period not over", method: "DELETE", path: "/channels", body: channel(closing, "outgoing"), status: 200},
		{name: "close by body: incoming", method: "DELETE", path: "/channels", body: channel(bob, "incoming"), status: 200},
		{name: "close by body, no body", method: "DELETE", path: "/channels", status: 400, code: CodeInvalidInput},
		{name: "close by body, no direction", method: "DELETE", path: "/channels", body: `{"peerId":"` + bob + `"}`, status: 400, code: CodeInvalidInput},
		{name: "close by body, bad direction", method: "DELETE", path: "/channels", body: channel(bob, "Outgoing"), status: 400, code: CodeInvalidInput},
		{name: "close by body, bad peer", method: "DELETE", path: "/channels", body: channel("nope", "outgoing"), status: 400, code: CodeInvalidPeerID},
		{name: "close by body, missing channel", method: "DELETE", path: "/channels", body: channel(far, "outgoing"), status: 404, code: CodeChannelNotFound},
		{name: "close by body, contract refuses", method: "DELETE", path: "/channels", body: channel(bob, "outgoing"), status: 422, code: CodeUnknownFailure, fault: errReverted},
		{name: "close by body, chain fails", method: "DELETE", path: "/channels", body: channel(bob, "outgoing"), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "close by body, no chain", method: "DELETE", path: "/channels", body: channel(bob, "outgoing"), status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "close by body, timeout", method: "DELETE", path: "/channels", body: channel(bob, "outgoing"), status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "channel tickets", method: "GET", path: "/channels/tickets", status: 200},
		{name: "channel tickets, store fails", method: "GET", path: "/channels/tickets", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "channel tickets, no chain", method: "GET", path: "/channels/tickets", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem channel tickets", method: "POST", path: "/channels/tickets/redeem", status: 204},
		{name: "redeem channel tickets, no gas", method: "POST", path: "/channels/tickets/redeem", status: 422, code: CodeNotEnoughBalance, fault: errNoGas},
		{name: "redeem channel tickets, chain fails", method: "POST", path: "/channels/tickets/redeem", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "redeem channel tickets, no chain", method: "POST", path: "/channels/tickets/redeem", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem channel tickets, provider down", method: "POST", path: "/channels/tickets/redeem", status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "redeem channel tickets, timeout", method: "POST", path: "/channels/tickets/redeem", status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "tickets", method: "GET", path: "/tickets", status: 200},
		{name: "tickets, store fails", method: "GET", path: "/tickets", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "tickets, no chain", method: "GET", path: "/tickets", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem tickets", method: "POST", path: "/tickets/redeem", status: 204},
		{name: "redeem tickets, no gas", method: "POST", path: "/tickets/redeem", status: 422, code: CodeNotEnoughBalance, fault: errNoGas},
		{name: "redeem tickets, chain fails", method: "POST", path: "/tickets/redeem", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "redeem tickets, no chain", method: "POST", path: "/tickets/redeem", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem tickets, provider down", method: "POST", path: "/tickets/redeem", status: 503, code: CodeUnknownFailure, fault: errProviderDown},
		{name: "redeem tickets, timeout", method: "POST", path: "/tickets/redeem", status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "tickets of a channel", method: "GET", path: "/channels/" + bob + "/tickets", status: 200},
		{name: "tickets of a channel, bad peer", method: "GET", path: "/channels/16Uiu2HAmNOPE/tickets", status: 400, code: CodeInvalidPeerID},
		{name: "tickets of a channel, none", method: "GET", path: "/channels/" + far + "/tickets", status: 404, code: CodeTicketsNotFound},
		{name: "tickets of a channel, store fails", method: "GET", path: "/channels/" + bob + "/tickets", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "tickets of a channel, no chain", method: "GET", path: "/channels/" + bob + "/tickets", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem a channel", method: "POST", path: "/channels/" + bob + "/tickets/redeem", status: 204},
		{name: "redeem a channel, bad peer", method: "POST", path: "/channels/16Uiu2HAmNOPE/tickets/redeem", status: 400, code: CodeInvalidPeerID},
		{name: "redeem a channel, none", method: "POST", path: "/channels/" + far + "/tickets/redeem", status: 404, code: CodeTicketsNotFound},
		{name: "redeem a channel, contract refuses", method: "POST", path: "/channels/" + bob + "/tickets/redeem", status: 422, code: CodeUnknownFailure, fault: errReverted},
		{name: "redeem a channel, chain fails", method: "POST", path: "/channels/" + bob + "/tickets/redeem", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "redeem a channel, no chain", method: "POST", path: "/channels/" + bob + "/tickets/redeem", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "redeem a channel, timeout", method: "POST", path: "/channels/" + bob + "/tickets/redeem", status: 504, code: CodeTimeout, fault: errChainTimeout},

		{name: "ticket statistics", method: "GET", path: "/tickets/statistics", status: 200},
		{name: "ticket statistics, store fails", method: "GET", path: "/tickets/statistics", status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "ticket statistics, no chain", method: "GET", path: "/tickets/statistics", status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "settings", method: "GET", path: "/settings", status: 200},
		{name: "update settings", method: "PUT", path: "/settings", body: `{"strategy":"promiscuous"}`, status: 200},
		{name: "update settings, unknown", method: "PUT", path: "/settings", body: `{"colour":"blue"}`, status: 400, code: CodeInvalidSetting},
		{name: "update settings, bad value", method: "PUT", path: "/settings", body: `{"strategy":"aggressive"}`, status: 400, code: CodeInvalidSettingValue},
		{name: "update settings, wrong type", method: "PUT", path: "/settings", body: `{"maxChannels":"many"}`, status: 400, code: CodeInvalidSettingValue},
		{name: "update settings, empty", method: "PUT", path: "/settings", body: `{}`, status: 400, code: CodeInvalidInput},
		{name: "update settings, store fails", method: "PUT", path: "/settings", body: `{"strategy":"passive"}`, status: 500, code: CodeUnknownFailure, failing: true},
		{name: "set setting", method: "PUT", path: "/settings/strategy", body: `{"settingValue":"promiscuous"}`, status: 204},
		{name: "set setting, unknown", method: "PUT", path: "/settings/colour", body: `{"settingValue":"blue"}`, status: 400, code: CodeInvalidSetting},
		{name: "set setting, bad value", method: "PUT", path: "/settings/strategy", body: `{"settingValue":true}`, status: 400, code: CodeInvalidSettingValue},
		{name: "set setting, store fails", method: "PUT", path: "/settings/strategy", body: `{"settingValue":"passive"}`, status: 500, code: CodeUnknownFailure, failing: true},

		{name: "list aliases", method: "GET", path: "/aliases", status: 200},
		{name: "list aliases, store fails", method: "GET", path: "/aliases", status: 500, code: CodeUnknownFailure, failing: true},
		{name: "set alias", method: "POST", path: "/aliases", body: `{"peerId":"` + bob + `","alias":"carol"}`, status: 201},
		{name: "set alias, bad peer", method: "POST", path: "/aliases", body: `{"peerId":"16Uiu2HAmNOPE","alias":"x"}`, status: 400, code: CodeInvalidPeerID},
		{name: "set alias, reserved", method: "POST", path: "/aliases", body: `{"peerId":"` + bob + `","alias":"me"}`, status: 400, code: CodeInvalidInput},
		{name: "set alias, a PeerId", method: "POST", path: "/aliases", body: `{"peerId":"` + bob + `","alias":"` + far + `"}`, status: 400, code: CodeInvalidInput},
		{name: "set alias, unknown field", method: "POST", path: "/aliases", body: `{"peerid":"` + bob + `","alias":"x"}`, status: 400, code: CodeInvalidInput},
		{name: "set alias, store fails", method: "POST", path: "/aliases", body: `{"peerId":"` + bob + `","alias":"x"}`, status: 500, code: CodeUnknownFailure, failing: true},
		{name: "get alias", method: "GET", path: "/aliases/bob", status: 200},
		{name: "get alias me", method: "GET", path: "/aliases/me", status: 200},
		{name: "get unknown alias", method: "GET", path: "/aliases/nobody", status: 404, code: CodePeerIDNotFound},
		{name: "get alias, store fails", method: "GET", path: "/aliases/bob", status: 500, code: CodeUnknownFailure, failing: true},
		{name: "delete alias", method: "DELETE", path: "/aliases/bob", status: 204},
		{name: "delete unknown alias", method: "DELETE", path: "/aliases/nobody", status: 404, code: CodePeerIDNotFound},
		{name: "delete me", method: "DELETE", path: "/aliases/me", status: 400, code: CodeInvalidInput},
		{name: "delete alias, store fails", method: "DELETE", path: "/aliases/bob", status: 500, code: CodeUnknownFailure, failing: true},

		{name: "version", method: "GET", path: "/node/version", status: 200},
		{name: "peers", method: "GET", path: "/node/peers", status: 200},
		{name: "peers of quality 0.5", method: "GET", path: "/node/peers?quality=0.5", status: 200},
		{name: "peers, quality above 1", method: "GET", path: "/node/peers?quality=2", status: 400, code: CodeInvalidInput},
		{name: "peers, negative quality", method: "GET", path: "/node/peers?quality=-0.1", status: 400, code: CodeInvalidInput},
		{name: "peers, quality not a number", method: "GET", path: "/node/peers?quality=good", status: 400, code: CodeInvalidInput},
		{name: "peers, quality twice", method: "GET", path: "/node/peers?quality=0.1&quality=0.2", status: 400, code: CodeInvalidInput},
		{name: "entry nodes", method: "GET", path: "/node/entryNodes", status: 200},
		{name: "graph", method: "GET", path: "/node/graph", status: 200},
		{name: "graph, no chain", method: "GET", path: "/node/graph", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "peer info", method: "GET", path: "/peerInfo/" + bob, status: 200},
		{name: "peer info, unknown peer", method: "GET", path: "/peerInfo/" + f.stranger.PeerID().String(), status: 200},
		{name: "peer info, bad peer", method: "GET", path: "/peerInfo/16Uiu2HAmNOPE", status: 400, code: CodeInvalidPeerID},
		{name: "ping", method: "POST", path: "/node/ping", body: peerBody(bob), status: 200},
		{name: "ping, bad peer", method: "POST", path: "/node/ping", body: peerBody("0x035C68d5251AfF759Ea945A05783F2290EA0Accf"), status: 400, code: CodeInvalidPeerID},
		{name: "ping self", method: "POST", path: "/node/ping", body: peerBody(f.self.PeerID().String()), status: 400, code: CodeInvalidPeerID},
		{name: "ping, no answer", method: "POST", path: "/node/ping", body: peerBody(f.far.PeerID().String()), status: 422, code: CodeTimeout},
		{name: "ping, unknown peer", method: "POST", path: "/node/ping", body: peerBody(f.stranger.PeerID().String()), status: 404, code: CodePeerIDNotFound},
		{name: "info", method: "GET", path: "/node/info", status: 200},
		{name: "info, no chain", method: "GET", path: "/node/info", status: 200, noChain: true},
		{name: "metrics", method: "GET", path: "/node/metrics", status: 200},
		{name: "metrics, none", method: "GET", path: "/node/metrics", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "backup", method: "GET", path: "/node/backup", status: 200},
		{name: "backup, failing", method: "GET", path: "/node/backup", status: 500, code: CodeUnknownFailure, fault: errStoreClosed},
		{name: "backup, no store", method: "GET", path: "/node/backup", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "backup, disk full", method: "GET", path: "/node/backup", status: 507, code: CodeStoreFull, fault: errBackupDiskFull},
		{name: "history", method: "GET", path: "/node/history", status: 200},
		{name: "history of a week", method: "GET", path: "/node/history?resolution=week", status: 200},
		{name: "history, bad resolution", method: "GET", path: "/node/history?resolution=month", status: 400, code: CodeInvalidInput},
		{name: "history, resolution twice", method: "GET", path: "/node/history?resolution=day&resolution=week", status: 400, code: CodeInvalidInput},
		{name: "history, none", method: "GET", path: "/node/history", status: 503, code: CodeUnknownFailure, noChain: true},
		{name: "alerts", method: "GET", path: "/node/alerts", status: 200},
		{name: "alerts, none", method: "GET", path: "/node/alerts", status: 503, code: CodeUnknownFailure, noChain: true},

		{name: "sessions", method: "GET", path: "/sessions", status: 200},
		{name: "sessions, none", method: "GET", path: "/sessions", status: 503, code: CodeUnknownFailure, noSessions: true},
		{name: "open session", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"example.org:443"`), status: 201},
		{name: "open session to an alias", method: "POST", path: "/sessions", body: session("bob", "udp", `"target":"[2001:db8::1]:53","listen":"127.0.0.1:5353"`), status: 201},
		{name: "open session to a service", method: "POST", path: "/sessions", body: session(bob, "tcp", `"service":"web"`), status: 201},
		{name: "open session, unknown alias", method: "POST", path: "/sessions", body: session("nobody", "tcp", `"target":"example.org:443"`), status: 400, code: CodeInvalidPeerID},
		{name: "open session to me", method: "POST", path: "/sessions", body: session("me", "tcp", `"target":"example.org:443"`), status: 400, code: CodeInvalidPeerID},
		{name: "open session, bad protocol", method: "POST", path: "/sessions", body: session(bob, "sctp", `"target":"example.org:443"`), status: 400, code: CodeInvalidInput},
		{name: "open session, no target", method: "POST", path: "/sessions", body: session(bob, "tcp", `"listen":"127.0.0.1:0"`), status: 400, code: CodeInvalidInput},
		{name: "open session, target and service", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"a:1","service":"web"`), status: 400, code: CodeInvalidInput},
		{name: "open session, port 0", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"example.org:0"`), status: 400, code: CodeInvalidInput},
		{name: "open session, gateway refuses", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"`+fakeBadTarget+`"`), status: 400, code: CodeInvalidInput},
		{name: "open session, with hops", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"a:1","hops":1`), status: 400, code: CodeInvalidInput},
		{name: "open session, address in use", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"a:1","listen":"`+fakeBusyListen+`"`), status: 409, code: CodeCannotListen},
		{name: "open session, too many", method: "POST", path: "/sessions", body: session(bob, "tcp", `"service":"`+fakeFullService+`"`), status: 429, code: CodeTooManySessions},
		{name: "open session, gateway fails", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"a:1"`), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "open session, alias store fails", method: "POST", path: "/sessions", body: session("bob", "tcp", `"target":"a:1"`), status: 500, code: CodeUnknownFailure, failing: true},
		{name: "open session, none", method: "POST", path: "/sessions", body: session(bob, "tcp", `"target":"a:1"`), status: 503, code: CodeUnknownFailure, noSessions: true},
		{name: "close session", method: "DELETE", path: "/sessions/" + fakeSessionID(0), status: 204},
		{name: "close session, upper case", method: "DELETE", path: "/sessions/" + strings.ToUpper(fakeSessionID(0)), status: 204},
		{name: "close unknown session", method: "DELETE", path: "/sessions/" + fakeSessionID(1), status: 404, code: CodeSessionNotFound},
		{name: "close session, bad id", method: "DELETE", path: "/sessions/5e0c", status: 400, code: CodeInvalidInput},
		{name: "close session, gateway fails", method: "DELETE", path: "/sessions/" + fakeSessionID(0), status: 500, code: CodeUnknownFailure, fault: errChainFault},
		{name: "close session, none", method: "DELETE", path: "/sessions/" + fakeSessionID(0), status: 503, code: CodeUnknownFailure, noSessions: true},
	}
}

func newSpecFixture(t *testing.T) *specFixture {
	t.Helper()
	f := &specFixture{self: newFakeNode(t)}
	var err error
	if f.other, err = identity.Generate(); err != nil {
		t.Fatal(err)
	}
	if f.far, err = identity.Generate(); err != nil {
		t.Fatal(err)
	}
	if f.closing, err = identity.Generate(); err != nil {
		t.Fatal(err)
	}
	if f.stranger, err = identity.Generate(); err != nil {
		t.Fatal(err)
	}
	// The chain: every node but the stranger announced itself; the node pays bob, bob pays
	// far, a wallet that never announced itself is closing its channel to the node, and far's
	// channel to closing is closed.
	g := f.self.graph
	for _, id := range []*identity.Identity{f.self.Identity, f.other, f.far, f.closing} {
		ann := channels.Announcement{Account: id.Address(), PublicKey: id.PublicKey()}
		if id == f.self.Identity {
			ann.Multiaddrs = []string{"/ip4/203.0.113.1/tcp/9091"}
		}
		g.Announce(ann)
	}
	g.Apply(graphChannel(f.self.Address(), f.other.Address(), 100, channels.Open))
	g.Apply(graphChannel(f.other.Address(), f.far.Address(), 25e17, channels.Open))
	g.Apply(graphChannel(fakeWallet, f.self.Address(), 0, channels.PendingToClose))
	g.Apply(graphChannel(f.far.Address(), f.closing.Address(), 0, channels.Closed))

	f.self.transport.setPeers(
		peers.Info{ID: f.other.PeerID(), Addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/9091")}, Quality: 1,
			LastSeen: time.UnixMilli(1795341600000), Latency: 400 * time.Microsecond, Connected: true, HeartbeatsSent: 4, HeartbeatsSucceeded: 4},
		peers.Info{ID: f.far.PeerID()},
	)
	f.self.transport.ping = func(_ context.Context, id peer.ID) (time.Duration, error) {
		switch id {
		case f.other.PeerID():
			return 1500 * time.Microsecond, nil
		case f.self.PeerID():
			return 0, fmt.Errorf("ping: %w", identity.ErrSelf)
		case f.stranger.PeerID():
			return 0, fmt.Errorf("ping %s: %w", id, identity.ErrNoAddress)
		}
		return 0, context.DeadlineExceeded
	}
	f.self.messenger.send = func(_ context.Context, to peer.ID, _ string) (router.Sent, error) {
		switch to {
		case f.other.PeerID():
			return router.Sent{Ack: ack(0x03, 0x5e), Relayers: 2}, nil
		case f.closing.PeerID():
			return router.Sent{}, fmt.Errorf("%w: channel to %s: %w", router.ErrNotEnoughBalance, f.closing.Address().Hex(), ledger.ErrNotEnoughBalance)
		}
		return router.Sent{}, fmt.Errorf("%w: from %s", router.ErrNoPath, f.self.PeerID())
	}
	return f
}

// graphChannel is the channel src → dst as the chain indexer reports it, opened once.
func graphChannel(src, dst common.Address, balance int64, status channels.Status) channels.Channel {
	ch := channels.Channel{ID: channels.IDOf(src, dst), Source: src, Destination: dst, Balance: big.NewInt(balance), Epoch: 1, Status: status}
	if status == channels.PendingToClose {
		ch.ClosureTime = time.Date(2026, 11, 22, 10, 5, 0, 0, time.UTC)
	}
	return ch
}

// reset puts the fixture's node back in its initial state: the alias bob, an Open outgoing
// channel to bob, a PendingToClose one to closing, two tickets from bob, the default settings,
// and stores that work.
func (f *specFixture) reset(t *testing.T) {
	t.Helper()
	f.self.aliases.set(map[string]string{"bob": f.other.PeerID().String()})
	f.self.chain.reset(map[common.Address]bool{f.other.Address(): true, f.closing.Address(): false},
		fakeTicket(f.other.Address(), f.self.Address(), 1), fakeTicket(f.other.Address(), f.self.Address(), 2))
	f.self.mail.reset()
	failing := fakeOpenSession(f.other.PeerID()) // a session whose link ran dry: lastError in the document
	failing.ID, failing.LastError, failing.LastErrorAt = fakeSessionID(99), gateway.FailNoBalance, failing.Opened.Add(time.Minute)
	f.self.sessions.reset(fakeOpenSession(f.other.PeerID()), failing)
	f.self.settingsStore = &memSettings{}
	var err error
	if f.self.settings, err = settings.Open(settings.Config{Store: f.self.settingsStore}); err != nil {
		t.Fatal(err)
	}
}

// serveConfig serves the API configured with cfg.
func serveConfig(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// send makes one request and returns the whole response.
func send(t *testing.T, method, url string, header http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil // the body is the upgraded connection
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestSpecResponses exercises each documented response of each operation
// and checks its body against the document.
// answer serves case tc on a fresh server over the fixture's node (failing, faulty or without a
// chain as the case says) and returns what the request got, with the header h plus the case's.
func (f *specFixture) answer(t *testing.T, tc specCase, h http.Header) (*http.Response, []byte) {
	t.Helper()
	f.reset(t)
	cfg := f.self.config(false)
	switch {
	case tc.failing:
		f.self.aliases.fail(errStoreClosed)
		f.self.settingsStore.fail(errStoreClosed)
	case tc.fault != nil:
		cfg = f.self.faultyConfig(tc.fault)
	case tc.noChain:
		cfg = f.self.noChainConfig()
	case tc.noMail:
		cfg.Mail = nil
	case tc.noSessions:
		cfg.Sessions = nil
	}
	if tc.setup != nil {
		tc.setup(f)
	}
	srv := serveConfig(t, cfg)
	h = h.Clone()
	for k, v := range tc.header {
		h[k] = v
	}
	return send(t, tc.method, srv.URL+Prefix+tc.path, h, tc.body)
}

func TestSpecResponses(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	token := http.Header{"X-Auth-Token": {testToken}}
	covered := map[string]bool{}
	for _, tc := range specCases(f) {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.answer(t, tc, token)
			if resp.StatusCode != tc.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			sp.checkResponse(t, tc.method, tc.path, resp.StatusCode, resp.Header, body)
			if tc.code != "" {
				var e ErrorBody
				if err := json.Unmarshal(body, &e); err != nil || e.Status != tc.code {
					t.Fatalf("got %s, want code %s", body, tc.code)
				}
			}
			// A fault of the node stays in its log: the client learns that one happened.
			for _, secret := range []string{"database is closed", "/var/lib/relayd", "10.1.2.3"} {
				if bytes.Contains(body, []byte(secret)) {
					t.Errorf("the answer tells the client %q: %s", secret, body)
				}
			}
			_, route, _ := sp.route(t, tc.method, tc.path)
			covered[fmt.Sprintf("%s %s %d", route.Method, route.Path, tc.status)] = true
		})
	}
	var missing []string
	for path, item := range sp.doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if status == "403" {
					continue // TestEveryOperationNeedsToken
				}
				if key := method + " " + path + " " + status; !covered[key] {
					missing = append(missing, key)
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documented responses without a row in specCases:\n  %s", strings.Join(missing, "\n  "))
	}
}

// fill puts a value in every {parameter} of a documented path.
func fill(path string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
}

// TestEveryOperationNeedsToken: every documented operation, called without
// a token or with a wrong one, answers the seed's 403 body byte for byte,
// also when its input is invalid (authentication comes first).
func TestEveryOperationNeedsToken(t *testing.T) {
	sp := loadSpec(t)
	srv := serveConfig(t, newFakeNode(t).config(false))
	creds := map[string]http.Header{
		"no token":           nil,
		"wrong x-auth-token": {"X-Auth-Token": {testToken + "x"}},
		"wrong basic":        {"Authorization": {basic("wrong-token")}},
	}
	ops := sp.operations()
	if len(ops) == 0 {
		t.Fatal("no operations documented")
	}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		path = fill(path)
		for name, h := range creds {
			for _, body := range []string{"", `{"peerId":`} {
				resp, got := send(t, method, srv.URL+Prefix+path, h, body)
				if resp.StatusCode != http.StatusForbidden || string(got) != want403 {
					t.Errorf("%s %s, %s, body %q: got %d %q, want 403 %q", method, path, name, body, resp.StatusCode, got, want403)
					continue
				}
				sp.checkResponse(t, method, path, resp.StatusCode, resp.Header, got)
			}
		}
	}
}

// TestReferenceUI: the UI and the document load without a token, and the
// JSON served is the embedded YAML.
func TestReferenceUI(t *testing.T) {
	srv := serveConfig(t, newFakeNode(t).config(false))
	get := func(path string, h http.Header) (*http.Response, []byte) {
		return send(t, http.MethodGet, srv.URL+path, h, "")
	}
	for _, h := range []http.Header{nil, {"X-Auth-Token": {"wrong-token"}}} {
		resp, page := get(UIPath, h)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("UI page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, want := range []string{"<title>relayd REST API", `"swaggerJsonUrl":"/api/v2/_swagger/openapi.json"`, "swagger-ui-bundle.js"} {
			if !bytes.Contains(page, []byte(want)) {
				t.Errorf("UI page lacks %q", want)
			}
		}
	}
	for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css"} {
		if resp, b := get(UIPath+asset, nil); resp.StatusCode != http.StatusOK || len(b) < 1000 {
			t.Errorf("%s: %d, %d bytes", asset, resp.StatusCode, len(b))
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL + strings.TrimSuffix(UIPath, "/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != UIPath {
		t.Errorf("UI without slash: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	resp, served := get(UIPath+"openapi.json", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !json.Valid(served) {
		t.Fatal("openapi.json is not JSON")
	}
	// Compare the models kin-openapi builds from each: an independent
	// check of the YAML to JSON conversion.
	fromJSON, err := openapi3.NewLoader().LoadFromData(served)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if !bytes.Equal(a, b) {
		t.Fatalf("openapi.json differs from openapi.yaml:\n%s\n%s", a, b)
	}
	if !bytes.Equal(served, openapi.JSON()) {
		t.Fatal("served JSON differs from openapi.JSON()")
	}
	if resp, y := get(UIPath+"openapi.yaml", nil); resp.StatusCode != http.StatusOK || !bytes.Equal(y, openapi.YAML()) {
		t.Fatalf("openapi.yaml: %d", resp.StatusCode)
	}
	// The document's server is the node itself, relative to where it is
	// served, so "Try it out" calls this node.
	if len(fromYAML.Servers) != 1 || fromYAML.Servers[0].URL != Prefix {
		t.Fatalf("servers %v, want one with url %s", fromYAML.Servers, Prefix)
	}
}

// TestSpecSecuritySchemes: both ways of giving the token are documented
// and required of every operation.
func TestSpecSecuritySchemes(t *testing.T) {
	doc := loadSpec(t).doc
	key := doc.Components.SecuritySchemes["apiToken"]
	basicScheme := doc.Components.SecuritySchemes["basicAuth"]
	if key == nil || key.Value.Type != "apiKey" || key.Value.In != "header" || key.Value.Name != "x-auth-token" {
		t.Fatalf("apiToken scheme %+v", key)
	}
	if basicScheme == nil || basicScheme.Value.Type != "http" || basicScheme.Value.Scheme != "basic" {
		t.Fatalf("basicAuth scheme %+v", basicScheme)
	}
	if len(doc.Security) != 2 {
		t.Fatalf("global security %v: want either scheme", doc.Security)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil {
				t.Errorf("%s %s overrides the global security", method, path)
			}
		}
	}
}

// TestSpecFieldSchemas: the shared field schemas accept what the node
// produces and refuse what it refuses.
func TestSpecFieldSchemas(t *testing.T) {
	schemas := loadSpec(t).doc.Components.Schemas
	visit := func(name string, v any) error { return schemas[name].Value.VisitJSON(v) }
	for i := 0; i < 500; i++ {
		id, err := identity.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if err := visit("PeerId", id.PeerID().String()); err != nil {
			t.Fatalf("PeerId refuses %s: %v", id.PeerID(), err)
		}
		if err := visit("NativeAddress", id.Address().Hex()); err != nil {
			t.Fatalf("NativeAddress refuses %s: %v", id.Address().Hex(), err)
		}
	}
	bad := []struct {
		schema string
		value  any
	}{
		{"PeerId", "16Uiu2HAmNOPE"},
		{"PeerId", "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"},
		{"PeerId", "16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz "},
		{"PeerId", 42},
		{"NativeAddress", "0x035C68d5251AfF759Ea945A05783F2290EA0Acc"},
		{"NativeAddress", "035C68d5251AfF759Ea945A05783F2290EA0Accf"},
		{"WeiAmount", "1.5"},
		{"WeiAmount", "-1"},
		{"WeiAmount", ""},
		{"WeiAmount", 10},
		{"Alias", ""},
		{"Alias", "a b"},
		{"Alias", strings.Repeat("a", 65)},
	}
	for _, tc := range bad {
		if visit(tc.schema, tc.value) == nil {
			t.Errorf("%s accepts %v", tc.schema, tc.value)
		}
	}
	if err := visit("WeiAmount", "10000000000000000"); err != nil {
		t.Error(err)
	}
}

// TestUndocumentedAnswersUseTheEnvelope: the 404 and 405 answers, which no
// operation can document, have the documented error envelope.
func TestUndocumentedAnswersUseTheEnvelope(t *testing.T) {
	schema := loadSpec(t).doc.Components.Schemas["Error"].Value
	srv := serveConfig(t, newFakeNode(t).config(false))
	token := http.Header{"X-Auth-Token": {testToken}}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/api/v2/nothing", http.StatusNotFound},
		{http.MethodPut, "/api/v2/aliases", http.StatusMethodNotAllowed},
		{http.MethodPost, "/api/v2/node/version", http.StatusMethodNotAllowed},
	} {
		resp, body := send(t, tc.method, srv.URL+tc.path, token, "")
		var v any
		if resp.StatusCode != tc.status || json.Unmarshal(body, &v) != nil {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, body)
		}
		if err := schema.VisitJSON(v); err != nil {
			t.Errorf("%s %s: %s is not the envelope: %v", tc.method, tc.path, body, err)
		}
	}
}

// TestSpecErrorCodes: the document's code enum is the API's codes.
func TestSpecErrorCodes(t *testing.T) {
	enum := loadSpec(t).doc.Components.Schemas["ErrorCode"].Value.Enum
	codes := []string{CodeInvalidInput, CodeInvalidPeerID, CodeInvalidAmount, CodeInvalidCurrency, CodeInvalidAddress,
		CodePeerIDNotFound, CodeChannelNotFound, CodeChannelOpen, CodeNotEnoughBalance, CodeTicketsNotFound,
		CodePathNotFound, CodeMessageTooLarge, CodeTimeout, CodeNotFound, CodeUnknownFailure, CodeInvalidSetting, CodeInvalidSettingValue,
		CodePayloadTooLarge, CodeMessageNotFound, CodeNoReplyBlock, CodeStoreFull, CodeSessionNotFound, CodeCannotListen, CodeTooManySessions}
	var documented []string
	for _, v := range enum {
		documented = append(documented, fmt.Sprint(v))
	}
	slices.Sort(codes)
	slices.Sort(documented)
	if !slices.Equal(codes, documented) {
		t.Fatalf("ErrorCode enum %v, API codes %v", documented, codes)
	}
}
