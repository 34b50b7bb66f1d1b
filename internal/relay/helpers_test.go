package relay

import (
	"context"
	"crypto/ecdsa"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	lcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/wait"
)

const testChainID = 1337

var testContract = common.HexToAddress("0x00000000000000000000000000000000000000cc")

// oneToken is 10^18, the token's unit.
var oneToken = func() uint256.Int { var x uint256.Int; x.SetFromDecimal("1000000000000000000"); return x }()

// recorder wraps Payments and records the tickets each node accepted and issued. It offers the
// split methods as the ledger does (splitPayments), unless unsplit hides them (unsplitPayments).
type recorder struct {
	Payments
	split    splitPayments
	mu       sync.Mutex
	accepted []tickets.Ticket
	issued   []tickets.Ticket
	// mutate, if set, changes each issued ticket (then it is re-signed with signKey).
	mutate  func(*tickets.Ticket)
	signKey *ecdsa.PrivateKey
}

func (r *recorder) AcceptTicket(from common.Address, t *tickets.Ticket, final bool) error {
	err := r.Payments.AcceptTicket(from, t, final)
	if err == nil {
		r.mu.Lock()
		r.accepted = append(r.accepted, *t)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) VerifyTicket(from common.Address, t *tickets.Ticket) error {
	return r.split.VerifyTicket(from, t)
}

func (r *recorder) AcceptVerified(from common.Address, t *tickets.Ticket, final bool) error {
	err := r.split.AcceptVerified(from, t, final)
	if err == nil {
		r.mu.Lock()
		r.accepted = append(r.accepted, *t)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) ReserveTicket(ctx context.Context, to common.Address, amount *uint256.Int, c por.Challenge) (tickets.Ticket, error) {
	return r.split.ReserveTicket(ctx, to, amount, c)
}

func (r *recorder) SignTicket(t *tickets.Ticket) error {
	if err := r.split.SignTicket(t); err != nil {
		return err
	}
	return r.issuedOne(t)
}

func (r *recorder) IssueTicket(ctx context.Context, to common.Address, amount *uint256.Int, c por.Challenge) (tickets.Ticket, error) {
	t, err := r.Payments.IssueTicket(ctx, to, amount, c)
	if err != nil {
		return t, err
	}
	return t, r.issuedOne(&t)
}

// issuedOne mutates (and re-signs) an issued ticket if the test asked, and records it.
func (r *recorder) issuedOne(t *tickets.Ticket) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mutate != nil {
		r.mutate(t)
		if err := t.Sign(r.signKey, testChainID, testContract); err != nil {
			return err
		}
	}
	r.issued = append(r.issued, *t)
	return nil
}

// unsplitPayments hides a recorder's split methods: the relay then accepts and issues each
// ticket whole, in its link's order (AcceptTicket, IssueTicket).
type unsplitPayments struct{ *recorder }

func (u unsplitPayments) AcceptTicket(from common.Address, t *tickets.Ticket, final bool) error {
	return u.recorder.AcceptTicket(from, t, final)
}

func (u unsplitPayments) IssueTicket(ctx context.Context, to common.Address, amount *uint256.Int, c por.Challenge) (tickets.Ticket, error) {
	return u.recorder.IssueTicket(ctx, to, amount, c)
}

func (u unsplitPayments) Acknowledge(ctx context.Context, acks []ledger.AckedTicket) error {
	return u.recorder.Acknowledge(ctx, acks)
}

func (u unsplitPayments) Neglect(from common.Address, t *tickets.Ticket) { u.recorder.Neglect(from, t) }

func (r *recorder) acceptedTickets() []tickets.Ticket {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]tickets.Ticket(nil), r.accepted...)
}

// filterTransport wraps a Transport; dropAcks makes the node never acknowledge, alter (if set)
// changes every msg frame it sends, sent records the msg frames it sends (as sent), and hold
// keeps them from the network (recorded only).
type filterTransport struct {
	Transport
	mu       sync.Mutex
	dropAcks bool
	hold     bool
	alter    func(frame []byte)
	sent     [][]byte
}

func (f *filterTransport) Send(ctx context.Context, to peer.ID, proto p2p.Protocol, frame []byte) error {
	f.mu.Lock()
	if proto == p2p.ProtocolAck && f.dropAcks {
		f.mu.Unlock()
		return nil
	}
	if proto == p2p.ProtocolMsg {
		frame = append([]byte(nil), frame...)
		if f.alter != nil {
			f.alter(frame)
		}
		f.sent = append(f.sent, frame)
		if f.hold {
			f.mu.Unlock()
			return nil
		}
	}
	f.mu.Unlock()
	return f.Transport.Send(ctx, to, proto, frame)
}

type testNode struct {
	name      string
	key       *ecdsa.PrivateKey
	addr      common.Address
	host      *p2p.Host
	transport *filterTransport
	relay     *Relay
	ledger    *ledger.Ledger
	payments  *recorder
	db        *store.DB

	mu        sync.Mutex
	delivered []Received
}

func (n *testNode) id() peer.ID { return n.relay.ID() }

// sentFrames returns how many msg frames the node has sent.
func (n *testNode) sentFrames() int {
	n.transport.mu.Lock()
	defer n.transport.mu.Unlock()
	return len(n.transport.sent)
}

// issuedTickets returns the tickets the node has issued (paid mode).
func (n *testNode) issuedTickets() []tickets.Ticket {
	n.payments.mu.Lock()
	defer n.payments.mu.Unlock()
	return append([]tickets.Ticket(nil), n.payments.issued...)
}

func (n *testNode) deliveries() []Received {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Received(nil), n.delivered...)
}

type netOptions struct {
	channels *channelstest.Map // nil: unpaid mode
	unsplit  bool              // Payments without the split methods (unsplitPayments)
	edit     func(name string, cfg *Config)
}

// newNet starts one node per name on 127.0.0.1 and introduces them to each other.
func newNet(t testing.TB, opts netOptions, names ...string) map[string]*testNode {
	t.Helper()
	nodes := make(map[string]*testNode, len(names))
	var all []*testNode
	for _, name := range names {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		lk, err := lcrypto.UnmarshalSecp256k1PrivateKey(crypto.FromECDSA(key))
		if err != nil {
			t.Fatal(err)
		}
		listen, _ := ma.NewMultiaddr("/ip4/127.0.0.1/tcp/0")
		host, err := p2p.New(p2p.Config{
			PrivKey: lk, ListenAddrs: []ma.Multiaddr{listen}, Network: "relaytest",
			HeartbeatInterval: time.Hour, DialTimeout: 5 * time.Second,
			BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		n := &testNode{name: name, key: key, addr: crypto.PubkeyToAddress(key.PublicKey), host: host,
			transport: &filterTransport{Transport: host}}
		cfg := Config{
			Key:        key,
			Transport:  n.transport,
			Replay:     NewMemoryReplay(),
			Deliver:    func(r Received) { n.mu.Lock(); n.delivered = append(n.delivered, r); n.mu.Unlock() },
			Registerer: prometheus.NewRegistry(),
		}
		if opts.channels != nil {
			n.db, err = store.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			n.ledger, err = ledger.New(ledger.Config{Key: key, ChainID: testChainID, Contract: testContract,
				Channels: opts.channels, Store: n.db})
			if err != nil {
				t.Fatal(err)
			}
			n.payments = &recorder{Payments: n.ledger, split: n.ledger}
			cfg.Payments = n.payments
			if opts.unsplit {
				cfg.Payments = unsplitPayments{n.payments}
			}
		}
		if opts.edit != nil {
			opts.edit(name, &cfg)
		}
		n.relay, err = New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.relay.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: Run: %v", name, err)
			}
			if err := host.Close(); err != nil {
				t.Errorf("%s: Close: %v", name, err)
			}
			if n.db != nil {
				n.db.Close()
			}
		})
		nodes[name] = n
		all = append(all, n)
	}
	for _, a := range all {
		for _, b := range all {
			if a == b {
				continue
			}
			infos, err := peer.AddrInfosFromP2pAddrs(b.host.Addrs()...)
			if err != nil || len(infos) != 1 {
				t.Fatalf("addr info: %v", err)
			}
			if err := a.host.AddPeer(infos[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Run registers the handlers; wait until every relay runs.
	for _, n := range all {
		eventually(t, 5*time.Second, n.name+" running", n.relay.running.Load)
	}
	return nodes
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, timeout, what)
}

func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func dropped(n *testNode, reason string) float64 {
	return counter(n.relay.m.dropped.WithLabelValues(reason))
}

func ackDropped(n *testNode, reason string) float64 {
	return counter(n.relay.m.acksDropped.WithLabelValues(reason))
}

func ids(ns ...*testNode) []peer.ID {
	out := make([]peer.ID, len(ns))
	for i, n := range ns {
		out[i] = n.id()
	}
	return out
}

func waitAck(t *testing.T, n *testNode, a por.AckChallenge) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := n.relay.WaitAck(ctx, a); err != nil {
		t.Fatalf("WaitAck: %v", err)
	}
}

func newKeyPair(t testing.TB) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey)
}

// opens reports whether address(response·G) == challenge, the contract's proof-of-relay check.
func opens(response [32]byte, challenge [20]byte) bool {
	c, err := por.ChallengeOf(por.Scalar(response))
	return err == nil && c == por.Challenge(challenge)
}
