package cluster

import (
	"bufio"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/testnet"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// roundTrip sends a line over c and reads the answer.
func roundTrip(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func dialGate(t *testing.T, g *gate) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatalf("dial the open gate: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGateShutCutsAndRefusesThenOpensOnTheSamePort(t *testing.T) {
	g, err := newGate(freeAddr(t), testnet.EchoTCP(t).String())
	if err != nil {
		t.Fatal(err)
	}
	defer g.shut()
	c := dialGate(t, g)
	if got, err := roundTrip(c, "before"); err != nil || got != "before" {
		t.Fatalf("through the open gate: %q, %v", got, err)
	}

	g.shut()
	if _, err := roundTrip(c, "during"); err == nil {
		t.Fatal("a connection made before the gate shut still answers")
	}
	if c2, err := net.Dial("tcp", g.addr); err == nil {
		c2.Close()
		t.Fatal("the shut gate accepts connections")
	}
	g.shut() // idempotent

	if err := g.open(); err != nil {
		t.Fatalf("open again on the same port: %v", err)
	}
	if err := g.open(); err != nil { // idempotent
		t.Fatal(err)
	}
	if got, err := roundTrip(dialGate(t, g), "after"); err != nil || got != "after" {
		t.Fatalf("through the reopened gate: %q, %v", got, err)
	}
}

func TestDrillFollowsSIGUSR1AndSIGUSR2(t *testing.T) {
	g, err := newGate(freeAddr(t), testnet.EchoTCP(t).String())
	if err != nil {
		t.Fatal(err)
	}
	defer g.shut()
	var out lockedBuffer
	c := &cluster{out: &out, start: time.Now(), gate: g}
	done := make(chan struct{})
	stopped := c.drill(done)
	defer func() { close(done); <-stopped }()

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gate to shut", func() bool {
		cc, err := net.Dial("tcp", g.addr)
		if err == nil {
			cc.Close()
		}
		return err != nil
	})
	if !strings.Contains(out.String(), "no longer answers its nodes") {
		t.Fatalf("no progress line for the outage: %q", out.String())
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gate to open", func() bool {
		cc, err := net.Dial("tcp", g.addr)
		if err != nil {
			return false
		}
		defer cc.Close()
		got, err := roundTrip(cc, "back")
		return err == nil && got == "back"
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
