package api

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ws"
)

// fakeDiscovery is what the node knows of other nodes' addresses: a peer the transport knows
// has one announced address and the transport's addresses as observed ones; the one entry node
// is the node itself.
type fakeDiscovery struct {
	self      peer.ID
	transport *fakeTransport
}

func (d *fakeDiscovery) PeerAddresses(id peer.ID) (announced, observed []string) {
	for _, p := range d.transport.Peers() {
		if p.ID != id {
			continue
		}
		for _, a := range p.Addrs {
			observed = append(observed, a.String())
		}
		return []string{"/ip4/203.0.113.7/tcp/9091"}, observed
	}
	return nil, nil
}

func (d *fakeDiscovery) EntryNodes() map[peer.ID][]string {
	return map[peer.ID][]string{d.self: {"/ip4/127.0.0.1/tcp/9091"}}
}

// newTestStreams is the real streams over a hub nobody publishes to; its
// Run is not started, so no stream ends by itself.
func newTestStreams() Streams {
	s, err := ws.NewAppStreams(ws.NewHub(nil), newFakeMail(), nil)
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
