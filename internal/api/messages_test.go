package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
)

// BenchmarkPostMessage is the API's own cost of POST /api/v2/messages with a 100-byte text to
// a PeerId, as relayctl bench sends it: authentication, validation against the OpenAPI
// document, decoding, the recipient's PeerId and the answer; the node's SendMessage is the
// fake's, which does nothing.
func BenchmarkPostMessage(b *testing.B) {
	id, err := identity.Generate()
	if err != nil {
		b.Fatal(err)
	}
	to, err := identity.Generate()
	if err != nil {
		b.Fatal(err)
	}
	n := &fakeNode{Identity: id, aliases: map[string]string{}, openChannels: map[peer.ID]bool{}}
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

// The memo of parsed recipients returns what was put and never holds more than its bound.
func TestPeerIDCacheBounded(t *testing.T) {
	c := &peerIDCache{max: 3}
	if _, ok := c.get("a"); ok {
		t.Fatal("empty memo has a")
	}
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		c.put(v, peer.ID(v+"-id"))
		if len(c.m) > c.max {
			t.Fatalf("after %d puts the memo holds %d", i+1, len(c.m))
		}
		if id, ok := c.get(v); !ok || id != peer.ID(v+"-id") {
			t.Fatalf("get(%q) = %q, %v", v, id, ok)
		}
	}
}
