package api

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ws"
)

// The fakeNode's side of the app-facing operations: a peer it has
// measured (bob, in the spec fixture) has one announced and one observed
// address; it has one entry node, itself; its signature is a fixed string.

func (f *fakeNode) PeerAddresses(id peer.ID) (announced, observed []string) {
	for _, p := range f.peers {
		if p.PeerID == id.String() {
			return []string{"/ip4/203.0.113.7/tcp/9091"}, append([]string(nil), p.MultiAddrs...)
		}
	}
	return nil, nil
}

func (f *fakeNode) EntryNodes() map[string]EntryNode {
	return map[string]EntryNode{f.PeerID().String(): {Multiaddrs: []string{"/ip4/127.0.0.1/tcp/9091"}, IsEligible: true}}
}

func (f *fakeNode) SignMessage(string) (string, error) { return "0x" + strings.Repeat("ab", 64), nil }

func (n faultyNode) SignMessage(string) (string, error) { return "", n.err }

// newTestStreams is the real streams over a hub nobody publishes to; its
// Run is not started, so no stream ends by itself.
func newTestStreams() Streams {
	s, err := ws.NewAppStreams(ws.NewHub(nil), nil)
	if err != nil {
		panic(err)
	}
	return s
}

// wsUpgrade is the headers of a WebSocket opening handshake.
func wsUpgrade() http.Header {
	key := make([]byte, 16)
	rand.Read(key)
	return http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {base64.StdEncoding.EncodeToString(key)}}
}
