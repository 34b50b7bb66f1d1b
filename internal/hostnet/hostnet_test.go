package hostnet

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

func TestHostAddr(t *testing.T) {
	for _, c := range []struct {
		i    int
		want string
	}{{1, "10.77.0.2"}, {253, "10.77.0.254"}, {254, "10.77.1.1"}, {507, "10.77.1.254"}, {508, "10.77.2.1"}} {
		if got := hostAddr(77, c.i); got != netip.MustParseAddr(c.want) {
			t.Errorf("host %d: %s, want %s", c.i, got, c.want)
		}
	}
}

func TestOwnedNames(t *testing.T) {
	for name, want := range map[string]bool{
		"rlyd0": true, "rlyd-v12": true, "rlyd-n3p": true, "rlyd-r3p": true,
		"rlyd1": false, "rlydx": false, "eth0": false, "docker0": false, "rly-v1": false,
	} {
		if got := owned("rlyd", name); got != want {
			t.Errorf("owned(rlyd, %q) = %v, want %v", name, got, want)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Prefix: "toolong"}, {Prefix: "a-b"}, {Octet: 300}} {
		if _, err := Create(1, o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("Create(1, %+v): %v, want ErrBadOptions", o, err)
		}
	}
	if _, err := Create(0, Options{}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("Create(0): %v, want ErrBadOptions", err)
	}
}

// needRoot skips a test that creates namespaces when the process is not root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creates network namespaces: needs root")
	}
}

// TestHostsReachEachOtherAndTheBridge: hosts dial each other's addresses and the bridge's, a
// second Create over what a killed run left works, and Close leaves nothing of the prefix.
func TestHostsReachEachOtherAndTheBridge(t *testing.T) {
	needRoot(t)
	const prefix = "rlyht" // not the default: a cluster may run beside the tests
	opts := Options{Prefix: prefix, Octet: 78, LinkRate: "8mbit"}
	if _, err := Create(2, opts); err != nil { // as a run killed before its Close
		t.Fatal(err)
	}
	nw, err := Create(3, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	hosts := nw.Hosts()
	if len(hosts) != 3 || hosts[0].Addr != netip.MustParseAddr("10.78.0.2") || nw.BridgeAddr() != netip.MustParseAddr("10.78.0.1") {
		t.Fatalf("hosts %+v, bridge %s", hosts, nw.BridgeAddr())
	}

	// An echo server in host 1, and one in the initial namespace on the bridge address.
	var inHost net.Listener
	if err := hosts[0].Do(func() (err error) {
		inHost, err = net.Listen("tcp", netip.AddrPortFrom(hosts[0].Addr, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	onBridge, err := net.Listen("tcp", netip.AddrPortFrom(nw.BridgeAddr(), 0).String())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []net.Listener{inHost, onBridge} {
		t.Cleanup(func() { l.Close() })
		go echo(l)
	}
	for _, from := range hosts[1:] {
		for _, l := range []net.Listener{inHost, onBridge} {
			var c net.Conn
			if err := from.Do(func() (err error) {
				c, err = net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
				return err
			}); err != nil {
				t.Fatalf("host %d dials %s: %v", from.Index, l.Addr(), err)
			}
			roundTrip(t, c)
		}
	}
	// Host 1's address is not on the initial namespace's loopback: nothing listens there.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+portOf(inHost), time.Second); err == nil {
		c.Close()
		t.Fatal("host 1's listener answered on the initial namespace's loopback")
	}
	// Both ends of each link are shaped.
	for _, h := range hosts {
		link, err := netlink.LinkByName(nw.vethName(h.Index))
		if err != nil {
			t.Fatal(err)
		}
		qd, err := netlink.QdiscList(link)
		if err != nil {
			t.Fatal(err)
		}
		if len(qd) == 0 || qd[0].Type() != "tbf" {
			t.Fatalf("host %d's link has qdiscs %v, want tbf", h.Index, qd)
		}
	}

	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, prefix) {
			t.Errorf("link %s left after Close", l.Attrs().Name)
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			t.Errorf("namespace %s left after Close", e.Name())
		}
	}
}

func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil {
				c.Write([]byte(line))
			}
		}()
	}
}

func roundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "ping\n" {
		t.Fatalf("echo %q, %v", got, err)
	}
}

func portOf(l net.Listener) string {
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
