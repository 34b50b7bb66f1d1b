package courier

import (
	"context"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/relayd/relayd/internal/store"
)

// testNet carries frames between couriers in one process with the semantics of the relay
// network that the courier relies on: a frame reaches its recipient or is lost (at rate loss);
// a reply block is opaque, made by one node, and carries one packet back to it, once. It is a
// stand-in for the transport only; the stores are real bbolt stores.
type testNet struct {
	mu     sync.Mutex
	nodes  map[peer.ID]*Courier
	blocks map[string]peer.ID // reply block → the node that made it
	used   map[string]bool
	loss   float64
	rng    *mrand.Rand
	// dropFrame, when set, loses the frames it returns true for; onReply runs before a reply
	// packet is handed over (under no lock); down refuses frames to a node.
	dropFrame func(text []byte) bool
	onReply   func()
	down      map[peer.ID]bool
	// counts
	frames, replies, lost, reused int
}

func newTestNet(loss float64, seed uint64) *testNet {
	return &testNet{nodes: map[peer.ID]*Courier{}, blocks: map[string]peer.ID{}, used: map[string]bool{}, down: map[peer.ID]bool{},
		loss: loss, rng: mrand.New(mrand.NewPCG(seed, 1))}
}

// endpoint is one node's view of the net: the courier's Network.
type endpoint struct {
	net  *testNet
	self peer.ID
}

func (n *testNet) drop() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.rng.Float64() < n.loss {
		n.lost++
		return true
	}
	return false
}

func (e endpoint) SendFrame(ctx context.Context, recipient peer.ID, text []byte) error {
	e.net.mu.Lock()
	to := e.net.nodes[recipient]
	e.net.frames++
	down, drop := e.net.down[recipient], e.net.dropFrame
	e.net.mu.Unlock()
	if to == nil || down {
		return errors.New("no path")
	}
	if drop != nil && drop(text) {
		return nil
	}
	if e.net.drop() {
		return nil // lost on the way: the sender cannot tell
	}
	to.Receive(Received{Text: append([]byte(nil), text...), SentAt: time.Now(), ReceivedAt: time.Now()})
	return nil
}

func (e endpoint) NewReplyBlock(ctx context.Context, from peer.ID) ([]byte, error) {
	b := make([]byte, 960)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	e.net.mu.Lock()
	e.net.blocks[string(b)] = e.self
	e.net.mu.Unlock()
	return b, nil
}

func (e endpoint) SendReply(ctx context.Context, block []byte, text []byte) error {
	e.net.mu.Lock()
	owner, ok := e.net.blocks[string(block)]
	if !ok || e.net.used[string(block)] {
		e.net.reused++
		e.net.mu.Unlock()
		return errors.New("bad or used reply block")
	}
	e.net.used[string(block)] = true
	e.net.replies++
	to, hook := e.net.nodes[owner], e.net.onReply
	e.net.mu.Unlock()
	if e.net.drop() {
		return nil
	}
	if hook != nil {
		hook()
	}
	to.Receive(Received{Text: append([]byte(nil), text...), SentAt: time.Now(), ReceivedAt: time.Now(), Reply: true})
	return nil
}

// testNode is a courier with its store and its events.
type testNode struct {
	id     peer.ID
	c      *Courier
	db     *store.DB
	dir    string
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	events []Event
}

func (n *testNode) record(e Event) {
	n.mu.Lock()
	n.events = append(n.events, e)
	n.mu.Unlock()
}

func (n *testNode) eventsOf(kind string) []Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Event
	for _, e := range n.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// startNode opens (or reopens) a node's store in dir and runs its courier on net.
func startNode(t *testing.T, net *testNet, id peer.ID, dir string, tune func(*Config)) *testNode {
	t.Helper()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{id: id, db: db, dir: dir, done: make(chan struct{})}
	cfg := Config{Network: endpoint{net, id}, Store: db, Events: n.record, Capacity: 500, ReplyCapacity: 460,
		MinTimeout: 200 * time.Millisecond, MaxTimeout: 2 * time.Second, Quiet: 50 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.c = c
	net.mu.Lock()
	net.nodes[id] = c
	net.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		_ = c.Run(ctx)
	}()
	t.Cleanup(n.stop)
	return n
}

// stop ends the courier and closes its store; idempotent.
func (n *testNode) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.done
	n.cancel = nil
	_ = n.db.Close()
}

func newPeer(t *testing.T) peer.ID {
	t.Helper()
	_, pub, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testutilCounter(c prometheus.Counter) float64 { return testutil.ToFloat64(c) }
