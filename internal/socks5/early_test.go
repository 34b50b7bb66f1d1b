package socks5

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/testnet"
)

// earlyDialer is an EarlyDialer: it expects the addresses in known to work (room bytes of early
// data), and its DialEarly tells early what it was given, waits until hold is closed, then fails
// with fail or connects to backend and writes the early bytes there first. DialContext is
// dialed's.
type earlyDialer struct {
	*recorder
	backend string
	room    int
	hold    chan struct{}
	fail    error
	early   chan []byte

	mu    sync.Mutex
	known map[string]bool
}

func (d *earlyDialer) Early(network, address string) (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.room, network == "tcp" && d.known[address]
}

func (d *earlyDialer) DialEarly(ctx context.Context, network, address string, early []byte) (net.Conn, error) {
	d.early <- append([]byte(nil), early...)
	select {
	case <-d.hold:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if d.fail != nil {
		return nil, d.fail
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, d.backend)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(early); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// echoServer echoes every connection on a loopback port until the test ends; with greet set it
// speaks first.
func echoServer(t *testing.T, greet string) string {
	t.Helper()
	addr, _ := testnet.ServeTCP(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		if greet != "" {
			_, _ = io.WriteString(c, greet)
		}
		_, _ = io.Copy(c, c)
	})
	return addr.String()
}

// TestEarlyConnect: a CONNECT to an address the dialer expects to work is answered "succeeded"
// before its dial ends (the dial is held), and the client's first bytes, written after the
// reply, travel with the dial and reach the target first; a client whose server speaks first
// sends nothing, and the dial goes after EarlyWait without data; a CONNECT to any other
// address waits for its dial and gets the reply code; a negative EarlyWait turns it off; an
// early dial that fails closes the client's connection.
func TestEarlyConnect(t *testing.T) {
	echo, greeter := echoServer(t, ""), echoServer(t, "220 hello\r\n")
	newDialer := func(backend string, fail error) *earlyDialer {
		return &earlyDialer{recorder: failing(ErrNotAllowed), backend: backend, room: 64, hold: make(chan struct{}),
			fail: fail, early: make(chan []byte, 1), known: map[string]bool{"known.example:80": true}}
	}

	t.Run("answered before the dial", func(t *testing.T) {
		d := newDialer(echo, nil)
		s := start(t, Config{Dialer: d, EarlyWait: 5 * time.Second})
		c := dialServer(t, s)
		if got := request(t, c, 0x01, domain("known.example", 80)); got != ReplySucceeded {
			t.Fatalf("reply %#02x, want succeeded", got)
		}
		// The dial has not ended: DialEarly waits on hold, and it has not even been called
		// (the server waits for the client's first bytes).
		select {
		case b := <-d.early:
			t.Fatalf("dialled with %q before the client wrote", b)
		default:
		}
		first := "GET / HTTP/1.1\r\nHost: known.example\r\n\r\n"
		if _, err := io.WriteString(c, first); err != nil {
			t.Fatal(err)
		}
		if got := string(<-d.early); got != first {
			t.Fatalf("dialled with early data %q, want %q", got, first)
		}
		close(d.hold)
		buf := make([]byte, len(first))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != first {
			t.Fatalf("echo of the early data: %q, %v", buf, err)
		}
		if _, err := io.WriteString(c, "more"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:4]) != "more" {
			t.Fatalf("echo after the early data: %q, %v", buf[:4], err)
		}
		if st := s.Stats(); st.Early != 1 || st.Connected != 1 || st.EarlyBytes != uint64(len(first)) || len(d.Asked()) != 0 {
			t.Fatalf("stats %+v, DialContext asked %v", st, d.Asked())
		}
	})

	t.Run("the server speaks first", func(t *testing.T) {
		d := newDialer(greeter, nil)
		close(d.hold)
		s := start(t, Config{Dialer: d, EarlyWait: 20 * time.Millisecond})
		c := dialServer(t, s)
		if got := request(t, c, 0x01, domain("known.example", 80)); got != ReplySucceeded {
			t.Fatalf("reply %#02x, want succeeded", got)
		}
		buf := make([]byte, len("220 hello\r\n"))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "220 hello\r\n" {
			t.Fatalf("greeting %q, %v", buf, err)
		}
		if b := <-d.early; len(b) != 0 {
			t.Fatalf("dialled with %q, the client wrote nothing", b)
		}
		// The wait for the first bytes timed out; what the client sends now still goes.
		if _, err := io.WriteString(c, "hi"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:2]); err != nil || string(buf[:2]) != "hi" {
			t.Fatalf("echo after the wait: %q, %v", buf[:2], err)
		}
	})

	t.Run("an unknown address waits for its dial", func(t *testing.T) {
		d := newDialer(echo, nil)
		s := start(t, Config{Dialer: d, EarlyWait: 5 * time.Second})
		c := dialServer(t, s)
		if got := request(t, c, 0x01, domain("unknown.example", 80)); got != ReplyNotAllowed {
			t.Fatalf("reply %#02x, want not allowed", got)
		}
		closedByServer(t, c)
		if st := s.Stats(); st.Early != 0 || st.DialFailed != 1 {
			t.Fatalf("stats %+v", st)
		}
	})

	t.Run("early connects off", func(t *testing.T) {
		d := newDialer(echo, nil)
		s := start(t, Config{Dialer: d, EarlyWait: -1})
		c := dialServer(t, s)
		if got := request(t, c, 0x01, domain("known.example", 80)); got != ReplyNotAllowed {
			t.Fatalf("reply %#02x, want not allowed (DialContext's)", got)
		}
		if got := d.Asked(); len(got) != 1 {
			t.Fatalf("DialContext asked %v", got)
		}
	})

	t.Run("an early dial that fails closes the client", func(t *testing.T) {
		d := newDialer(echo, ErrRefused)
		close(d.hold)
		s := start(t, Config{Dialer: d, EarlyWait: 5 * time.Second})
		c := dialServer(t, s)
		if got := request(t, c, 0x01, domain("known.example", 80)); got != ReplySucceeded {
			t.Fatalf("reply %#02x, want succeeded", got)
		}
		if _, err := io.WriteString(c, "hello"); err != nil {
			t.Fatal(err)
		}
		closedByServer(t, c)
		if st := s.Stats(); st.Early != 1 || st.EarlyFailed != 1 || st.Connected != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestEarlyConnectClientGone: a client that closes right after the reply (EOF within EarlyWait)
// still gets its dial, without data, and the server lets go of both ends.
func TestEarlyConnectClientGone(t *testing.T) {
	d := &earlyDialer{recorder: failing(ErrNotAllowed), backend: echoServer(t, ""), room: 64, hold: make(chan struct{}),
		early: make(chan []byte, 1), known: map[string]bool{"known.example:80": true}}
	close(d.hold)
	s := start(t, Config{Dialer: d, EarlyWait: 5 * time.Second})
	c := dialServer(t, s)
	if got := request(t, c, 0x01, domain("known.example", 80)); got != ReplySucceeded {
		t.Fatalf("reply %#02x, want succeeded", got)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b := <-d.early; len(b) != 0 {
		t.Fatalf("dialled with %q", b)
	}
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("after the client's half-close: %v", err)
	}
}
