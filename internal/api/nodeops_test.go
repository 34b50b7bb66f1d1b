package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
)

var auth = map[string]string{"x-auth-token": testToken}

func TestVersion(t *testing.T) {
	srv, _ := newTestServer(t, false)
	status, _, body := do(t, http.MethodGet, srv.URL+"/api/v2/node/version", auth)
	if status != http.StatusOK || body != "\"9.9.9\"\n" {
		t.Fatalf("%d %q", status, body)
	}
}

func TestPeers(t *testing.T) {
	n := newFakeNode(t)
	a, b := newPeerID(t), newPeerID(t)
	n.transport.setPeers(
		peers.Info{ID: a, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1")}, Quality: 1, Connected: true, Latency: 500 * time.Microsecond,
			LastSeen: time.UnixMilli(1795305600000), HeartbeatsSent: 3, HeartbeatsSucceeded: 3, Reach: peers.ReachHolePunched},
		peers.Info{ID: b, Quality: 0.1},
	)
	srv, _ := serve(t, n, false)
	status, _, body := do(t, http.MethodGet, srv.URL+"/api/v2/node/peers", auth)
	var got PeerList
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	want := PeerInfo{PeerID: a.String(), MultiAddr: "/ip4/127.0.0.1/tcp/1", MultiAddrs: []string{"/ip4/127.0.0.1/tcp/1"}, Quality: 1,
		LastSeen: 1795305600000, LatencyMs: 0.5, Connected: true, Reached: "hole-punched", Heartbeats: Heartbeats{Sent: 3, Success: 3}}
	if len(got.Announced) != 2 || len(got.Connected) != 1 || !reflect.DeepEqual(got.Connected[0], want) || got.Announced[1].PeerID != b.String() ||
		got.Announced[1].Reached != "none" {
		t.Fatalf("peers %s", body)
	}
	n.transport.setPeers()
	_, _, body = do(t, http.MethodGet, srv.URL+"/api/v2/node/peers", auth)
	if !strings.Contains(body, `"connected":[]`) || !strings.Contains(body, `"announced":[]`) {
		t.Fatalf("empty lists must be [] not null: %s", body)
	}
}

func TestPing(t *testing.T) {
	other, _ := identity.Generate()
	stranger, _ := identity.Generate() // a peer the node knows no address of
	n := newFakeNode(t)
	var mu sync.Mutex
	var pinged peer.ID
	n.transport.ping = func(_ context.Context, id peer.ID) (time.Duration, error) {
		mu.Lock()
		pinged = id
		mu.Unlock()
		switch id {
		case other.PeerID():
			return 1500 * time.Microsecond, nil
		case stranger.PeerID():
			return 0, fmt.Errorf("ping %s: %w", id, identity.ErrNoAddress)
		}
		return 0, errors.New("peer unreachable")
	}
	srv, _ := serve(t, n, false)
	url := srv.URL + "/api/v2/node/ping"
	unreachable, _ := identity.Generate()
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"ok", `{"peerId":"` + other.PeerID().String() + `"}`, 200, `{"latency":1.5}`},
		{"unreachable", `{"peerId":"` + unreachable.PeerID().String() + `"}`, 422, `"status":"TIMEOUT"`},
		{"unknown peer", `{"peerId":"` + stranger.PeerID().String() + `"}`, 404, `"status":"PEERID_NOT_FOUND"`},
		{"invalid peer", `{"peerId":"16Uiu2HAmNOPE"}`, 400, `"status":"INVALID_PEERID"`},
		{"empty peer", `{"peerId":""}`, 400, `"status":"INVALID_PEERID"`},
		{"chain address", `{"peerId":"0x059c779Fd53Eb799aF70Bb720960F6787eB4548D"}`, 400, `"status":"INVALID_PEERID"`},
		{"malformed json", `{"peerId":`, 400, `"status":"INVALID_INPUT"`},
		{"wrong type", `{"peerId":42}`, 400, `field \"peerId\" must be a string`},
		{"unknown field", `{"peerId":"x","extra":1}`, 400, `unknown field`},
		{"trailing data", `{"peerId":"x"} {}`, 400, `after the JSON object`},
		{"stray closing brace", `{"peerId":"x"}}`, 400, `after the JSON object`},
		{"empty body", ``, 400, `request body is empty`},
		{"array body", `[]`, 400, `"status":"INVALID_INPUT"`},
		{"oversized body", `{"peerId":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, 400, `larger than 65536 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			pinged = ""
			mu.Unlock()
			status, _, body := doBody(t, http.MethodPost, url, auth, tt.body)
			if status != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("got %d %s, want %d containing %s", status, body, tt.status, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if status == 400 && pinged != "" {
				t.Fatal("invalid request reached the node")
			}
		})
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"peerId":"x"}`, `{`, `[]`, `{"peerId":1}`, `null`, `{"peerId":"a"}{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v PingRequest
		err := decodeJSON(strings.NewReader(s), &v)
		if err == nil && !json.Valid([]byte(s)) {
			t.Fatalf("accepted invalid JSON %q", s)
		}
	})
}
