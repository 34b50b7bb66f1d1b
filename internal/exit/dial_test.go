package exit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/testnet"
)

// resolver is a Resolver with a function field; calls records what it was asked.
type resolver struct {
	mu     sync.Mutex
	calls  []string
	lookup func(network, host string) ([]netip.Addr, error)
}

func (r *resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.calls = append(r.calls, network+" "+host)
	r.mu.Unlock()
	return r.lookup(network, host)
}

// resolvesTo is a resolver that answers addrs for every name.
func resolvesTo(addrs ...string) *resolver {
	return &resolver{lookup: func(string, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}}
}

// echoUDP answers every datagram on 127.0.0.1 with itself; it returns the port.
func echoUDP(t *testing.T) uint16 {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
	return uint16(pc.LocalAddr().(*net.UDPAddr).Port)
}

// roundTrip sends a line over c and reads it back.
func roundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte("hello, exit")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read %q, %v", got, err)
	}
}

func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// TestDialLocal: a real dial to a local listener, allowed by an explicit address rule and
// refused without one (by *:*, by the wrong port, by no rule at all); UDP alike.
func TestDialLocal(t *testing.T) {
	port := echoTCP(t)
	addr := hostPort("127.0.0.1", port)

	p := newPolicy(t, Config{}, hostPort("127.0.0.1", port))
	c, err := p.Dial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c)
	if p.Conns() != 1 {
		t.Fatalf("%d connections open, want 1", p.Conns())
	}
	c.Close()
	if p.Conns() != 0 {
		t.Fatalf("%d connections open after the close, want 0", p.Conns())
	}
	// A half-close reaches the destination, whose echo then ends too.
	c, err = p.Dial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("last words"))
	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(c); err != nil || string(got) != "last words" {
		t.Fatalf("after the half-close: %q, %v", got, err)
	}
	c.Close()
	// The same address, IPv4-mapped, is the same address.
	c, err = p.Dial(t.Context(), "tcp", hostPort("::ffff:127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c)
	c.Close()

	for _, tc := range []struct {
		rules []string
		want  error
	}{
		{nil, ErrNotAllowed},
		{[]string{"*:*"}, ErrForbiddenAddress},
		{[]string{"*:" + strconv.Itoa(int(port))}, ErrForbiddenAddress},
		{[]string{"127.0.0.1:1"}, ErrForbiddenAddress},
		{[]string{"10.0.0.0/8"}, ErrForbiddenAddress},
	} {
		p := newPolicy(t, Config{}, tc.rules...)
		if c, err := p.Dial(t.Context(), "tcp", addr); !errors.Is(err, tc.want) || ReasonOf(err) != ReasonNotAllowed {
			if c != nil {
				c.Close()
			}
			t.Errorf("rules %v: %v, want %v", tc.rules, err, tc.want)
		}
		if p.Conns() != 0 {
			t.Errorf("rules %v: a refusal holds a connection", tc.rules)
		}
	}

	udp := echoUDP(t)
	p = newPolicy(t, Config{}, hostPort("127.0.0.1", udp))
	c, err = p.Dial(t.Context(), "udp", hostPort("127.0.0.1", udp))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c)
	c.Close()
	if _, err := newPolicy(t, Config{}, "*:*").Dial(t.Context(), "udp", hostPort("127.0.0.1", udp)); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("udp under *:*: %v", err)
	}
}

// TestDialRebinding: a public-looking name that resolves to a loopback or private address is
// refused like that address; a name resolving to a forbidden and an allowed address is dialled
// at the allowed one only.
func TestDialRebinding(t *testing.T) {
	port := echoTCP(t)
	for _, addrs := range [][]string{{"127.0.0.1"}, {"10.0.0.1"}, {"::ffff:127.0.0.1"}, {"169.254.169.254", "192.168.0.1"}} {
		r := resolvesTo(addrs...)
		p := newPolicy(t, Config{Resolver: r}, "*.example.org:*", "*:*")
		_, err := p.Dial(t.Context(), "tcp", hostPort("www.example.org", port))
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("resolving to %v: %v, want ErrForbiddenAddress", addrs, err)
		}
		if len(r.calls) != 1 || r.calls[0] != "ip www.example.org" {
			t.Errorf("resolver asked %v", r.calls)
		}
	}

	// 10.0.0.1 is forbidden and skipped; the rule names 127.0.0.1 on the port.
	r := resolvesTo("10.0.0.1", "127.0.0.1")
	p := newPolicy(t, Config{Resolver: r}, "*.example.org:*", hostPort("127.0.0.1", port))
	c, err := p.Dial(t.Context(), "tcp", hostPort("App.Example.org.", port))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RemoteAddr().(*net.TCPAddr).IP.String(); got != "127.0.0.1" {
		t.Fatalf("connected to %s", got)
	}
	roundTrip(t, c)
	c.Close()
	if r.calls[0] != "ip app.example.org" {
		t.Fatalf("resolver asked %v", r.calls)
	}

	// A name no rule could allow is not even resolved.
	r = resolvesTo("203.0.113.7")
	p = newPolicy(t, Config{Resolver: r}, "*.example.org:443")
	if _, err := p.Dial(t.Context(), "tcp", "other.net:443"); !errors.Is(err, ErrNotAllowed) || len(r.calls) != 0 {
		t.Fatalf("%v, resolver asked %v", err, r.calls)
	}
}

// TestControl: the dialer's Control hook refuses an address other than those checked (on
// another port, too), and one the rules no longer allow.
func TestControl(t *testing.T) {
	pub := netip.MustParseAddr("203.0.113.7")
	p := newPolicy(t, Config{}, "*:443")
	ok := func(a netip.Addr) error { return p.allowed(*p.allow.Load(), "", a, 443) }
	ctl := control([]netip.Addr{pub}, 443, ok)
	if err := ctl("tcp4", "203.0.113.7:443", nil); err != nil {
		t.Fatalf("the checked address: %v", err)
	}
	for _, address := range []string{"127.0.0.1:443", "203.0.113.8:443", "203.0.113.7:444", "[::ffff:127.0.0.1]:443", "nonsense"} {
		if err := ctl("tcp", address, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v", address, err)
		}
	}
	loop := netip.MustParseAddr("127.0.0.1")
	if err := control([]netip.Addr{loop}, 443, ok)("tcp4", "127.0.0.1:443", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("a checked address the rules refuse: %v", err)
	}
}

// TestDialFailures: what each failure tells the entry.
func TestDialFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()

	p := newPolicy(t, Config{}, hostPort("127.0.0.1", closed), "::1")
	_, err = p.Dial(t.Context(), "tcp", hostPort("127.0.0.1", closed))
	if !errors.Is(err, ErrUnreachable) || ReasonOf(err) != ReasonRefused {
		t.Fatalf("a closed port: %v (%v)", err, ReasonOf(err))
	}
	if p.Conns() != 0 {
		t.Fatal("a failed dial holds a connection")
	}

	fails := &resolver{lookup: func(string, string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
	}}
	empty := resolvesTo()
	for _, r := range []*resolver{fails, empty} {
		p := newPolicy(t, Config{Resolver: r}, "*:*")
		if _, err := p.Dial(t.Context(), "tcp", "nowhere.example.org:443"); !errors.Is(err, ErrUnresolvable) || ReasonOf(err) != ReasonUnreachable {
			t.Errorf("unresolvable: %v", err)
		}
	}

	for _, tc := range []struct{ network, address string }{
		{"ip", "127.0.0.1:80"},
		{"unix", "/tmp/x"},
		{"tcp", "127.0.0.1"},
		{"tcp", "example.org:http"},
		{"tcp", "example.org:0"},
		{"tcp4", "[::1]:80"},
	} {
		if c, err := p.Dial(t.Context(), tc.network, tc.address); err == nil || ReasonOf(err) == ReasonNone {
			c.Close()
			t.Errorf("%s %s: dialled", tc.network, tc.address)
		}
	}
}

// TestDialService: a service is dialled at its address whatever range it lies in, on a node
// that is no exit; an unknown name is not allowed.
func TestDialService(t *testing.T) {
	port := echoTCP(t)
	svcs, err := ParseServices([]string{"web=" + hostPort("127.0.0.1", port), "named=localhost:" + strconv.Itoa(int(port))})
	if err != nil {
		t.Fatal(err)
	}
	r := resolvesTo("127.0.0.1")
	p := newPolicy(t, Config{Services: svcs, Resolver: r, OwnPorts: []uint16{port}})
	for _, name := range []string{"web", "WEB", "named"} {
		c, err := p.DialService(t.Context(), "tcp", name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		roundTrip(t, c)
		c.Close()
	}
	if len(r.calls) != 1 || r.calls[0] != "ip localhost" {
		t.Fatalf("resolver asked %v", r.calls)
	}
	if _, err := p.DialService(t.Context(), "tcp", "other"); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("no such service: %v", err)
	}
	if _, err := p.Dial(t.Context(), "tcp", hostPort("127.0.0.1", port)); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("a service makes no exit: %v", err)
	}
	if s, ok := p.Service("web"); !ok || s.Port != port {
		t.Fatalf("Service: %v, %v", s, ok)
	}
}

// echoTCP is a TCP echo server on 127.0.0.1 (testnet.EchoTCP); it returns its port.
func echoTCP(t *testing.T) uint16 { return uint16(testnet.EchoTCP(t).Port) }
