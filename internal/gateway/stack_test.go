package gateway

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/socks5"
)

// TestSetSOCKS5: the SOCKS5 entry follows SetSOCKS5 while the stack runs. A new address takes
// CONNECTs at once and the old one none, while a connection made through the old one goes on
// both ways; a new exit applies to the next CONNECT; the same port under another name moves the
// entry (the old listener lets go of the port first); an address that cannot be used is refused
// and leaves the entry where it was; an empty address turns it off, the connections carried
// still carried.
func TestSetSOCKS5(t *testing.T) {
	echo := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	_, entry, _ := pair(t, []string{echo}, nil)
	toExit := func() (peer.ID, error) { return exitID, nil }
	addrA, addrB := closedPort(t), closedPort(t)
	if entry.SOCKSAddr() != nil {
		t.Fatal("a SOCKS5 entry without SOCKS5Listen")
	}
	set := func(listen string, exit func() (peer.ID, error)) {
		t.Helper()
		if err := entry.SetSOCKS5(listen, exit); err != nil {
			t.Fatalf("SetSOCKS5(%q): %v", listen, err)
		}
	}

	set(addrA, toExit)
	c1 := socksConnect(t, addrA, echo, socks5.ReplySucceeded)
	echoes(t, c1, "first")

	set(addrB, toExit)
	if got := entry.SOCKSAddr().String(); got != addrB {
		t.Fatalf("the entry listens on %s, want %s", got, addrB)
	}
	if c, err := net.DialTimeout("tcp", addrA, time.Second); err == nil {
		c.Close()
		t.Fatalf("the old address %s still takes connections", addrA)
	}
	echoes(t, c1, "still carried")
	c2 := socksConnect(t, addrB, echo, socks5.ReplySucceeded)
	echoes(t, c2, "second")

	set(addrB, func() (peer.ID, error) { return "", errors.New("no such alias") })
	socksConnect(t, addrB, echo, socks5.ReplyNetworkUnreachable)
	echoes(t, c2, "the exit changed")
	set(addrB, ExitNamed(func(string) (peer.ID, error) { return exitID, nil }, "")) // no exit
	socksConnect(t, addrB, echo, socks5.ReplyNetworkUnreachable)
	aliases := map[string]peer.ID{"x": exitID}
	set(addrB, ExitNamed(func(name string) (peer.ID, error) { return aliases[name], nil }, "x"))
	echoes(t, socksConnect(t, addrB, echo, socks5.ReplySucceeded), "by its alias")

	_, port, _ := net.SplitHostPort(addrB)
	set("localhost:"+port, toExit)
	socksConnect(t, "localhost:"+port, echo, socks5.ReplySucceeded)

	if err := entry.SetSOCKS5("192.0.2.1:1080", toExit); !errors.Is(err, socks5.ErrNotLoopback) {
		t.Fatalf("SetSOCKS5 off loopback: %v", err)
	}
	if got := entry.SOCKSAddr(); got == nil || got.(*net.TCPAddr).Port != mustPort(t, port) {
		t.Fatalf("after a refused address the entry listens on %v", got)
	}

	set("", nil)
	if entry.SOCKSAddr() != nil {
		t.Fatal("the entry still listens")
	}
	if c, err := net.DialTimeout("tcp", "localhost:"+port, time.Second); err == nil {
		c.Close()
		t.Fatal("the entry turned off still takes connections")
	}
	echoes(t, c1, "after the entry went off")
	echoes(t, c2, "after the entry went off")
}

func mustPort(t *testing.T, s string) int {
	t.Helper()
	p, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// socksConnect asks the SOCKS5 entry at addr to CONNECT to target (no authentication, an IPv4
// address) and checks its reply; the connection is returned when it succeeded.
func socksConnect(t *testing.T, addr, target string, want uint8) net.Conn {
	t.Helper()
	c := dial(t, "tcp", addr)
	host, port, _ := net.SplitHostPort(target)
	ip := net.ParseIP(host).To4()
	req := append([]byte{5, 1, 0, 5, 1, 0, 1}, ip...)
	req = binary.BigEndian.AppendUint16(req, uint16(mustPort(t, port)))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 2+10)
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatalf("SOCKS5 reply from %s: %v", addr, err)
	}
	if reply[0] != 5 || reply[1] != 0 || reply[3] != want {
		t.Fatalf("SOCKS5 reply % x from %s, want code %#02x", reply, addr, want)
	}
	return c
}

// echoes writes msg on c and reads it back.
func echoes(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, buf, err)
	}
}
