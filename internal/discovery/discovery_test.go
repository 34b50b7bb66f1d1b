package discovery

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

type fakeHost struct {
	mu        sync.Mutex
	added     []peer.AddrInfo
	addrs     []ma.Multiaddr
	addrCalls int
}

func (h *fakeHost) AddPeer(info peer.AddrInfo) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = append(h.added, info)
	return nil
}
func (h *fakeHost) Addrs() []ma.Multiaddr {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addrCalls++
	return slices.Clone(h.addrs)
}

// looks is how often Addrs was called.
func (h *fakeHost) looks() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addrCalls
}
func (h *fakeHost) Peers() []peers.Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []peers.Info
	for i, a := range h.added {
		info := peers.Info{ID: a.ID, Addrs: a.Addrs, Quality: 0.5, Connected: i == 0}
		if info.Connected {
			info.Reach = peers.ReachRelayed
		}
		out = append(out, info)
	}
	return out
}
func (h *fakeHost) ids() []peer.ID {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []peer.ID
	for _, a := range h.added {
		out = append(out, a.ID)
	}
	return out
}

type fakeChain struct {
	mu        sync.Mutex
	balance   *big.Int
	announced [][]string
}

func (c *fakeChain) NativeBalance(context.Context, common.Address) (*big.Int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return new(big.Int).Set(c.balance), nil
}
func (c *fakeChain) Announce(_ context.Context, addrs []string) (common.Hash, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.announced = append(c.announced, addrs)
	return common.Hash{1}, nil
}
func (c *fakeChain) fund() { c.mu.Lock(); c.balance = big.NewInt(1); c.mu.Unlock() }
func (c *fakeChain) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.announced)
}

type fakeGraph map[common.Address]channels.Announcement

func (g fakeGraph) Peers() []channels.Announcement {
	var out []channels.Announcement
	for _, a := range g {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b channels.Announcement) int { return bytes.Compare(a.Account[:], b.Account[:]) })
	return out
}
func (g fakeGraph) Announced(a common.Address) (channels.Announcement, bool) {
	v, ok := g[a]
	return v, ok
}
func (g fakeGraph) Incoming(common.Address) []channels.Channel { return nil }
func (g fakeGraph) Outgoing(common.Address) []channels.Channel { return nil }

type noAliases struct{}

func (noAliases) Aliases() ([][2]string, error)      { return nil, nil }
func (noAliases) Alias(string) (string, bool, error) { return "", false, nil }
func (noAliases) SetAlias(string, string) error      { return nil }
func (noAliases) DeleteAlias(string) (bool, error)   { return false, nil }

// node is a fresh identity announced at a loopback address.
func node(t *testing.T, port string) (peer.ID, channels.Announcement) {
	t.Helper()
	k, _ := crypto.GenerateKey()
	pub := crypto.CompressPubkey(&k.PublicKey)
	id, err := identity.PeerIDFromPubKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id, channels.Announcement{Account: crypto.PubkeyToAddress(k.PublicKey), PublicKey: pub,
		Multiaddrs: []string{"/ip4/127.0.0.1/tcp/" + port + "/p2p/" + id.String()}}
}

func TestDiscovery(t *testing.T) {
	self, selfAnn := node(t, "1")
	bob, bobAnn := node(t, "2")
	carol, carolAnn := node(t, "3")
	static, _ := node(t, "4")
	dir, _ := peers.New(peers.Config{Self: self, Aliases: noAliases{}})
	host := &fakeHost{addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1")}}
	ch := &fakeChain{balance: new(big.Int)}
	graph := fakeGraph{selfAnn.Account: selfAnn, bobAnn.Account: bobAnn}
	var logs testlog.Buffer
	reg := prometheus.NewRegistry()
	d, err := New(Config{Host: host, Directory: dir, Chain: ch, Graph: graph, CaughtUp: func(context.Context) error { return nil },
		StaticPeers:   []string{"/ip4/127.0.0.1/tcp/4/p2p/" + static.String()},
		AnnounceRetry: chain.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond},
		Logger:        slog.New(slog.NewTextHandler(&logs, nil)), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	if got := host.ids(); !slices.Equal(got, []peer.ID{static, bob}) {
		t.Fatalf("peers after Start: %v, want the static peer and bob (not this node)", got)
	}
	d.OnEvent(chain.Event{Kind: chain.AnnouncementEvent, Announcement: carolAnn})
	d.OnEvent(chain.Event{Kind: chain.AnnouncementEvent, Announcement: channels.Announcement{Account: common.Address{9}, PublicKey: carolAnn.PublicKey}})
	if got := host.ids(); len(got) != 3 || got[2] != carol {
		t.Fatalf("peers after carol's announcement: %v (an announcement without addresses is ignored)", got)
	}

	// Unfunded: it says so once, then announces once funded.
	done := make(chan struct{})
	go func() { d.Run(t.Context()); close(done) }()
	wait.For(t, func() bool { return strings.Contains(logs.String(), "node is not funded") }, 5*time.Second, "the not-funded warning")
	if ch.calls() != 0 {
		t.Fatal("announced without funds")
	}
	ch.fund()
	<-done
	if ch.calls() != 1 || ch.announced[0][0] != "/ip4/127.0.0.1/tcp/1" || strings.Count(logs.String(), "not funded") != 1 {
		t.Fatalf("announcements %v; log:\n%s", ch.announced, logs.String())
	}
	// Already announced with the same addresses: nothing sent.
	graph[selfAnn.Account] = channels.Announcement{Account: selfAnn.Account, PublicKey: selfAnn.PublicKey, Multiaddrs: []string{"/ip4/127.0.0.1/tcp/1"}}
	if d.Run(t.Context()); ch.calls() != 1 {
		t.Fatal("announced again")
	}

	entries := d.EntryNodes()
	if len(entries) != 2 || len(entries[static]) != 1 || len(entries[bob]) != 1 {
		t.Fatalf("entry nodes %v: the static peer and bob, not this node", entries)
	}
	ann, obs := d.PeerAddresses(bob)
	if len(ann) != 1 || len(obs) != 1 {
		t.Fatalf("bob's addresses: %v, %v", ann, obs)
	}
	if ann, obs := d.PeerAddresses(carol); len(ann) != 0 || len(obs) != 1 {
		t.Fatalf("carol (not in the graph) %v, %v", ann, obs)
	}
	bobAddr, _ := identity.AddressOf(bob)
	if q := d.Qualities(); q[bobAddr] != 0.5 {
		t.Fatalf("qualities %v", q)
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 2 || mfs[1].GetName() != "relayd_peers" || len(mfs[1].GetMetric()) != 6 {
		t.Fatalf("relayd_peers: %v, %v", mfs, err)
	}
	if mfs[0].GetName() != "relayd_channel_peers" || len(mfs[0].GetMetric()) != 2 {
		t.Fatalf("relayd_channel_peers: %v", mfs[0])
	}
	mfs = mfs[1:]
	for _, m := range mfs[0].GetMetric() {
		want := map[string]float64{"known": 3, "connected": 1, "announced": 2, "relayed": 1}[m.GetLabel()[0].GetValue()]
		if m.GetGauge().GetValue() != want {
			t.Errorf("relayd_peers{state=%q} = %v, want %v", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue(), want)
		}
	}
}

func TestBadStaticPeer(t *testing.T) {
	self, _ := node(t, "1")
	dir, _ := peers.New(peers.Config{Self: self, Aliases: noAliases{}})
	_, err := New(Config{Host: &fakeHost{}, Directory: dir, StaticPeers: []string{"/ip4/127.0.0.1/tcp/1"}})
	if !errors.Is(err, ErrBadPeer) {
		t.Fatalf("a static peer without /p2p/: %v", err)
	}
	d, err := New(Config{Host: &fakeHost{}, Directory: dir})
	if err != nil || d.Run(t.Context()) != nil || d.Start() != nil {
		t.Fatal("a node without a chain")
	}
}
