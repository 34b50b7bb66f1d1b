package exit

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/relayd/relayd/internal/wait"
)

// TestMaxConns: the connection past MaxConns is refused (ErrLimit) until one closes; closing
// twice gives back one place.
func TestMaxConns(t *testing.T) {
	port := echoTCP(t)
	p := newPolicy(t, Config{MaxConns: 2, ConnRate: 1000, ConnBurst: 1000}, hostPort("127.0.0.1", port))
	addr := hostPort("127.0.0.1", port)
	var open []net.Conn
	for range 2 {
		c, err := p.Dial(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	_, err := p.Dial(t.Context(), "tcp", addr)
	if !errors.Is(err, ErrLimit) || ReasonOf(err) != ReasonLimit {
		t.Fatalf("the third connection: %v", err)
	}
	open[0].Close()
	if err := open[0].Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a second close: %v", err)
	}
	if p.Conns() != 1 {
		t.Fatalf("%d open after a close, want 1", p.Conns())
	}
	c, err := p.Dial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("after a close: %v", err)
	}
	roundTrip(t, c)
	if _, err := p.Dial(t.Context(), "tcp", addr); !errors.Is(err, ErrLimit) {
		t.Fatalf("full again: %v", err)
	}
	c.Close()
	open[1].Close()
	if p.Conns() != 0 {
		t.Fatalf("%d open, want 0", p.Conns())
	}
}

// TestConnRate: new connections past the burst are refused until the clock gives a token back.
func TestConnRate(t *testing.T) {
	port := echoTCP(t)
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	p := newPolicy(t, Config{ConnRate: 1, ConnBurst: 2, Now: clock}, hostPort("127.0.0.1", port))
	addr := hostPort("127.0.0.1", port)
	for i := range 2 {
		c, err := p.Dial(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		c.Close()
	}
	if _, err := p.Dial(t.Context(), "tcp", addr); !errors.Is(err, ErrLimit) {
		t.Fatalf("past the burst: %v", err)
	}
	now = now.Add(time.Second)
	c, err := p.Dial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("a second later: %v", err)
	}
	c.Close()
	if _, err := p.Dial(t.Context(), "tcp", addr); !errors.Is(err, ErrLimit) {
		t.Fatalf("past the rate: %v", err)
	}
}

// TestSessionRate: a connection of Dial moves at most burst + rate × time bytes, writing and
// reading: the time to move n bytes is at least (n − burst) / rate. Measured by polling what
// arrived with a deadline.
func TestSessionRate(t *testing.T) {
	const (
		perSecond = 200 << 10
		burst     = 16 << 10
		total     = burst + perSecond/4 // at least 250 ms past the burst
		least     = 250 * time.Millisecond
	)
	// A sink that counts what arrives, and a source that sends total bytes as fast as it may.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var received atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var b [1]byte
				if _, err := c.Read(b[:]); err != nil {
					return
				}
				if b[0] == 'w' { // the test writes: count
					n, _ := io.Copy(io.Discard, c)
					received.Add(n + 1)
					return
				}
				c.Write(make([]byte, total)) // the test reads
			}()
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	p := newPolicy(t, Config{SessionRate: perSecond, SessionBurst: burst}, hostPort("127.0.0.1", port))

	// Writing.
	c, err := p.Dial(t.Context(), "tcp", hostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		c.Write([]byte{'w'})
		for sent := 1; sent < total; sent += 1000 {
			if _, err := c.Write(make([]byte, min(1000, total-sent))); err != nil {
				return
			}
		}
		c.Close()
	}()
	wait.For(t, func() bool { return received.Load() >= total }, 10*time.Second, "the sink received what the test wrote")
	if took := time.Since(start); took < least {
		t.Fatalf("wrote %d bytes in %v at %d bytes/s, burst %d: want at least %v", total, took, perSecond, burst, least)
	}

	// Reading.
	c, err = p.Dial(t.Context(), "tcp", hostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start = time.Now()
	var read atomic.Int64
	go func() {
		c.Write([]byte{'r'})
		n, _ := io.Copy(io.Discard, c)
		read.Store(n)
	}()
	wait.For(t, func() bool { return read.Load() >= total }, 10*time.Second, "the test read what the source sent")
	if took := time.Since(start); took < least {
		t.Fatalf("read %d bytes in %v at %d bytes/s, burst %d: want at least %v", total, took, perSecond, burst, least)
	}
	ln.Close()
	wg.Wait()
}

// TestLimitConnClose: a write waiting for tokens ends when the connection closes, with
// net.ErrClosed.
func TestLimitConnClose(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := LimitConn(a, rate.NewLimiter(1, 1))
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 100)) // 100 s of tokens
		done <- err
	}()
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("the write ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write still waits after the close")
	}
	unlimited := LimitConn(a, rate.NewLimiter(rate.Inf, 0))
	if _, err := unlimited.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("an unlimited write on the closed pipe: %v", err)
	}
}
