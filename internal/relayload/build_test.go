package relayload

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

// relayerTransport is the relayer's side of the test: it records what the relay sends and
// hands the test the relay's handlers.
type relayerTransport struct {
	mu       sync.Mutex
	handlers map[p2p.Protocol]p2p.Handler
	sent     map[p2p.Protocol]map[peer.ID]int
	msgs     [][]byte // the msg frames sent
}

func (t *relayerTransport) Send(_ context.Context, to peer.ID, proto p2p.Protocol, frame []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if proto == p2p.ProtocolMsg {
		t.msgs = append(t.msgs, append([]byte(nil), frame...))
	}
	if t.sent[proto] == nil {
		t.sent[proto] = map[peer.ID]int{}
	}
	t.sent[proto][to]++
	return nil
}

func (t *relayerTransport) Handle(proto p2p.Protocol, fn p2p.Handler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handlers[proto] = fn
	return nil
}

func (t *relayerTransport) handler(proto p2p.Protocol) p2p.Handler {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handlers[proto]
}

func (t *relayerTransport) count(proto p2p.Protocol, to peer.ID) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent[proto][to]
}

// memReplay is an in-memory replay store.
type memReplay struct {
	mu   sync.Mutex
	seen map[[packet.TagSize]byte]bool
}

func (m *memReplay) CheckAndAdd(_ uint32, tag [packet.TagSize]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[tag] {
		return false, nil
	}
	m.seen[tag] = true
	return true, nil
}

func peerOf(t *testing.T, k *ecdsa.PrivateKey) peer.ID {
	t.Helper()
	id, err := identity.PeerIDFromPubKey(crypto.CompressPubkey(&k.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func openChannel(src, dst common.Address, tokens int64) channels.Channel {
	return channels.Channel{ID: channels.IDOf(src, dst), Source: src, Destination: dst, Epoch: 1, Status: channels.Open,
		Balance: new(big.Int).Mul(big.NewInt(tokens), big.NewInt(1e18))}
}

// TestBuiltFramesAreRelayed builds frames as Run does and hands them, in order, to a real relay
// acting as the relayer (its own ledger and store, the same channels): every packet must pass
// the peel and the ticket checks, be acknowledged to G and forwarded to the recipient, for whom
// it is a message, or drop cover with Config.Drop.
func TestBuiltFramesAreRelayed(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "messages", true: "drop cover"}[drop], func(t *testing.T) { testBuiltFramesAreRelayed(t, drop) })
	}
}

func testBuiltFramesAreRelayed(t *testing.T, drop bool) {
	const n = 24
	const chainID = 1337
	contract := common.Address{0xc0}
	keys := make([]*ecdsa.PrivateKey, 3) // G, relayer, recipient
	for i := range keys {
		k, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	addr := func(i int) common.Address { return crypto.PubkeyToAddress(keys[i].PublicKey) }
	gID, relayerID, recipientID := peerOf(t, keys[0]), peerOf(t, keys[1]), peerOf(t, keys[2])
	graph := channels.NewGraph()
	gToRelayer := openChannel(addr(0), addr(1), 10)
	graph.Apply(gToRelayer)
	graph.Apply(openChannel(addr(1), addr(2), 10))

	g, err := identity.FromKey(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Packets: n - 1, Prebuild: 3, TextSize: DefaultTextSize, Drop: drop}
	frames, err := build(t.Context(), cfg, g, gToRelayer, chainID, contract, tickets.MaxWinProb, []peer.ID{relayerID, recipientID})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != n {
		t.Fatalf("built %d frames, want %d", len(frames), n)
	}

	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	led, err := ledger.New(ledger.Config{Key: keys[1], ChainID: chainID, Contract: contract, Channels: graph, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	tr := &relayerTransport{handlers: map[p2p.Protocol]p2p.Handler{}, sent: map[p2p.Protocol]map[peer.ID]int{}}
	r, err := relay.New(relay.Config{Key: keys[1], Transport: tr, Payments: led, Replay: &memReplay{seen: map[[packet.TagSize]byte]bool{}},
		Deliver: func(relay.Received) {}, NoMixDelay: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wait.For(t, func() bool { return tr.handler(p2p.ProtocolMsg) != nil }, 5*time.Second, "the relay registers its msg handler")
	onMsg := tr.handler(p2p.ProtocolMsg)
	for _, f := range frames {
		onMsg(gID, f)
	}
	wait.For(t, func() bool { return tr.count(p2p.ProtocolMsg, recipientID) == n }, 10*time.Second,
		"the relayer forwards every packet to the recipient")
	wait.For(t, func() bool { return tr.count(p2p.ProtocolAck, gID) == n }, 10*time.Second,
		"the relayer acknowledges every packet to G")
	recipientKey, err := packet.NewPrivateKey(crypto.FromECDSA(keys[2]))
	if err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i, f := range tr.msgs {
		p, err := packet.Peel(recipientKey, f[1:1+packet.PacketSize], time.Now(), &memReplay{seen: map[[packet.TagSize]byte]bool{}})
		if err != nil || !p.Final {
			t.Fatalf("packet %d at the recipient: final %v, %v", i, p.Final, err)
		}
		if p.Message.Drop != drop {
			t.Fatalf("packet %d is drop cover: %v, want %v", i, p.Message.Drop, drop)
		}
	}
}
