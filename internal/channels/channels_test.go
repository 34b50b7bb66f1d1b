package channels

import (
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func addr(n byte) common.Address { return common.Address{19: n} }

func ch(src, dst byte, balance int64, status Status) Channel {
	return Channel{
		ID: IDOf(addr(src), addr(dst)), Source: addr(src), Destination: addr(dst),
		Balance: big.NewInt(balance), Epoch: 1, Status: status,
	}
}

func TestStatusString(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		want string
	}{{Closed, "Closed"}, {Open, "Open"}, {PendingToClose, "PendingToClose"}, {Status(7), "Status(7)"}} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%d.String() = %q, want %q", uint8(tc.s), got, tc.want)
		}
		if tc.s.Valid() != (tc.want[0] != 'S') {
			t.Errorf("%v.Valid() = %v", tc.s, tc.s.Valid())
		}
	}
}

func TestIDOfMatchesContract(t *testing.T) {
	// keccak256(abi.encodePacked(0x…01, 0x…02)), as the contract's channelIdOf computes it.
	want := crypto.Keccak256Hash(append(addr(1).Bytes(), addr(2).Bytes()...))
	if IDOf(addr(1), addr(2)) != want {
		t.Fatal("IDOf differs from keccak256(src ‖ dst)")
	}
	if IDOf(addr(1), addr(2)) == IDOf(addr(2), addr(1)) {
		t.Fatal("channel ids must be directional")
	}
}

func TestUsable(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Channel
		want bool
	}{
		{"open funded", ch(1, 2, 5, Open), true},
		{"open depleted", ch(1, 2, 0, Open), false},
		{"pending", ch(1, 2, 5, PendingToClose), false},
		{"closed", ch(1, 2, 0, Closed), false},
		{"nil balance", Channel{Status: Open}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Usable(); got != tc.want {
				t.Fatalf("Usable() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGraphLookups(t *testing.T) {
	g := NewGraph()
	g.Apply(ch(1, 2, 10, Open))
	g.Apply(ch(1, 3, 20, Open))
	g.Apply(ch(2, 3, 30, Open))
	g.Apply(ch(3, 1, 0, Closed))
	g.Apply(ch(1, 2, 7, PendingToClose)) // update, not a new channel

	tests := []struct {
		name string
		got  []Channel
		want []string
	}{
		{"outgoing 1", g.Outgoing(addr(1)), []string{"1→2 7 PendingToClose", "1→3 20 Open"}},
		{"outgoing 3", g.Outgoing(addr(3)), []string{"3→1 0 Closed"}},
		{"incoming 3", g.Incoming(addr(3)), []string{"1→3 20 Open", "2→3 30 Open"}},
		{"incoming 9", g.Incoming(addr(9)), nil},
		{"all", g.Snapshot().Channels(), []string{"1→2 7 PendingToClose", "1→3 20 Open", "2→3 30 Open", "3→1 0 Closed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range tc.got {
				got = append(got, fmt.Sprintf("%d→%d %v %v", c.Source[19], c.Destination[19], c.Balance, c.Status))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	c, ok := g.Channel(addr(2), addr(3))
	if !ok || c.Balance.Int64() != 30 {
		t.Fatalf("Channel(2,3) = %+v, %v", c, ok)
	}
	if _, ok := g.Channel(addr(3), addr(2)); ok {
		t.Fatal("Channel(3,2) found, never applied")
	}
	if c, ok := g.ByID(IDOf(addr(1), addr(3))); !ok || c.Balance.Int64() != 20 {
		t.Fatalf("ByID(1→3) = %+v, %v", c, ok)
	}
}

func TestGraphReturnsCopies(t *testing.T) {
	g := NewGraph()
	in := ch(1, 2, 10, Open)
	g.Apply(in)
	in.Balance.SetInt64(99) // the caller's value changes after Apply
	c, _ := g.Channel(addr(1), addr(2))
	c.Balance.SetInt64(42) // and the returned value is mutated
	again, _ := g.Channel(addr(1), addr(2))
	if again.Balance.Int64() != 10 {
		t.Fatalf("balance %v, want 10: the graph shares memory with its callers", again.Balance)
	}
	a := Announcement{Account: addr(1), PublicKey: []byte{2, 3}, Multiaddrs: []string{"/ip4/1.2.3.4/tcp/1"}}
	g.Announce(a)
	a.PublicKey[0], a.Multiaddrs[0] = 9, "x"
	got, _ := g.Announced(addr(1))
	if got.PublicKey[0] != 2 || got.Multiaddrs[0] != "/ip4/1.2.3.4/tcp/1" {
		t.Fatalf("announcement %+v shares memory with the caller", got)
	}
}

func TestSnapshotIsImmutable(t *testing.T) {
	g := NewGraph()
	g.Apply(ch(1, 2, 10, Open))
	s := g.Snapshot()
	g.Apply(ch(1, 2, 5, Open))
	g.Apply(ch(1, 3, 5, Open))
	g.Announce(Announcement{Account: addr(1)})
	if c, _ := s.Channel(addr(1), addr(2)); c.Balance.Int64() != 10 {
		t.Fatalf("snapshot changed: balance %v", c.Balance)
	}
	if n := len(s.Outgoing(addr(1))); n != 1 {
		t.Fatalf("snapshot has %d outgoing channels, want 1", n)
	}
	if len(s.Peers()) != 0 {
		t.Fatal("snapshot sees a later announcement")
	}
	g.Reset()
	if len(g.Snapshot().Channels()) != 0 || len(s.Channels()) != 2-1 {
		t.Fatal("Reset must empty the graph and leave older snapshots alone")
	}
}

func TestAnnouncementsLatestWins(t *testing.T) {
	g := NewGraph()
	g.Announce(Announcement{Account: addr(2), Multiaddrs: []string{"/a"}})
	g.Announce(Announcement{Account: addr(1), Multiaddrs: []string{"/b"}})
	g.Announce(Announcement{Account: addr(2), Multiaddrs: []string{"/c"}})
	peers := g.Peers()
	if len(peers) != 2 || peers[0].Account != addr(1) || peers[1].Multiaddrs[0] != "/c" {
		t.Fatalf("peers %+v", peers)
	}
	if _, ok := g.Announced(addr(3)); ok {
		t.Fatal("unknown account announced")
	}
}

// TestApplyAllAtomic checks that a reader never sees half of a batch: the writer moves a balance
// between two channels in one ApplyAll, so their sum is constant in every snapshot.
func TestApplyAllAtomic(t *testing.T) {
	g := NewGraph()
	g.ApplyAll([]Channel{ch(1, 2, 100, Open), ch(1, 3, 0, Open)}, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); i <= 100; i++ {
			g.ApplyAll([]Channel{ch(1, 2, 100-i, Open), ch(1, 3, i, Open)}, nil)
		}
		close(stop)
	}()
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		s := g.Snapshot()
		a, _ := s.Channel(addr(1), addr(2))
		b, _ := s.Channel(addr(1), addr(3))
		if sum := new(big.Int).Add(a.Balance, b.Balance); sum.Int64() != 100 {
			t.Fatalf("torn snapshot: %v + %v", a.Balance, b.Balance)
		}
	}
	wg.Wait()
}

func TestPublicKeyFromContract(t *testing.T) {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("channels test")))
	if err != nil {
		t.Fatal(err)
	}
	xy := crypto.FromECDSAPub(&key.PublicKey)[1:]
	got, err := PublicKeyFromContract(xy)
	if err != nil {
		t.Fatal(err)
	}
	if want := crypto.CompressPubkey(&key.PublicKey); string(got) != string(want) {
		t.Fatalf("compressed %x, want %x", got, want)
	}
	bad := append([]byte(nil), xy...)
	bad[63] ^= 1 // off the curve
	for name, in := range map[string][]byte{"short": xy[:63], "long": append(xy, 0), "off curve": bad} {
		if _, err := PublicKeyFromContract(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMultiaddrs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/ip4/127.0.0.1/tcp/9091", []string{"/ip4/127.0.0.1/tcp/9091"}},
		{"/ip4/127.0.0.1/tcp/1 /ip4/127.0.0.1/udp/1/quic-v1", []string{"/ip4/127.0.0.1/tcp/1", "/ip4/127.0.0.1/udp/1/quic-v1"}},
		{"", nil},
		{"ip4/1", nil},
		{"\xff\x00", nil},
	} {
		if got := DecodeMultiaddrs([]byte(tc.in)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("DecodeMultiaddrs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	addrs := []string{"/ip4/1.2.3.4/tcp/5", "/ip4/1.2.3.4/udp/5/quic-v1"}
	if got := DecodeMultiaddrs(EncodeMultiaddrs(addrs)); fmt.Sprint(got) != fmt.Sprint(addrs) {
		t.Fatalf("round trip %q", got)
	}
}

func TestChannelEqual(t *testing.T) {
	a := ch(1, 2, 5, PendingToClose)
	a.ClosureTime = time.Unix(100, 0)
	b := a.Clone()
	if !a.Equal(b) {
		t.Fatal("clone differs")
	}
	b.TicketIndex++
	if a.Equal(b) {
		t.Fatal("different ticket index compares equal")
	}
}
