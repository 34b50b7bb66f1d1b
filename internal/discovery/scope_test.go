package discovery

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

func TestScopeAllows(t *testing.T) {
	const relay = "/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u/p2p-circuit"
	for _, tc := range []struct {
		addr                   string
		local, private, public bool
	}{
		{"/ip4/127.0.0.1/tcp/9091", true, false, false},
		{"/ip6/::1/udp/9091/quic-v1", true, false, false},
		{"/ip4/169.254.3.4/tcp/9091", true, false, false},
		{"/ip6/fe80::1/tcp/9091", true, false, false},
		{"/ip4/0.0.0.0/tcp/9091", true, false, false},
		{"/ip4/10.77.0.2/tcp/9091", true, true, false},
		{"/ip4/192.168.1.20/udp/9091/quic-v1", true, true, false},
		{"/ip4/100.64.1.1/tcp/9091", true, true, false},
		{"/ip6/fd00::5/tcp/9091", true, true, false},
		{"/ip4/203.0.113.7/tcp/9091", true, true, false}, // documentation range: not routable
		{"/ip4/11.77.0.2/tcp/9091", true, true, true},
		{"/ip6/2a01:4f8::1/tcp/9091", true, true, true},
		{"/dns/relay.example.org/tcp/9091", true, true, true},
		{"/dns/box.local/tcp/9091", true, true, false},
		{"/ip4/11.77.0.2/tcp/9091" + relay, true, true, true},
		{"/ip4/10.77.0.2/tcp/9091" + relay, true, true, false},
	} {
		a := ma.StringCast(tc.addr)
		for _, c := range []struct {
			s    Scope
			want bool
		}{{ScopeLocal, tc.local}, {ScopePrivate, tc.private}, {ScopePublic, tc.public}} {
			if got := c.s.Allows(a); got != c.want {
				t.Errorf("%s allows %s: %v, want %v", c.s, tc.addr, got, c.want)
			}
		}
	}
	if ScopeFor("local", false) != ScopeLocal || ScopeFor("mainnet", true) != ScopePrivate || ScopeFor("mainnet", false) != ScopePublic {
		t.Error("ScopeFor")
	}
}

// TestAnnounceChoice: --announce goes on chain exactly; without it a public node waits until the
// host has an address others can reach (here: its relay reservation) and announces only that.
func TestAnnounceChoice(t *testing.T) {
	self, _ := node(t, "1")
	dir, _ := peers.New(peers.Config{Self: self, Aliases: noAliases{}})
	retry := chain.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond}
	caughtUp := func(context.Context) error { return nil }

	ch := &fakeChain{balance: big.NewInt(1)}
	host := &fakeHost{addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1")}}
	d, err := New(Config{Host: host, Directory: dir, Chain: ch, Graph: fakeGraph{}, CaughtUp: caughtUp, AnnounceRetry: retry,
		Announce: []string{"/ip4/11.0.0.1/tcp/9091", "/dns/node.example.org/udp/9091/quic-v1/p2p/" + self.String()}})
	if err != nil {
		t.Fatal(err)
	}
	d.Run(t.Context())
	want := []string{"/ip4/11.0.0.1/tcp/9091/p2p/" + self.String(), "/dns/node.example.org/udp/9091/quic-v1/p2p/" + self.String()}
	if ch.calls() != 1 || !slices.Equal(ch.announced[0], want) {
		t.Fatalf("announced %v, want exactly %v", ch.announced, want)
	}

	other, _ := node(t, "2")
	for _, bad := range []string{"not a multiaddr", "/ip4/11.0.0.1/tcp/1/p2p/" + other.String(), "/p2p/" + self.String()} {
		if _, err := New(Config{Host: host, Directory: dir, Announce: []string{bad}}); !errors.Is(err, ErrBadAnnounce) {
			t.Errorf("announce %q: %v, want ErrBadAnnounce", bad, err)
		}
	}

	ch = &fakeChain{balance: big.NewInt(1)}
	host = &fakeHost{addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1"), ma.StringCast("/ip4/192.168.1.2/tcp/1")}}
	var logs testlog.Buffer
	d, err = New(Config{Host: host, Directory: dir, Chain: ch, Graph: fakeGraph{}, CaughtUp: caughtUp, AnnounceRetry: retry,
		Scope: ScopePublic, AnnounceCheck: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	wait.For(t, func() bool { return strings.Contains(logs.String(), "no address others can reach yet") }, 5*time.Second, "the no-address warning")
	if ch.calls() != 0 {
		t.Fatal("announced private addresses on a public network")
	}
	relay := func(ip string) string {
		return "/ip4/" + ip + "/tcp/9091/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u/p2p-circuit/p2p/" + self.String()
	}
	setAddrs := func(ss ...string) {
		host.mu.Lock()
		defer host.mu.Unlock()
		host.addrs = host.addrs[:2]
		for _, s := range ss {
			host.addrs = append(host.addrs, ma.StringCast(s))
		}
	}
	setAddrs(relay("11.0.0.1"))
	wait.For(t, func() bool { return ch.calls() == 1 }, 5*time.Second, "the announcement")
	if !slices.Equal(ch.announced[0], []string{relay("11.0.0.1")}) {
		t.Fatalf("announced %v, want only the relay address", ch.announced)
	}

	// One of the announced addresses is still the host's: nothing is announced again.
	setAddrs(relay("11.0.0.1"), relay("11.0.0.2"))
	looked := host.looks()
	wait.For(t, func() bool { return host.looks() >= looked+3 }, 5*time.Second, "three more checks")
	if ch.calls() != 1 {
		t.Fatalf("announced again while an announced address held: %v", ch.announced)
	}
	// None is: the current ones are announced.
	setAddrs(relay("11.0.0.3"))
	wait.For(t, func() bool { return ch.calls() == 2 }, 5*time.Second, "the announcement of the new relay address")
	if !slices.Equal(ch.announced[1], []string{relay("11.0.0.3")}) {
		t.Fatalf("announced %v, want the new relay address", ch.announced)
	}
	cancel()
	<-done
}

func TestScopeOfNode(t *testing.T) {
	for _, tc := range []struct {
		listen, network string
		private         bool
		want            Scope
	}{
		{"127.0.0.1:9091", "mainnet", false, ScopeLocal}, // reached from this machine only
		{"localhost:0", "mainnet", false, ScopeLocal},
		{"[::1]:9091", "mainnet", false, ScopeLocal},
		{"0.0.0.0:9091", "mainnet", false, ScopePublic},
		{"0.0.0.0:9091", "mainnet", true, ScopePrivate},
		{"10.0.0.5:9091", "local", false, ScopeLocal},
		{"203.0.113.7:9091", "mainnet", false, ScopePublic},
	} {
		if got := ScopeOfNode(tc.listen, tc.network, tc.private); got != tc.want {
			t.Errorf("ScopeOfNode(%q, %q, %v) = %s, want %s", tc.listen, tc.network, tc.private, got, tc.want)
		}
	}
}

// privateHost is a host AutoNAT found not reachable (behind a NAT).
type privateHost struct{ fakeHost }

func (*privateHost) Reachability() network.Reachability { return network.ReachabilityPrivate }

// TestPrivateHostAnnouncesRelayAddrsOnly: a host behind a NAT learns the public address others
// see it from (its router's), which drops their connections: it announces its relay addresses
// only; a host that is not known to be private announces both.
func TestPrivateHostAnnouncesRelayAddrsOnly(t *testing.T) {
	self, _ := node(t, "1")
	dir, _ := peers.New(peers.Config{Self: self, Aliases: noAliases{}})
	observed := "/ip4/11.82.0.9/tcp/9091/p2p/" + self.String()
	relay := "/ip4/11.82.0.1/tcp/9091/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u/p2p-circuit/p2p/" + self.String()
	addrs := []ma.Multiaddr{ma.StringCast(observed), ma.StringCast(relay)}
	for _, tc := range []struct {
		host  Host
		scope Scope
		want  []string
	}{
		{&privateHost{fakeHost{addrs: addrs}}, ScopePublic, []string{relay}},
		{&fakeHost{addrs: addrs}, ScopePublic, []string{observed, relay}},
		{&privateHost{fakeHost{addrs: addrs}}, ScopeLocal, []string{observed, relay}}, // one machine
	} {
		d, err := New(Config{Host: tc.host, Directory: dir, Scope: tc.scope})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.AnnounceAddrs(); !slices.Equal(got, tc.want) {
			t.Errorf("%T announces %v, want %v", tc.host, got, tc.want)
		}
	}
}
