package peers

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
)

// memAliases is an AliasStore in memory.
type memAliases map[string]string

func (m memAliases) Aliases() ([][2]string, error) {
	var out [][2]string
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out, nil
}
func (m memAliases) Alias(a string) (string, bool, error) { v, ok := m[a]; return v, ok, nil }
func (m memAliases) SetAlias(a, id string) error          { m[a] = id; return nil }
func (m memAliases) DeleteAlias(a string) (bool, error) {
	_, ok := m[a]
	delete(m, a)
	return ok, nil
}

// announced is an Announcements in memory.
type announced map[common.Address]channels.Announcement

func (m announced) Announced(a common.Address) (channels.Announcement, bool) {
	v, ok := m[a]
	return v, ok
}

// node is a fresh identity: its PeerId, address and announcement.
func node(t *testing.T) (peer.ID, common.Address, channels.Announcement) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub := crypto.CompressPubkey(&k.PublicKey)
	id, err := identity.PeerIDFromPubKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	addr := crypto.PubkeyToAddress(k.PublicKey)
	return id, addr, channels.Announcement{Account: addr, PublicKey: pub}
}

func TestResolveAndAliases(t *testing.T) {
	self, _, _ := node(t)
	bob, _, _ := node(t)
	store := memAliases{"old": "not-a-peer-id"}
	d, err := New(Config{Self: self, Aliases: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetAlias("bob", bob); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]peer.ID{"me": self, bob.String(): bob, "bob": bob} {
		if got, err := d.Resolve(name); err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", name, got, err, want)
		}
	}
	for _, name := range []string{"carol", "", "old", "a b", strings.Repeat("x", 65), "16Uiu2HAmXYZ"} {
		if _, err := d.Resolve(name); !errors.Is(err, ErrUnknownName) {
			t.Errorf("Resolve(%q) = %v, want ErrUnknownName", name, err)
		}
	}
	// An alias shaped like a PeerId can never be set; a stored one never shadows the PeerId.
	store[bob.String()] = self.String()
	if got, _ := d.Resolve(bob.String()); got != bob {
		t.Errorf("a stored alias spelt like bob's PeerId resolved to %s", got)
	}
	delete(store, bob.String())
	for _, bad := range []string{"me", "", "with space", strings.Repeat("x", 65), bob.String(), "tab\t", "bell\a"} {
		if err := d.SetAlias(bad, bob); !errors.Is(err, ErrInvalidAlias) {
			t.Errorf("SetAlias(%q) = %v, want ErrInvalidAlias", bad, err)
		}
	}
	list, err := d.Aliases()
	if err != nil || len(list) != 1 || list[0] != (Alias{Name: "bob", Peer: bob}) {
		t.Fatalf("Aliases() = %v, %v (an alias whose peer does not parse is left out)", list, err)
	}
	if err := d.DeleteAlias("carol"); !errors.Is(err, ErrAliasNotFound) {
		t.Errorf("DeleteAlias(carol) = %v", err)
	}
	if err := d.DeleteAlias("me"); !errors.Is(err, ErrInvalidAlias) {
		t.Errorf("DeleteAlias(me) = %v", err)
	}
	if err := d.DeleteAlias("bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Resolve("bob"); !errors.Is(err, ErrUnknownName) {
		t.Errorf("a deleted alias still resolves: %v", err)
	}
}

func TestNamesAndAddresses(t *testing.T) {
	self, selfAddr, _ := node(t)
	bob, bobAddr, bobAnn := node(t)
	_, carolAddr, _ := node(t)
	d, err := New(Config{Self: self, Aliases: memAliases{}, Announcements: announced{bobAddr: bobAnn}})
	if err != nil {
		t.Fatal(err)
	}
	if d.SelfAddress() != selfAddr || d.Self() != self {
		t.Fatal("self")
	}
	for range 2 { // the second round reads the caches
		if a, err := d.AddressOf(bob); err != nil || a != bobAddr {
			t.Fatalf("AddressOf(bob) = %s, %v", a, err)
		}
		if id, err := d.PeerIDOf(bobAnn); err != nil || id != bob {
			t.Fatalf("PeerIDOf(bob's announcement) = %s, %v", id, err)
		}
	}
	if d.Name(bobAddr) != bob.String() || d.Name(carolAddr) != carolAddr.Hex() || d.Name(selfAddr) != self.String() {
		t.Errorf("names: %s, %s, %s", d.Name(bobAddr), d.Name(carolAddr), d.Name(selfAddr))
	}
	if _, err := d.PeerOf(carolAddr); !errors.Is(err, ErrNotAnnounced) {
		t.Errorf("PeerOf(carol) = %v", err)
	}
	noChain, _ := New(Config{Self: self, Aliases: memAliases{}})
	if noChain.Name(bobAddr) != bobAddr.Hex() {
		t.Error("a node without a chain knows no announcement")
	}
}

// FuzzResolve: any name either resolves to a secp256k1 PeerId or is ErrUnknownName; it never
// panics, and an alias that passes CheckAlias can be set and resolves to its peer.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"me", "bob", "", "16Uiu2HAmB", "\x00", "a b", strings.Repeat("é", 40)} {
		f.Add(s)
	}
	self, _, _ := node(&testing.T{})
	bob, _, _ := node(&testing.T{})
	f.Fuzz(func(t *testing.T, name string) {
		d, _ := New(Config{Self: self, Aliases: memAliases{}})
		id, err := d.Resolve(name)
		if err == nil {
			if _, perr := identity.PubKeyFromPeerID(id); perr != nil {
				t.Fatalf("Resolve(%q) = %s, not a secp256k1 PeerId", name, id)
			}
		} else if !errors.Is(err, ErrUnknownName) {
			t.Fatalf("Resolve(%q): %v", name, err)
		}
		if CheckAlias(name) == nil {
			if err := d.SetAlias(name, bob); err != nil {
				t.Fatal(err)
			}
			if got, err := d.Resolve(name); err != nil || got != bob {
				t.Fatalf("alias %q resolves to %s, %v", name, got, err)
			}
		}
	})
}

// TestParseCacheBounded: the memo of parsed PeerIds never holds more than its bound, whatever
// names clients send, and keeps what was last put.
func TestParseCacheBounded(t *testing.T) {
	c := &parseCache{max: 3}
	if _, ok := c.get("a"); ok {
		t.Fatal("empty memo has a")
	}
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		c.put(v, peer.ID(v+"-id"))
		if len(c.m) > c.max {
			t.Fatalf("after %d puts the memo holds %d", i+1, len(c.m))
		}
		if id, ok := c.get(v); !ok || id != peer.ID(v+"-id") {
			t.Fatalf("get(%q) = %q, %v", v, id, ok)
		}
	}
}

func TestRelayOnly(t *testing.T) {
	const relay = "/ip4/11.0.0.1/tcp/9091/p2p/16Uiu2HAmBxfB282VSUek5WPpQR7fFMG1RE8qFEraZXQakfBj7d4u/p2p-circuit/p2p/16Uiu2HAm3pKGr6v8ynToi6W8zFR4fP9qJZkgVuz1m3qR7Spyr51V"
	for _, c := range []struct {
		addrs []string
		want  bool
	}{
		{nil, false},
		{[]string{relay}, true},
		{[]string{relay, relay}, true},
		{[]string{relay, "/ip4/11.0.0.2/tcp/9091"}, false},
	} {
		if got := RelayOnly(channels.Announcement{Multiaddrs: c.addrs}); got != c.want {
			t.Errorf("RelayOnly(%v) = %v", c.addrs, got)
		}
	}
}
