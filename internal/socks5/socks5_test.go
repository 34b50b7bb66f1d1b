package socks5

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/wait"
)

// recorder is a Dialer that records every address it is asked for and dials with dial.
type recorder struct {
	dial func(ctx context.Context, network, address string) (net.Conn, error)

	mu    sync.Mutex
	asked []string
}

func (r *recorder) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	r.asked = append(r.asked, network+" "+address)
	r.mu.Unlock()
	return r.dial(ctx, network, address)
}

func (r *recorder) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// failing is a recorder whose every dial fails with err.
func failing(err error) *recorder {
	return &recorder{dial: func(context.Context, string, string) (net.Conn, error) { return nil, err }}
}

// direct is a recorder that connects to backend whatever it is asked for: the test's stand-in
// for an exit that resolved the name.
func direct(backend string) *recorder {
	return &recorder{dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, backend)
	}}
}

// start runs a server on a free loopback port until the test ends, and checks that Run then
// returned nil.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(t.Context()); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- s.Run(context.Background()) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

// dialServer opens a client connection that gives up after 10 s of silence.
func dialServer(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// The address parts of a request (RFC 1928 §4): ATYP, DST.ADDR, DST.PORT.
func domain(name string, port uint16) []byte {
	return binary.BigEndian.AppendUint16(append([]byte{0x03, byte(len(name))}, name...), port)
}

func ipAddr(ip net.IP, port uint16) []byte {
	if ip4 := ip.To4(); ip4 != nil {
		return binary.BigEndian.AppendUint16(append([]byte{0x01}, ip4...), port)
	}
	return binary.BigEndian.AppendUint16(append([]byte{0x04}, ip.To16()...), port)
}

// request does a SOCKS5 handshake by hand on c, "no authentication", then sends the command
// with the address and returns the reply code.
func request(t *testing.T, c net.Conn, cmd byte, addr []byte) byte {
	t.Helper()
	if _, err := c.Write([]byte{0x05, 0x01, 0x00}); err != nil {
		t.Fatal(err)
	}
	var method [2]byte
	if _, err := io.ReadFull(c, method[:]); err != nil {
		t.Fatalf("method reply: %v", err)
	}
	if method != [2]byte{0x05, 0x00} {
		t.Fatalf("method reply % x, want 05 00", method)
	}
	if _, err := c.Write(append([]byte{0x05, cmd, 0x00}, addr...)); err != nil {
		t.Fatal(err)
	}
	return readReply(t, c)
}

// readReply reads a reply (VER REP RSV ATYP BND.ADDR BND.PORT) and returns REP.
func readReply(t *testing.T, c net.Conn) byte {
	t.Helper()
	var head [4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	if head[0] != 0x05 || head[2] != 0x00 {
		t.Fatalf("reply header % x", head)
	}
	var n int
	switch head[3] {
	case 0x01:
		n = 4
	case 0x04:
		n = 16
	default:
		t.Fatalf("reply address type %#x", head[3])
	}
	if _, err := io.ReadFull(c, make([]byte, n+2)); err != nil {
		t.Fatalf("reply address: %v", err)
	}
	return head[1]
}

// closedByServer reports whether the server closed c: a read ends in EOF or a reset, not in
// the client's own deadline.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := io.Copy(io.Discard, c)
	if err == nil || errors.Is(err, syscall.ECONNRESET) {
		return
	}
	t.Fatalf("want the server to close the connection, read ended with %v", err)
}

func TestNew(t *testing.T) {
	d := failing(ErrNotAllowed)
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"no dialer", Config{}, ErrConfig},
		{"default address", Config{Dialer: d}, nil},
		{"localhost", Config{Dialer: d, ListenAddr: "localhost:0"}, nil},
		{"ipv6 loopback", Config{Dialer: d, ListenAddr: "[::1]:1080"}, nil},
		{"all interfaces", Config{Dialer: d, ListenAddr: ":1080"}, ErrNotLoopback},
		{"unspecified", Config{Dialer: d, ListenAddr: "0.0.0.0:1080"}, ErrNotLoopback},
		{"a name", Config{Dialer: d, ListenAddr: "proxy.example.org:1080"}, ErrNotLoopback},
		{"a lan address", Config{Dialer: d, ListenAddr: "192.168.1.2:1080"}, ErrNotLoopback},
		{"allowed off loopback", Config{Dialer: d, ListenAddr: "0.0.0.0:1080", AllowNonLoopback: true}, nil},
		{"no port", Config{Dialer: d, ListenAddr: "127.0.0.1"}, ErrConfig},
		{"negative limit", Config{Dialer: d, MaxConns: -1}, ErrConfig},
		{"negative timeout", Config{Dialer: d, HandshakeTimeout: -time.Second}, ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("New: %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if tc.cfg.ListenAddr == "" && s.cfg.ListenAddr != DefaultListenAddr {
				t.Errorf("listen address %q, want %q", s.cfg.ListenAddr, DefaultListenAddr)
			}
			if s.cfg.MaxConns != DefaultMaxConns || s.cfg.HandshakeTimeout != DefaultHandshakeTimeout || s.cfg.DialTimeout != DefaultDialTimeout {
				t.Errorf("defaults not filled in: %+v", s.cfg)
			}
			if s.Addr() != nil {
				t.Errorf("New listened: %v", s.Addr())
			}
		})
	}
}

// replier is a dialer error that names its reply itself.
type replier uint8

func (r replier) Error() string     { return fmt.Sprintf("reply %d", uint8(r)) }
func (r replier) SOCKSReply() uint8 { return uint8(r) }

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestReplyCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want uint8
	}{
		{nil, 0x00},
		{ErrNotAllowed, 0x02},
		{fmt.Errorf("exit: %w", ErrNotAllowed), 0x02},
		{ErrRefused, 0x05},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, 0x05},
		{ErrHostUnreachable, 0x04},
		{syscall.EHOSTUNREACH, 0x04},
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, 0x04},
		{ErrNetworkUnreachable, 0x03},
		{syscall.ENETUNREACH, 0x03},
		{ErrTimeout, 0x06},
		{fmt.Errorf("session: %w", context.DeadlineExceeded), 0x06},
		{os.ErrDeadlineExceeded, 0x06},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, 0x06},
		{replier(0x08), 0x08},
		{fmt.Errorf("wrapped: %w", replier(0x02)), 0x02},
		{replier(0x00), 0x01},
		{errors.Join(ErrRefused, replier(0x03)), 0x03},
		{context.Canceled, 0x01},
		{errors.New("something else"), 0x01},
	} {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := ReplyCode(tc.err); got != tc.want {
				t.Errorf("ReplyCode(%v) = %#02x, want %#02x", tc.err, got, tc.want)
			}
		})
	}
}

// TestReplies checks, with handshakes written by hand, the reply a CONNECT gets for each
// outcome of the dial.
func TestReplies(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close() // nothing listens there now: a real dial is refused
	for _, tc := range []struct {
		name   string
		dialer *recorder
		cfg    Config
		want   byte
	}{
		{"not allowed", failing(fmt.Errorf("exit policy: %w", ErrNotAllowed)), Config{}, 0x02},
		{"refused by the exit", failing(ErrRefused), Config{}, 0x05},
		{"refused for real", direct(closedAddr), Config{}, 0x05},
		{"unreachable", failing(ErrHostUnreachable), Config{}, 0x04},
		{"session expired", failing(ErrTimeout), Config{}, 0x06},
		{"dial timeout", &recorder{dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			<-ctx.Done()
			return nil, errors.New("gave up") // says nothing of the deadline: the server knows
		}}, Config{DialTimeout: 50 * time.Millisecond}, 0x06},
		{"replier", failing(replier(0x08)), Config{}, 0x08},
		{"other", failing(errors.New("boom")), Config{}, 0x01},
		{"no connection", failing(nil), Config{}, 0x01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dialer = tc.dialer
			s := start(t, tc.cfg)
			c := dialServer(t, s)
			if got := request(t, c, 0x01, domain("relayd-socks5.invalid", 443)); got != tc.want {
				t.Fatalf("reply %#02x, want %#02x", got, tc.want)
			}
			closedByServer(t, c)
			if st := s.Stats(); st.DialFailed != 1 || st.Connected != 0 {
				t.Errorf("stats %+v, want one failed dial", st)
			}
		})
	}
}

// TestTargetsUnresolved checks that the Dialer receives the target exactly as the client sent
// it: a name is not resolved here (it could not be: .invalid never resolves).
func TestTargetsUnresolved(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr []byte
		want string
	}{
		{"name", domain("relayd-socks5.invalid", 443), "tcp relayd-socks5.invalid:443"},
		{"name that resolves", domain("localhost", 80), "tcp localhost:80"},
		{"ip literal as a name", domain("192.0.2.1", 8080), "tcp 192.0.2.1:8080"},
		{"ipv4", ipAddr(net.ParseIP("192.0.2.7"), 22), "tcp 192.0.2.7:22"},
		{"ipv6", ipAddr(net.ParseIP("2001:db8::1"), 443), "tcp [2001:db8::1]:443"},
		{"ipv6 literal as a name", domain("2001:db8::2", 443), "tcp [2001:db8::2]:443"},
		{"fully qualified", domain("xn--bcher-kva.example.", 443), "tcp xn--bcher-kva.example.:443"},
		{"underscore", domain("_service.example", 443), "tcp _service.example:443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := failing(ErrNotAllowed)
			s := start(t, Config{Dialer: d})
			if got := request(t, dialServer(t, s), 0x01, tc.addr); got != 0x02 {
				t.Fatalf("reply %#02x, want 0x02", got)
			}
			if got := d.Asked(); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("dialer asked for %q, want [%q]", got, tc.want)
			}
		})
	}
	t.Run("no host, no port or an impossible name", func(t *testing.T) {
		d := failing(ErrNotAllowed)
		s := start(t, Config{Dialer: d})
		for _, addr := range [][]byte{domain("", 443), domain("relayd-socks5.invalid", 0), domain("a]b", 80),
			domain("a b.example", 80), domain("a\x00.example", 80), domain("fe80::1%eth0", 80), domain(".", 80)} {
			if got := request(t, dialServer(t, s), 0x01, addr); got != 0x04 {
				t.Errorf("reply %#02x, want 0x04", got)
			}
		}
		if got := d.Asked(); len(got) != 0 {
			t.Errorf("dialer asked for %q", got)
		}
	})
}

// TestUnsupportedCommands checks that BIND, UDP ASSOCIATE and unknown commands get 0x07 and
// never reach the dialer.
func TestUnsupportedCommands(t *testing.T) {
	d := failing(ErrNotAllowed)
	s := start(t, Config{Dialer: d})
	for _, tc := range []struct {
		name string
		cmd  byte
	}{{"bind", 0x02}, {"udp associate", 0x03}, {"unknown", 0x09}} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialServer(t, s)
			if got := request(t, c, tc.cmd, ipAddr(net.IPv4zero, 0)); got != 0x07 {
				t.Fatalf("reply %#02x, want 0x07", got)
			}
			closedByServer(t, c)
		})
	}
	if got := d.Asked(); len(got) != 0 {
		t.Errorf("dialer asked for %q", got)
	}
	if st := s.Stats(); st.Unsupported != 2 {
		t.Errorf("%d unsupported, want 2 (the unknown command is the library's)", st.Unsupported)
	}
}

// TestConcurrencyLimit checks that a connection beyond MaxConns is closed at once and that a
// freed slot serves again.
func TestConcurrencyLimit(t *testing.T) {
	s := start(t, Config{Dialer: failing(ErrNotAllowed), MaxConns: 2, HandshakeTimeout: time.Minute})
	first, _ := dialServer(t, s), dialServer(t, s)
	wait.For(t, func() bool { return s.Stats().Active == 2 }, 10*time.Second, "two connections are served")

	over := dialServer(t, s)
	closedByServer(t, over)
	if st := s.Stats(); st.OverLimit != 1 || st.Active != 2 {
		t.Fatalf("stats %+v, want one over the limit and two active", st)
	}

	_ = first.Close()
	wait.For(t, func() bool { return s.Stats().Active == 1 }, 10*time.Second, "the closed connection's slot is free")
	if got := request(t, dialServer(t, s), 0x01, domain("relayd-socks5.invalid", 80)); got != 0x02 {
		t.Fatalf("reply %#02x after a slot freed, want 0x02", got)
	}
}

// TestHandshakeTimeout checks that a client that says nothing is closed after the handshake
// timeout.
func TestHandshakeTimeout(t *testing.T) {
	s := start(t, Config{Dialer: failing(ErrNotAllowed), HandshakeTimeout: 100 * time.Millisecond})
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"silent", nil},
		{"greeting only", []byte{0x05, 0x01, 0x00}},
		{"half a request", []byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x20, 'a'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialServer(t, s)
			if _, err := c.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			closedByServer(t, c)
		})
	}
	// The server counts a failed handshake as it ends the connection, not necessarily before the
	// client sees it closed: wait for the count.
	if !wait.Until(func() bool { return s.Stats().HandshakeFailed >= 3 }, 5*time.Second) || s.Stats().HandshakeFailed != 3 {
		t.Errorf("%d handshakes failed, want 3", s.Stats().HandshakeFailed)
	}
}

// TestGarbage sends what is not a SOCKS5 handshake: each connection is closed (after a reply
// where the protocol has one), and the server serves a good request afterwards.
func TestGarbage(t *testing.T) {
	d := failing(ErrNotAllowed)
	s := start(t, Config{Dialer: d, HandshakeTimeout: 200 * time.Millisecond})
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7919 + i>>3)
	}
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"junk", junk},
		{"http", []byte("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n")},
		{"socks4", []byte{0x04, 0x01, 0x00, 0x50, 127, 0, 0, 1, 0x00}},
		{"no methods", []byte{0x05, 0x00}},
		{"password only", []byte{0x05, 0x01, 0x02}},
		{"wrong request version", []byte{0x05, 0x01, 0x00, 0x04, 0x01, 0x00, 0x01, 1, 2, 3, 4, 0, 80}},
		{"unknown address type", []byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x09, 1, 2, 3, 4, 0, 80}},
		{"greeting then junk", append([]byte{0x05, 0x01, 0x00}, junk...)},
		{"a name too short", []byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0xff, 'a', 'b'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialServer(t, s)
			_, _ = c.Write(tc.send) // the server may close before reading it all
			closedByServer(t, c)
		})
	}
	if got := d.Asked(); len(got) != 0 {
		t.Errorf("dialer asked for %q", got)
	}
	if got := request(t, dialServer(t, s), 0x01, domain("relayd-socks5.invalid", 80)); got != 0x02 {
		t.Fatalf("reply %#02x after the garbage, want 0x02", got)
	}
}

// TestCloseStopsEverything checks that Close, and the end of Run's context, close the
// listener, the connections in their handshake, the dials under way and the connections being
// carried, and that no goroutine of the server outlives them.
func TestCloseStopsEverything(t *testing.T) {
	for _, how := range []string{"Close", "context"} {
		t.Run(how, func(t *testing.T) {
			before := runtime.NumGoroutine()
			var (
				mu      sync.Mutex
				targets []net.Conn // the exit's ends of carried connections
			)
			dialing := make(chan struct{}, 1)
			d := &recorder{dial: func(ctx context.Context, _, address string) (net.Conn, error) {
				if address == "hang.invalid:1" {
					dialing <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}
				near, far := net.Pipe()
				mu.Lock()
				targets = append(targets, far)
				mu.Unlock()
				return near, nil
			}}
			s, err := New(Config{Dialer: d, ListenAddr: "127.0.0.1:0", HandshakeTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Listen(t.Context()); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ran := make(chan error, 1)
			go func() { ran <- s.Run(ctx) }()

			shaking := dialServer(t, s)
			carried := dialServer(t, s)
			if got := request(t, carried, 0x01, domain("carried.invalid", 1)); got != 0x00 {
				t.Fatalf("reply %#02x, want 0x00", got)
			}
			hanging := dialServer(t, s)
			if _, err := hanging.Write([]byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00}); err != nil {
				t.Fatal(err)
			}
			if _, err := hanging.Write(domain("hang.invalid", 1)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-dialing:
			case <-time.After(10 * time.Second):
				t.Fatal("the hanging dial did not start")
			}
			wait.For(t, func() bool { return s.Stats().Active == 3 }, 10*time.Second, "three connections are served")

			if how == "Close" {
				if err := s.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
			} else {
				cancel()
			}
			select {
			case err := <-ran:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return")
			}
			closedByServer(t, shaking)
			closedByServer(t, carried)
			closedByServer(t, hanging) // after the method reply, and a 0x01 if it wins the race
			mu.Lock()
			for _, c := range targets {
				if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
					t.Errorf("the target's end reads %v, want EOF", err)
				}
				_ = c.Close()
			}
			mu.Unlock()
			if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
				t.Error("the listener still accepts")
			}
			if st := s.Stats(); st.Active != 0 {
				t.Errorf("%d connections still active", st.Active)
			}
			wait.For(t, func() bool { return runtime.NumGoroutine() <= before }, 10*time.Second,
				fmt.Sprintf("the server's goroutines end (%d before)", before))
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if err := s.Run(t.Context()); !errors.Is(err, ErrClosed) {
				t.Errorf("Run after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestDrain: Drain frees the listen address at once and takes no new connection, while a
// connection being carried goes on both ways; Run returns nil once that connection ends.
func TestDrain(t *testing.T) {
	targets := make(chan net.Conn, 1)
	d := &recorder{dial: func(context.Context, string, string) (net.Conn, error) {
		near, far := net.Pipe()
		targets <- far
		return near, nil
	}}
	s, err := New(Config{Dialer: d, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(t.Context()); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- s.Run(t.Context()) }()
	carried := dialServer(t, s)
	if got := request(t, carried, 0x01, domain("carried.invalid", 1)); got != 0x00 {
		t.Fatalf("reply %#02x, want 0x00", got)
	}
	far := <-targets
	addr := s.Addr().String()
	s.Drain()
	ln, err := net.Listen("tcp", addr) // the address is free again
	if err != nil {
		t.Fatalf("the drained server's address: %v", err)
	}
	_ = ln.Close()
	for dir, ends := range map[string][2]net.Conn{"up": {carried, far}, "down": {far, carried}} {
		go func() { _, _ = ends[0].Write([]byte(dir)) }()
		buf := make([]byte, len(dir))
		_ = ends[1].SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(ends[1], buf); err != nil || string(buf) != dir {
			t.Fatalf("%s after Drain: %q, %v", dir, buf, err)
		}
	}
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v with a connection carried", err)
	default:
	}
	_ = carried.Close()
	_ = far.Close()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once the connection ended")
	}
	if err := s.Listen(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Listen after Drain: %v", err)
	}
}
