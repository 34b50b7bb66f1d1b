package hostnet

import (
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNAT: on a public bridge, a host behind its router reaches a public host, which sees it from
// the router's address; nothing reaches the host behind the router unasked (the router drops new
// connections from outside); a cone NAT keeps a socket's port towards every destination, a
// symmetric one does not; Close removes the routers too.
func TestNAT(t *testing.T) {
	needRoot(t)
	const prefix = "rlyhn"
	nw, err := Create(3, Options{Prefix: prefix, Octet: 79, Public: true, NAT: 2, SymmetricNAT: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	hosts := nw.Hosts()
	pub, natted := hosts[0], hosts[1]
	if pub.Addr != netip.MustParseAddr("11.79.0.2") || pub.Public != pub.Addr || pub.Router != "" ||
		natted.Addr != netip.MustParseAddr("192.168.2.2") || natted.Public != netip.MustParseAddr("11.79.0.3") || natted.Router != prefix+"-r2" {
		t.Fatalf("hosts %+v", hosts)
	}

	// The public host sees the NAT'd host's connection come from its router.
	var l net.Listener
	if err := pub.Do(func() (err error) { l, err = net.Listen("tcp", netip.AddrPortFrom(pub.Addr, 0).String()); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	from := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		from <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		echo(&oneConn{c: c})
	}()
	var c net.Conn
	if err := natted.Do(func() (err error) { c, err = net.DialTimeout("tcp", l.Addr().String(), 5*time.Second); return err }); err != nil {
		t.Fatalf("NAT'd host dials the public host: %v", err)
	}
	roundTrip(t, c)
	if got := <-from; got != natted.Public.String() {
		t.Fatalf("the public host saw %s, want the router's %s", got, natted.Public)
	}

	// Nothing listens on the router, and a listener behind it is not reachable from outside.
	var inside net.Listener
	if err := natted.Do(func() (err error) { inside, err = net.Listen("tcp", ":0"); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inside.Close() })
	for _, to := range []string{net.JoinHostPort(natted.Public.String(), portOf(inside)), net.JoinHostPort(natted.Addr.String(), portOf(inside))} {
		if err := pub.Do(func() error {
			c, err := net.DialTimeout("tcp", to, 500*time.Millisecond)
			if err == nil {
				c.Close()
				t.Errorf("the public host reached %s behind the NAT", to)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	// Mapping: from one UDP socket to two public ports, the cone NAT keeps one source port, the
	// symmetric one picks a new one per destination.
	if natted.Symmetric || !hosts[2].Symmetric {
		t.Fatalf("symmetric: %v, %v", natted.Symmetric, hosts[2].Symmetric)
	}
	var sinks [2]*net.UDPConn
	for i := range sinks {
		if err := pub.Do(func() (err error) {
			sinks[i], err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(pub.Addr, 0)))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sinks[i].Close() })
	}
	for _, h := range hosts[1:] {
		var c *net.UDPConn
		if err := h.Do(func() (err error) { c, err = net.ListenUDP("udp4", nil); return err }); err != nil {
			t.Fatal(err)
		}
		var ports [2]int
		for i, sink := range sinks {
			if _, err := c.WriteToUDP([]byte("x"), sink.LocalAddr().(*net.UDPAddr)); err != nil {
				t.Fatal(err)
			}
			sink.SetReadDeadline(time.Now().Add(5 * time.Second))
			var b [8]byte
			_, from, err := sink.ReadFromUDP(b[:])
			if err != nil {
				t.Fatal(err)
			}
			ports[i] = from.Port
		}
		c.Close()
		if same := ports[0] == ports[1]; same == h.Symmetric {
			t.Errorf("host %d (symmetric %v) mapped one socket to ports %v", h.Index, h.Symmetric, ports)
		}
	}

	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			t.Errorf("namespace %s left after Close", e.Name())
		}
	}
}

// oneConn is a listener that hands out one connection.
type oneConn struct {
	c    net.Conn
	done bool
}

func (o *oneConn) Accept() (net.Conn, error) {
	if o.done {
		return nil, net.ErrClosed
	}
	o.done = true
	return o.c, nil
}
func (o *oneConn) Close() error   { return nil }
func (o *oneConn) Addr() net.Addr { return o.c.LocalAddr() }
