package exit

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// ownPorts are the node's REST, admin and p2p ports in the tests.
var ownPorts = []uint16{3001, 3000, 9091}

// newPolicy is a Policy with the rules (which must parse) over cfg, the node's ports ownPorts.
func newPolicy(t *testing.T, cfg Config, rules ...string) *Policy {
	t.Helper()
	allow, err := ParseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allow = allow
	if cfg.OwnPorts == nil {
		cfg.OwnPorts = ownPorts
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheck: what a rule allows, and that names and * never open a forbidden address (loopback,
// private, link-local, unique-local, CGNAT, unspecified, multicast, broadcast, IPv4-mapped and
// embedded forms) nor an own port, while an address rule inside the forbidden block opens it and
// a rule naming the one port opens an own port.
func TestCheck(t *testing.T) {
	everything := []string{"*:*"}
	named := []string{"*.example.org:*", "10.0.0.0/8", "127.0.0.1:8080", "[fd00::/8]:443", "*:3000",
		"192.168.1.0/24:9091", "[64:ff9b::a00:0/104]:80"}
	var (
		ok        error
		notAllow  = ErrNotAllowed
		forbidden = ErrForbiddenAddress
		unres     = ErrUnresolvable
	)
	for _, tc := range []struct {
		rules []string
		host  string
		port  uint16
		want  error
		why   string // the refusal's detail, when it matters
	}{
		{nil, "203.0.113.7", 443, notAllow, "this node is not an exit"},
		{nil, "example.org", 443, notAllow, "this node is not an exit"},
		{everything, "203.0.113.7", 443, ok, ""},
		{everything, "8.8.8.8", 53, ok, ""},
		{everything, "172.32.0.1", 80, ok, ""}, // just past 172.16.0.0/12
		{everything, "100.128.0.1", 80, ok, ""},
		{everything, "2606:4700::1111", 443, ok, ""},
		{everything, "::ffff:8.8.8.8", 53, ok, ""},
		{everything, "64:ff9b::808:808", 53, ok, ""},
		{everything, "2002:808:808::1", 53, ok, ""},
		{everything, "example.org", 443, ok, ""},
		{everything, "10.1.2.3", 80, forbidden, "private"},
		{everything, "172.16.0.1", 80, forbidden, "private"},
		{everything, "172.31.255.255", 80, forbidden, "private"},
		{everything, "192.168.1.1", 80, forbidden, "private"},
		{everything, "127.0.0.1", 80, forbidden, "loopback"},
		{everything, "127.255.255.254", 80, forbidden, "loopback"},
		{everything, "169.254.169.254", 80, forbidden, "link-local"},
		{everything, "100.64.0.1", 80, forbidden, "shared address space (CGNAT)"},
		{everything, "0.0.0.0", 80, forbidden, "unspecified (this network)"},
		{everything, "0.1.2.3", 80, forbidden, "unspecified (this network)"},
		{everything, "224.0.0.1", 80, forbidden, "multicast"},
		{everything, "239.255.255.250", 1900, forbidden, "multicast"},
		{everything, "255.255.255.255", 80, forbidden, "reserved and broadcast"},
		{everything, "240.0.0.1", 80, forbidden, "reserved and broadcast"},
		{everything, "::1", 80, forbidden, "loopback"},
		{everything, "::", 80, forbidden, "unspecified"},
		{everything, "fe80::1", 80, forbidden, "link-local"},
		{everything, "fc00::1", 80, forbidden, "unique-local"},
		{everything, "fd12:3456::1", 80, forbidden, "unique-local"},
		{everything, "ff02::1", 80, forbidden, "multicast"},
		{everything, "fec0::1", 80, forbidden, "site-local (deprecated)"},
		{everything, "::ffff:127.0.0.1", 80, forbidden, "loopback"},
		{everything, "::ffff:10.0.0.1", 80, forbidden, "private"},
		{everything, "::127.0.0.1", 80, forbidden, "IPv4-compatible (deprecated)"},
		{everything, "64:ff9b::7f00:1", 80, forbidden, "loopback (embedded)"},
		{everything, "64:ff9b:1::1", 80, forbidden, "local-use NAT64"},
		{everything, "2002:7f00:1::1", 80, forbidden, "loopback (embedded)"},
		{everything, "2002:c0a8:101::1", 80, forbidden, "private (embedded)"},
		{everything, "203.0.113.7", 3001, forbidden, "a port of the node itself"},
		{everything, "example.org", 9091, forbidden, "a port of the node itself"},
		{everything, "fe80::1%eth0", 80, forbidden, "an address with a zone"},
		{everything, "exa mple.org", 80, unres, "not a host name"},
		{everything, "127.1", 80, unres, "not a host name"},
		{everything, "203.0.113.7", 0, notAllow, "port 0"},
		{[]string{"0.0.0.0/0"}, "10.0.0.1", 80, forbidden, "private"}, // a range wider than the block does not name it
		{[]string{"8.0.0.0/6"}, "10.0.0.1", 80, forbidden, "private"},
		{[]string{"0.0.0.0/0"}, "8.8.8.8", 80, ok, ""},
		{[]string{"10.0.0.0/16:80"}, "10.0.1.1", 80, ok, ""},
		{[]string{"10.0.0.0/16:80"}, "10.1.0.1", 80, forbidden, "private"},
		{[]string{"10.0.0.0/16:80"}, "10.0.1.1", 81, forbidden, "private"},
		{[]string{"*.example.org:443"}, "10.0.0.1", 443, forbidden, "private"},
		{[]string{"*.example.org:443"}, "203.0.113.7", 443, notAllow, "no exitAllow rule allows it"},
		{[]string{"*.example.org:443"}, "www.example.org", 443, ok, ""},
		{[]string{"*.example.org:443"}, "WWW.Example.org.", 443, ok, ""},
		{[]string{"*.example.org:443"}, "a.b.example.org", 443, ok, ""},
		{[]string{"*.example.org:443"}, "example.org", 443, notAllow, ""},
		{[]string{"*.example.org:443"}, "badexample.org", 443, notAllow, ""},
		{[]string{"*.example.org:443"}, "www.example.org", 80, notAllow, ""},
		{[]string{"example.org:8000-8100"}, "example.org", 8000, ok, ""},
		{[]string{"example.org:8000-8100"}, "example.org", 8100, ok, ""},
		{[]string{"example.org:8000-8100"}, "example.org", 8101, notAllow, ""},
		{[]string{"*:80"}, "203.0.113.7", 80, ok, ""},
		{[]string{"*:80"}, "anything.net", 80, ok, ""},
		{[]string{"*:80"}, "anything.net", 443, notAllow, ""},
		{[]string{"[2001:db8::/32]:443"}, "2001:db8::1", 443, ok, ""},
		{[]string{"[2001:db8::/32]:443"}, "2001:db9::1", 443, notAllow, ""},
		{named, "10.1.2.3", 80, ok, ""},
		{named, "10.1.2.3", 3001, forbidden, "a port of the node itself"},
		{named, "127.0.0.1", 8080, ok, ""},
		{named, "::ffff:127.0.0.1", 8080, ok, ""},
		{named, "127.0.0.1", 8081, forbidden, "loopback"},
		{named, "127.0.0.2", 8080, forbidden, "loopback"},
		{named, "fd00::1", 443, ok, ""},
		{named, "fd00::1", 80, forbidden, "unique-local"},
		{named, "fc00::1", 443, forbidden, "unique-local"},
		{named, "203.0.113.7", 3000, ok, ""},
		{named, "127.0.0.1", 3000, forbidden, "loopback"},
		{named, "192.168.1.5", 9091, ok, ""},
		{named, "192.168.2.5", 9091, forbidden, "private"},
		{named, "64:ff9b::a00:1", 80, ok, ""},
		{named, "64:ff9b::7f00:1", 80, forbidden, "loopback (embedded)"},
		{named, "203.0.113.7", 80, notAllow, "no exitAllow rule allows it"},
		{named, "www.example.org", 443, ok, ""},
		{named, "other.net", 443, ok, ""},                                        // 10.0.0.0/8 may allow what it resolves to
		{named, "www.example.org", 3001, forbidden, "a port of the node itself"}, // no rule names 3001
		{named, "other.net", 3000, ok, ""},
	} {
		name := strings.Join(tc.rules, ",") + " " + tc.host
		t.Run(name, func(t *testing.T) {
			p := newPolicy(t, Config{}, tc.rules...)
			err := p.Check(tc.host, tc.port)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("port %d: %v, want allowed", tc.port, err)
				}
				return
			}
			var r *Refusal
			if !errors.Is(err, tc.want) || !errors.As(err, &r) {
				t.Fatalf("port %d: %v, want %v", tc.port, err, tc.want)
			}
			if tc.why != "" && r.Detail != tc.why {
				t.Fatalf("port %d: %q, want %q", tc.port, r.Detail, tc.why)
			}
			if want := map[error]Reason{notAllow: ReasonNotAllowed, forbidden: ReasonNotAllowed, unres: ReasonUnreachable}[tc.want]; ReasonOf(err) != want {
				t.Fatalf("reason %v, want %v", ReasonOf(err), want)
			}
			if strings.Contains(err.Error(), tc.host) && tc.host != "::" {
				t.Fatalf("the refusal %q names the destination", err)
			}
		})
	}
}

// TestForbiddenBlocks: every address of a forbidden block is refused, the addresses just
// outside are not (under *:*).
func TestForbiddenBlocks(t *testing.T) {
	p := newPolicy(t, Config{OwnPorts: []uint16{}}, "*:*")
	for _, b := range forbidden {
		first := b.prefix.Addr()
		last := lastAddr(b.prefix)
		for _, a := range []netip.Addr{first, last} {
			if err := p.Check(a.String(), 443); !errors.Is(err, ErrForbiddenAddress) {
				t.Errorf("%s (%s): %v", a, b.what, err)
			}
		}
		if prev := first.Prev(); prev.IsValid() {
			if _, in := forbiddenBlock(prev); !in && p.Check(prev.String(), 443) != nil {
				t.Errorf("%s, before %s: refused", prev, b.prefix)
			}
		}
		if next := last.Next(); next.IsValid() {
			if _, in := forbiddenBlock(next); !in && p.Check(next.String(), 443) != nil {
				t.Errorf("%s, after %s: refused", next, b.prefix)
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestSetAllow: changed rules take effect at the next check; IsExit follows them.
func TestSetAllow(t *testing.T) {
	p := newPolicy(t, Config{})
	if p.IsExit() || p.Check("203.0.113.7", 443) == nil {
		t.Fatal("a policy without rules is an exit")
	}
	rules, err := ParseRules([]string{"*:443"})
	if err != nil {
		t.Fatal(err)
	}
	p.SetAllow(rules)
	rules[0] = Rule{} // the policy keeps its own copy
	if !p.IsExit() || p.Check("203.0.113.7", 443) != nil || len(p.Allow()) != 1 || p.Allow()[0].String() != "*:443" {
		t.Fatalf("after SetAllow: exit %v, %v, rules %v", p.IsExit(), p.Check("203.0.113.7", 443), p.Allow())
	}
}

// TestNewRefuses: negative limits and services named twice.
func TestNewRefuses(t *testing.T) {
	for _, cfg := range []Config{{MaxConns: -1}, {ConnRate: -1}, {SessionRate: -1}, {SessionBurst: -1}, {DialTimeout: -1},
		{Services: []Service{{Name: "a", Host: "x", Port: 1}, {Name: "a", Host: "y", Port: 2}}}} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
