package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/carrier"
	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/testnet"
	"github.com/relayd/relayd/internal/wait"
)

// memNet is a mixnet in memory between the Stacks of a test (as internal/carrier's tests have
// one): forward texts and replies arrive after a random delay, so out of order, and its reply
// blocks are real ones (packet.Route.SealReply over two hops), each usable once.
type memNet struct {
	t     testing.TB
	delay time.Duration
	pool  *packet.EphemeralPool
	key   *packet.PublicKey

	mu    sync.Mutex
	rng   *mrand.Rand
	nodes map[peer.ID]*Stack
	// blocks are the blocks made and not used yet, by their hash, with their maker: a block
	// leaves when it is used, and one used again is unknown. With untracked set (a test that
	// measures the memory of many sessions) the network keeps no record of its blocks: a reply
	// goes to the one node other than its sender.
	blocks    map[[32]byte]peer.ID
	untracked bool
	// blockTime is how long making a reply block takes (a router draws a path and seals it);
	// 0: as long as sealing it here.
	blockTime atomic.Int64 // a time.Duration
	// hold keeps every reply (exit → entry) from arriving (held) until releaseReplies: an
	// exit whose answers are slow.
	hold bool
	held []func()
}

// holdReplies keeps the replies from arriving until releaseReplies.
func (n *memNet) holdReplies() {
	n.mu.Lock()
	n.hold = true
	n.mu.Unlock()
}

// releaseReplies delivers the replies held and lets the next ones through.
func (n *memNet) releaseReplies() {
	n.mu.Lock()
	held := n.held
	n.held, n.hold = nil, false
	n.mu.Unlock()
	for _, f := range held {
		f()
	}
}

// heldReplies is how many replies wait for releaseReplies.
func (n *memNet) heldReplies() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.held)
}

func newMemNet(t testing.TB) *memNet {
	pool, err := packet.NewEphemeralPool(rand.Reader, 64)
	if err != nil {
		t.Fatal(err)
	}
	scalar := make([]byte, 32)
	scalar[31] = 7
	k, err := packet.NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	return &memNet{t: t, delay: 3 * time.Millisecond, pool: pool, key: k.PublicKey(), rng: mrand.New(mrand.NewPCG(1, 2)),
		nodes: map[peer.ID]*Stack{}, blocks: map[[32]byte]peer.ID{}}
}

// view is the network as the node self sees it: its carrier.Network.
type view struct {
	n    *memNet
	self peer.ID
}

var _ carrier.Network = view{}

func (n *memNet) deliver(to peer.ID, text []byte, reply bool) {
	n.mu.Lock()
	d := time.Duration(n.rng.Int64N(int64(n.delay) + 1))
	s := n.nodes[to]
	n.mu.Unlock()
	if s == nil {
		return
	}
	text = bytes.Clone(text)
	arrive := func() {
		time.AfterFunc(d, func() {
			if err := s.Carrier.Receive(text, reply); errors.Is(err, carrier.ErrMalformed) || errors.Is(err, session.ErrMalformed) {
				n.t.Errorf("a node sent a malformed text: %v", err)
			}
		})
	}
	n.mu.Lock()
	if reply && n.hold {
		n.held = append(n.held, arrive)
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	arrive()
}

func (v view) SendFrame(_ context.Context, to peer.ID, text []byte) error {
	if len(text) > packet.MaxMessageSize {
		v.n.t.Errorf("a forward text of %d bytes", len(text))
	}
	v.n.deliver(to, text, false)
	return nil
}

func (v view) NewSessionReplyBlock(ctx context.Context, _ peer.ID) ([]byte, []peer.ID, error) {
	if d := time.Duration(v.n.blockTime.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if err := v.n.pool.Fill(); err != nil {
		return nil, nil, err
	}
	r, err := v.n.pool.NewRoute(rand.Reader, []*packet.PublicKey{v.n.key, v.n.key})
	if err != nil {
		return nil, nil, err
	}
	b, _, err := r.SealReply(rand.Reader, time.Now(), make([][packet.PoRSize]byte, 1))
	if err != nil {
		return nil, nil, err
	}
	raw, err := b.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	v.n.mu.Lock()
	if !v.n.untracked {
		v.n.blocks[sha256.Sum256(raw)] = v.self
	}
	v.n.mu.Unlock()
	return raw, nil, nil
}

// Down: no relayer of this network goes down.
func (view) Down(peer.ID) bool { return false }

func (v view) SendReply(_ context.Context, block []byte, text []byte) error {
	if len(text) > packet.MaxReplySize {
		v.n.t.Errorf("a reply text of %d bytes", len(text))
	}
	var b packet.ReplyBlock
	if err := b.UnmarshalBinary(block); err != nil {
		v.n.t.Errorf("a reply on a block that does not decode: %v", err)
		return err
	}
	v.n.mu.Lock()
	var to peer.ID
	ok := true
	if v.n.untracked {
		for id := range v.n.nodes {
			if id != v.self {
				to = id
			}
		}
	} else {
		h := sha256.Sum256(block)
		to, ok = v.n.blocks[h]
		delete(v.n.blocks, h)
	}
	v.n.mu.Unlock()
	if !ok {
		v.n.t.Errorf("a reply on a block that is unknown or used already")
		return errors.New("bad block")
	}
	v.n.deliver(to, text, true)
	return nil
}

// testSession is the sessions' tuning in these tests: timeouts for a network of milliseconds,
// and a short linger.
func testSession() session.Config {
	return session.Config{MinRTO: 200 * time.Millisecond, InitialRTO: 500 * time.Millisecond,
		AckDelay: 20 * time.Millisecond, Linger: 300 * time.Millisecond}
}

// stack starts the Stack of node name on the network, with policy (nil: no exit) and scfg,
// and stops it when the test ends.
func (n *memNet) stack(t testing.TB, name string, policy *exit.Policy, scfg session.Config) *Stack {
	t.Helper()
	if policy == nil {
		policy = mustPolicy(t, nil)
	}
	id := peer.ID(name)
	s, err := NewStack(StackConfig{Network: view{n, id}, Self: id, Policy: policy, Session: scfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	probe, err := (&session.Frame{Flags: session.FlagACK}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return !errors.Is(s.Mux.Receive(probe), session.ErrClosed) }, 5*time.Second, "the mux runs")
	n.mu.Lock()
	n.nodes[id] = s
	n.mu.Unlock()
	return s
}

// exitID names the exit of pair.
const exitID = peer.ID("exit")

// pair is an entry and an exit whose policy allows rules (and offers services), both running.
func pair(t testing.TB, rules, services []string) (n *memNet, entry, ex *Stack) {
	t.Helper()
	n = newMemNet(t)
	entry = n.stack(t, "entry", nil, testSession())
	ex = n.stack(t, "exit", mustPolicy(t, rules, services...), testSession())
	return n, entry, ex
}

// mustPolicy is an exit policy with rules and services, its connection rate high enough for
// the tests that open many.
func mustPolicy(t testing.TB, rules []string, services ...string) *exit.Policy {
	t.Helper()
	r, err := exit.ParseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := exit.ParseServices(services)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exit.New(exit.Config{Allow: r, Services: svcs, ConnRate: 1e5, ConnBurst: 1e5, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tcpServer serves each connection with handle on a loopback port until the test ends.
func tcpServer(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	addr, _ := testnet.ServeTCP(t, handle)
	return addr.String()
}

// answer reads its connection to the end and answers how many bytes came and their hash: it
// answers only after the client's half-close.
func answer(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	h := sha256.New()
	n, err := io.Copy(h, c)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(c, "%d %x", n, h.Sum(nil))
}

// answerOf is what answer answers to b.
func answerOf(b []byte) string { return fmt.Sprintf("%d %x", len(b), sha256.Sum256(b)) }

// udpEcho answers every datagram with "echo:" and the datagram, to its sender, until the test
// ends; its answers are longer than what came, so that the two directions count apart.
func udpEcho(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = pc.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(append([]byte("echo:"), buf[:n]...), addr)
		}
	}()
	return pc.LocalAddr().String()
}

// closedPort is a loopback TCP port nothing listens on (it was bound, then let go).
func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// dial connects to a session's local address.
func dial(t testing.TB, network, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	return c
}
