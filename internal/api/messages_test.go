package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/router"
)

// BenchmarkPostMessage is the API's own cost of POST /api/v2/messages with a 100-byte text to
// a PeerId, as relayctl bench sends it: authentication, validation against the OpenAPI
// document, decoding, the recipient's PeerId and the answer; the node's Send is the fake's,
// which does nothing.
func BenchmarkPostMessage(b *testing.B) {
	n := newFakeNode(b)
	to, err := identity.Generate()
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(n.config(false))
	if err != nil {
		b.Fatal(err)
	}
	body := `{"body":"` + strings.Repeat("x", 100) + `","recipient":"` + to.PeerID().String() + `"}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, Prefix+"/messages", strings.NewReader(body))
		r.Header.Set("x-auth-token", testToken)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			b.Fatalf("HTTP %d: %s", w.Code, w.Body)
		}
	}
}

// TestMessageAck: a sent message is answered 202 with the first hop's ack challenge, 0x and
// 66 hexadecimal digits.
func TestMessageAck(t *testing.T) {
	n := newFakeNode(t)
	to := newPeerID(t)
	var gotTo peer.ID
	var gotText string
	n.messenger.send = func(_ context.Context, id peer.ID, text string) (router.Sent, error) {
		gotTo, gotText = id, text
		return router.Sent{Ack: ack(0x03, 0x5e), Relayers: 3}, nil
	}
	srv, _ := serve(t, n, false)
	status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi there","recipient":"`+to.String()+`"}`)
	if want := `"0x03` + strings.Repeat("5e", 32) + `"` + "\n"; status != http.StatusAccepted || body != want {
		t.Fatalf("got %d %s, want 202 %s", status, body, want)
	}
	if gotTo != to || gotText != "hi there" {
		t.Fatalf("sent %q to %s", gotText, gotTo)
	}
}

// TestMessageRouterErrors: each of the router's sentinels is answered with its row of the error
// table, whose message is the sentinel's own sentence: the cause the router wraps (a relay,
// path or transport error, which may name peers, addresses or channels) stays in the log.
func TestMessageRouterErrors(t *testing.T) {
	const cause = "dial 16Uiu2HAmSecretRelay at /ip4/10.9.8.7/tcp/9091: connection refused"
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{router.ErrNoChain, 422, CodePathNotFound, router.ErrNoChain.Error()},
		{router.ErrNoPath, 422, CodePathNotFound, router.ErrNoPath.Error()},
		{router.ErrNotEnoughBalance, 422, CodeNotEnoughBalance, router.ErrNotEnoughBalance.Error()},
		{router.ErrUnreachable, 422, CodePathNotFound, router.ErrUnreachable.Error()},
		{router.ErrMessageTooLarge, 400, CodeMessageTooLarge, "message is longer than 500 bytes"},
		{router.ErrBadRoute, 400, CodeInvalidInput, router.ErrBadRoute.Error()},
		{router.ErrSelf, 400, CodeInvalidPeerID, router.ErrSelf.Error()},
		{router.ErrBusy, 503, CodeUnknownFailure, router.ErrBusy.Error()},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			n := newFakeNode(t)
			n.messenger.send = func(context.Context, peer.ID, string) (router.Sent, error) {
				return router.Sent{}, fmt.Errorf("send message: %w: %w", tc.err, errors.New(cause))
			}
			srv, _ := serve(t, n, false)
			status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi","recipient":"`+newPeerID(t).String()+`"}`)
			var e ErrorBody
			if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code || e.Error != tc.msg {
				t.Fatalf("got %d %s, want %d %s %q", status, body, tc.status, tc.code, tc.msg)
			}
			if strings.Contains(body, "10.9.8.7") || strings.Contains(body, "SecretRelay") {
				t.Fatalf("the answer carries the cause: %s", body)
			}
		})
	}
}
