package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/identity"
)

func TestAliases(t *testing.T) {
	srv, n := newTestServer(t, false)
	bob, _ := identity.Generate()
	url := srv.URL + "/api/v2/aliases"

	get := func() map[string]string {
		status, _, body := do(t, http.MethodGet, url, auth)
		var m map[string]string
		if status != http.StatusOK || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("GET aliases: %d %s", status, body)
		}
		return m
	}
	if m := get(); len(m) != 1 || m["me"] != n.PeerID().String() {
		t.Fatalf("fresh aliases %v", m)
	}
	if status, _, body := doBody(t, http.MethodPost, url, auth, `{"peerId":"`+bob.PeerID().String()+`","alias":"bob"}`); status != http.StatusCreated || body != "" {
		t.Fatalf("POST: %d %q", status, body)
	}
	if m := get(); len(m) != 2 || m["bob"] != bob.PeerID().String() {
		t.Fatalf("aliases %v", m)
	}
	status, _, body := do(t, http.MethodGet, url+"/bob", auth)
	if status != http.StatusOK || body != `{"peerId":"`+bob.PeerID().String()+`"}`+"\n" {
		t.Fatalf("GET bob: %d %s", status, body)
	}
	if status, _, _ := do(t, http.MethodGet, url+"/me", auth); status != http.StatusOK {
		t.Fatalf("GET me: %d", status)
	}

	bad := []struct{ name, body, want string }{
		{"bad peer", `{"peerId":"nope","alias":"x"}`, "INVALID_PEERID"},
		{"missing alias", `{"peerId":"` + bob.PeerID().String() + `"}`, "INVALID_INPUT"},
		{"alias with space", `{"peerId":"` + bob.PeerID().String() + `","alias":"a b"}`, "INVALID_INPUT"},
		{"reserved me", `{"peerId":"` + bob.PeerID().String() + `","alias":"me"}`, "reserved"},
		{"alias wrong type", `{"peerId":"` + bob.PeerID().String() + `","alias":7}`, "must be a string"},
		// An alias shaped like a PeerId would name another peer than the
		// one it spells: every kind of libp2p PeerId is refused.
		{"alias is a PeerId", `{"peerId":"` + bob.PeerID().String() + `","alias":"` + n.PeerID().String() + `"}`, "is a PeerId"},
		{"alias is its own PeerId", `{"peerId":"` + bob.PeerID().String() + `","alias":"` + bob.PeerID().String() + `"}`, "is a PeerId"},
		{"alias is an ed25519 PeerId", `{"peerId":"` + bob.PeerID().String() + `","alias":"12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"}`, "is a PeerId"},
		{"alias is a SHA-256 PeerId", `{"peerId":"` + bob.PeerID().String() + `","alias":"QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"}`, "is a PeerId"},
	}
	for _, tt := range bad {
		status, _, body := doBody(t, http.MethodPost, url, auth, tt.body)
		if status != http.StatusBadRequest || !strings.Contains(body, tt.want) {
			t.Fatalf("%s: %d %s", tt.name, status, body)
		}
	}
	if m := get(); len(m) != 2 {
		t.Fatalf("bad input changed aliases: %v", m)
	}
	// Names that only look a little like PeerIds stay usable.
	for _, alias := range []string{"11", "16Uiu2HA", "Qm", "bob2"} {
		if status, _, body := doBody(t, http.MethodPost, url, auth, `{"peerId":"`+bob.PeerID().String()+`","alias":"`+alias+`"}`); status != http.StatusCreated {
			t.Fatalf("alias %q: %d %s", alias, status, body)
		}
		if status, _, _ := do(t, http.MethodDelete, url+"/"+alias, auth); status != http.StatusNoContent {
			t.Fatalf("DELETE %q: %d", alias, status)
		}
	}

	if status, _, _ := do(t, http.MethodDelete, url+"/bob", auth); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _, body := do(t, http.MethodGet, url+"/bob", auth); status != http.StatusNotFound || !strings.Contains(body, "PEERID_NOT_FOUND") {
		t.Fatalf("GET deleted: %d %s", status, body)
	}
	// Deleting an alias that is not set is a 404, as GET is.
	for _, alias := range []string{"bob", "never-set"} {
		if status, _, body := do(t, http.MethodDelete, url+"/"+alias, auth); status != http.StatusNotFound || !strings.Contains(body, `"status":"PEERID_NOT_FOUND"`) {
			t.Fatalf("DELETE unknown %q: %d %s", alias, status, body)
		}
	}
	// "me" always names this node: the directory refuses to remove it as an invalid alias.
	if status, _, body := do(t, http.MethodDelete, url+"/me", auth); status != http.StatusBadRequest ||
		!strings.Contains(body, `"status":"INVALID_INPUT"`) || !strings.Contains(body, "cannot be removed") {
		t.Fatalf("DELETE me: %d %s", status, body)
	}
	if m := get(); m["me"] != n.PeerID().String() {
		t.Fatalf("aliases after DELETE me: %v", m)
	}
}
