package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/relay"
)

// wireLog records every frame the relays of a network hand their transport.
type wireLog struct {
	mu     sync.Mutex
	frames []wireFrame
}

type wireFrame struct {
	from, to peer.ID
	proto    p2p.Protocol
	size     int
}

// wrap is a newNode transport wrapper that records into l.
func (l *wireLog) wrap(t relay.Transport) relay.Transport {
	return recordingTransport{Transport: t, log: l, self: t.(*p2p.Host).ID()}
}

func (l *wireLog) snapshot() []wireFrame {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wireFrame(nil), l.frames...)
}

type recordingTransport struct {
	relay.Transport
	log  *wireLog
	self peer.ID
}

func (r recordingTransport) Send(ctx context.Context, to peer.ID, proto p2p.Protocol, frame []byte) error {
	r.log.mu.Lock()
	r.log.frames = append(r.log.frames, wireFrame{from: r.self, to: to, proto: proto, size: len(frame)})
	r.log.mu.Unlock()
	return r.Transport.Send(ctx, to, proto, frame)
}

// newWiredNet is newTestNet with every node's frames recorded in the returned log.
func newWiredNet(t *testing.T, count int) (*testNet, *wireLog) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a dev chain and several nodes")
	}
	log := &wireLog{}
	net := &testNet{t: t, chain: startDevChain(t)}
	for range count {
		cfg := fundedNodeConfig(t, net.chain, tokens(100))
		cfg.Network, cfg.HeartbeatInterval = "test", 500*time.Millisecond
		n, err := New(cfg, os.Stderr, Options{WrapTransport: log.wrap})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
		net.nodes = append(net.nodes, n)
	}
	net.eventually("every node sees every announcement", func() bool {
		for _, n := range net.nodes {
			if info := nodeInfo(n); info.PeersAnnounced != count {
				return false
			}
		}
		return true
	})
	return net, log
}

// TestWireOneSizePerKind: everything on the wire of one kind has one size. On a small network
// it records every frame handed to the transport for a direct message (no ticket), a paid
// message over two relayers (first hop, middle hop, last hop to the recipient), loop cover
// packets and every acknowledgement, and finds msg frames of relay.MsgFrameLen (1,520) bytes
// and ack frames of relay.AckFrameLen (49) bytes only.
func TestWireOneSizePerKind(t *testing.T) {
	net, wire := newWiredNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(10))
	net.open(r1, r2, tokens(10))
	net.open(r2, b, tokens(10))
	net.open(r2, a, tokens(10))
	bFrames := watch(t, b)

	if _, err := a.router.SendPath(t.Context(), []peer.ID{b.id.PeerID()}, "direct"); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, bFrames, "direct")
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"relayed","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, nil)
	expectMessage(t, bFrames, "relayed")
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	net.eventually("cover packets back", func() bool { return net.metricFloat(a, "relayd_cover_packets_returned_total") >= 3 })
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":0}`, http.StatusNoContent, nil)

	name := map[peer.ID]string{a.id.PeerID(): "a", r1.id.PeerID(): "r1", r2.id.PeerID(): "r2", b.id.PeerID(): "b"}
	// Every hop of every kind, each acknowledged (r2 → a: the loop's last hop; a → r2: its ack).
	wantMsg := []string{"a>b", "a>r1", "r1>r2", "r2>b", "r2>a"}
	wantAck := []string{"b>a", "r1>a", "r2>r1", "b>r2", "a>r2"}
	var msgs, acks map[string]bool
	net.eventually("every hop and its acknowledgement on the wire", func() bool {
		msgs, acks = map[string]bool{}, map[string]bool{}
		for _, f := range wire.snapshot() {
			link := name[f.from] + ">" + name[f.to]
			if f.proto == p2p.ProtocolMsg {
				msgs[link] = true
			} else {
				acks[link] = true
			}
		}
		for _, l := range wantMsg {
			if !msgs[l] {
				return false
			}
		}
		for _, l := range wantAck {
			if !acks[l] {
				return false
			}
		}
		return true
	})

	sizes := map[p2p.Protocol]map[int]int{p2p.ProtocolMsg: {}, p2p.ProtocolAck: {}}
	for _, f := range wire.snapshot() {
		if sizes[f.proto] == nil {
			t.Fatalf("a frame of protocol %v", f.proto)
		}
		sizes[f.proto][f.size]++
	}
	for proto, want := range map[p2p.Protocol]int{p2p.ProtocolMsg: relay.MsgFrameLen, p2p.ProtocolAck: relay.AckFrameLen} {
		var seen []int
		for s := range sizes[proto] {
			seen = append(seen, s)
		}
		sort.Ints(seen)
		if len(seen) != 1 || seen[0] != want {
			t.Errorf("protocol %v: frame sizes %v (count by size %v), want only %d", proto, seen, sizes[proto], want)
		}
	}
	if relay.MsgFrameLen != 1520 || relay.AckFrameLen != 49 {
		t.Fatalf("msg frames %d, ack frames %d bytes: docs/PROTOCOL.md §5.4 says 1,520 and 49", relay.MsgFrameLen, relay.AckFrameLen)
	}
}
