package gateway

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/socks5"
	"github.com/relayd/relayd/internal/testnet"
	"github.com/relayd/relayd/internal/wait"
)

// TestKnownTargets: a target is known through the exit it worked through, for ttl after it
// last worked; one that failed is not known for ttl after the failure, whatever works in
// between; the memory holds size targets, the one that worked longest ago going first; size 0
// knows none.
func TestKnownTargets(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	k := NewKnownTargets(2, time.Minute, clock)
	const a, b = peer.ID("exit-a"), peer.ID("exit-b")
	if k.Known(a, "x:80") {
		t.Fatal("a target known before it worked")
	}
	k.Worked(a, "x:80")
	if !k.Known(a, "x:80") || k.Known(b, "x:80") || k.Known(a, "x:81") {
		t.Fatal("known through the wrong exit or target")
	}
	now = now.Add(59 * time.Second)
	if !k.Known(a, "x:80") {
		t.Fatal("forgotten within ttl")
	}
	now = now.Add(time.Second)
	if k.Known(a, "x:80") {
		t.Fatal("known ttl after it worked")
	}

	k.Worked(a, "x:80")
	k.Failed(a, "x:80")
	k.Worked(a, "x:80") // a CONNECT that waited for the exit worked again
	if k.Known(a, "x:80") {
		t.Fatal("known right after it failed")
	}
	now = now.Add(time.Minute)
	k.Worked(a, "x:80")
	if !k.Known(a, "x:80") {
		t.Fatal("not known again ttl after the failure")
	}
	k.Failed(b, "never:80")
	if k.Len() != 1 {
		t.Fatalf("a failure of an unknown target recorded: %d targets", k.Len())
	}

	now = now.Add(time.Second)
	k.Worked(a, "y:80")
	now = now.Add(time.Second)
	k.Worked(a, "x:80") // x worked last now: y goes first
	k.Worked(b, "z:80")
	if k.Len() != 2 || !k.Known(a, "x:80") || k.Known(a, "y:80") || !k.Known(b, "z:80") {
		t.Fatalf("after a third target: %d held, x %v y %v z %v", k.Len(), k.Known(a, "x:80"), k.Known(a, "y:80"), k.Known(b, "z:80"))
	}

	none := NewKnownTargets(0, time.Minute, clock)
	none.Worked(a, "x:80")
	if none.Known(a, "x:80") || none.Len() != 0 {
		t.Fatal("a memory of size 0 knows a target")
	}
}

// TestSOCKSEarly: through a real entry and exit (in memory), the first CONNECT to a target
// waits for the exit; the next one is answered while the exit's answers are held, its first
// bytes ride the SYN (the exit's session holds them as early data before it confirmed), and the
// stream goes on once the answers come. Targets the exit refuses get their reply codes every
// time. When a known target stops answering, the early CONNECT's client is closed and the next
// CONNECT gets "connection refused".
func TestSOCKSEarly(t *testing.T) {
	echo := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	flaky, stopFlaky := closableServer(t)
	n, entry, ex := pair(t, []string{echo, flaky}, nil)
	listen := closedPort(t)
	if err := entry.SetSOCKS5(listen, func() (peer.ID, error) { return exitID, nil }); err != nil {
		t.Fatal(err)
	}

	c1 := socksConnect(t, listen, echo, socks5.ReplySucceeded)
	echoes(t, c1, "first")

	n.holdReplies()
	first := []byte("GET /bytes/16 HTTP/1.1\r\nHost: target\r\n\r\n")
	c2 := socksConnectWith(t, listen, echo, first, socks5.ReplySucceeded)
	wait.For(t, func() bool { return earlyAtExit(ex) == len(first) }, 10*time.Second,
		"the exit holds the early data of a session")
	// Every answer of the exit since holdReplies is held: the SYN|ACK too, once it is sent.
	wait.For(t, func() bool { return n.heldReplies() > 0 }, 10*time.Second, "the exit answers the SYN")
	n.releaseReplies()
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(c2, buf); err != nil || string(buf) != string(first) {
		t.Fatalf("echo of the early data: %q, %v", buf, err)
	}
	echoes(t, c2, "after the early data")

	for range 2 {
		socksConnect(t, listen, "127.0.0.1:9", socks5.ReplyNotAllowed)
	}

	c3 := socksConnect(t, listen, flaky, socks5.ReplySucceeded)
	echoes(t, c3, "flaky answers")
	_ = c3.Close()
	stopFlaky()
	c4 := socksConnectWith(t, listen, flaky, []byte("hello"), socks5.ReplySucceeded) // known: answered at once
	_ = c4.SetDeadline(time.Now().Add(30 * time.Second))
	if b, err := io.ReadAll(c4); len(b) != 0 || (err != nil && !isReset(err)) {
		t.Fatalf("an early CONNECT the exit refused read %q, %v; want its connection closed", b, err)
	}
	socksConnect(t, listen, flaky, socks5.ReplyConnectionRefused)
}

// earlyAtExit is the early data of the sessions the exit holds, summed.
func earlyAtExit(ex *Stack) int {
	n := 0
	for _, c := range ex.Mux.Conns() {
		n += c.Stats().EarlyData
	}
	return n
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// closableServer echoes on a loopback port until stop, after which nothing listens there.
func closableServer(t *testing.T) (addr string, stop func()) {
	t.Helper()
	a, stop := testnet.ServeTCP(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		_, _ = io.Copy(c, c)
	})
	return a.String(), stop
}

// socksConnectWith is socksConnect with first, the client's first bytes, written in the same
// write as the handshake (a client that does not wait for the reply), so that the entry has
// them at once.
func socksConnectWith(t *testing.T, addr, target string, first []byte, want uint8) net.Conn {
	t.Helper()
	c := dial(t, "tcp", addr)
	host, port, _ := net.SplitHostPort(target)
	req := append([]byte{5, 1, 0, 5, 1, 0, 1}, net.ParseIP(host).To4()...)
	req = binary.BigEndian.AppendUint16(req, uint16(mustPort(t, port)))
	if _, err := c.Write(append(req, first...)); err != nil {
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

// TestEntryEarlyData: a REST session's connection sends the client's first bytes with its SYN
// (the exit holds them as early data while its answers are held), and they count as sent.
func TestEntryEarlyData(t *testing.T) {
	echo := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	n, entry, ex := pair(t, []string{echo}, nil)
	info, err := entry.Entry.Open(t.Context(), Open{Destination: exitID, Protocol: TCP, Target: echo})
	if err != nil {
		t.Fatal(err)
	}
	n.holdReplies()
	c := dial(t, "tcp", info.Listen)
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return earlyAtExit(ex) == len("hello") }, 10*time.Second,
		"the exit holds the connection's first bytes as early data")
	n.releaseReplies()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo of the early data: %q, %v", buf, err)
	}
	echoes(t, c, "and after")
	list := entry.Entry.List()
	if len(list) != 1 || list[0].BytesOut != uint64(len("hello")+len("and after")) {
		t.Fatalf("sessions %+v, want %d bytes out", list, len("hello")+len("and after"))
	}
}
