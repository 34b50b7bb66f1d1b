package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/wait"
)

// refuseDial is a Dialer whose exit refuses every session.
func refuseDial(context.Context, peer.ID, session.Mode, []byte) (*session.Conn, error) {
	return nil, session.ErrRefused
}

func newEntry(t *testing.T, cfg EntryConfig) *Entry {
	t.Helper()
	if cfg.Self == "" {
		cfg.Self = "self"
	}
	if cfg.Dial == nil {
		cfg.Dial = refuseDial
	}
	e, err := NewEntry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

// TestOpenRefusals: Open refuses a malformed request (ErrBadOpen), this node as the destination
// (ErrSelf), an address off the loopback interface, one that is not host:port and one in use
// (ErrListen), and a session beyond MaxSessions (ErrLimit); a refused Open holds nothing.
func TestOpenRefusals(t *testing.T) {
	e := newEntry(t, EntryConfig{MaxSessions: 2})
	busyTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyTCP.Close()
	busyUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyUDP.Close()
	ok := Open{Destination: "exit", Protocol: TCP, Target: "example.org:80"}
	with := func(f func(*Open)) Open { o := ok; f(&o); return o }
	for _, tc := range []struct {
		name string
		open Open
		want error
	}{
		{"no destination", with(func(o *Open) { o.Destination = "" }), ErrBadOpen},
		{"self", with(func(o *Open) { o.Destination = "self" }), ErrSelf},
		{"no protocol", with(func(o *Open) { o.Protocol = "" }), ErrBadOpen},
		{"protocol sctp", with(func(o *Open) { o.Protocol = "sctp" }), ErrBadOpen},
		{"protocol TCP in capitals", with(func(o *Open) { o.Protocol = "TCP" }), ErrBadOpen},
		{"neither target nor service", with(func(o *Open) { o.Target = "" }), ErrBadOpen},
		{"target and service", with(func(o *Open) { o.Service = "web" }), ErrBadOpen},
		{"bad service", with(func(o *Open) { o.Target, o.Service = "", "web site" }), ErrBadOpen},
		{"target without port", with(func(o *Open) { o.Target = "example.org" }), ErrBadOpen},
		{"target port 0", with(func(o *Open) { o.Target = "example.org:0" }), ErrBadOpen},
		{"target port 65536", with(func(o *Open) { o.Target = "example.org:65536" }), ErrBadOpen},
		{"target port 080", with(func(o *Open) { o.Target = "example.org:080" }), ErrBadOpen},
		{"target with a space", with(func(o *Open) { o.Target = "example .org:80" }), ErrBadOpen},
		{"listen on every interface", with(func(o *Open) { o.Listen = "0.0.0.0:0" }), ErrListen},
		{"listen on an empty host", with(func(o *Open) { o.Listen = ":0" }), ErrListen},
		{"listen off loopback", with(func(o *Open) { o.Listen = "192.0.2.1:0" }), ErrListen},
		{"listen not host:port", with(func(o *Open) { o.Listen = "127.0.0.1" }), ErrListen},
		{"listen on a busy TCP port", with(func(o *Open) { o.Listen = busyTCP.Addr().String() }), ErrListen},
		{"listen on a busy UDP port", with(func(o *Open) { o.Protocol, o.Listen = UDP, busyUDP.LocalAddr().String() }), ErrListen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if info, err := e.Open(t.Context(), tc.open); !errors.Is(err, tc.want) {
				t.Fatalf("Open: %+v, %v; want %v", info, err, tc.want)
			}
			if l := e.List(); len(l) != 0 {
				t.Fatalf("a refused Open holds %+v", l)
			}
		})
	}

	// MaxSessions: two open, a third refused until one closes.
	a, err := e.Open(t.Context(), ok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(t.Context(), with(func(o *Open) { o.Listen = "localhost:0" })); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(t.Context(), ok); !errors.Is(err, ErrLimit) {
		t.Fatalf("a third session: %v, want ErrLimit", err)
	}
	if err := e.Close(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(t.Context(), with(func(o *Open) { o.Protocol = UDP })); err != nil {
		t.Fatalf("after a Close: %v", err)
	}

	// A node that allows it listens off the loopback interface.
	open := newEntry(t, EntryConfig{AllowNonLoopback: true})
	if info, err := open.Open(t.Context(), with(func(o *Open) { o.Listen = "0.0.0.0:0" })); err != nil {
		t.Fatalf("AllowNonLoopback: %+v, %v", info, err)
	}
}

// TestListCloseShutdown: List gives the open sessions oldest first as opened; Close ends one
// (its listener no longer accepts, its id is then unknown) and keeps the others' order;
// Shutdown closes all and refuses new ones.
func TestListCloseShutdown(t *testing.T) {
	e := newEntry(t, EntryConfig{})
	opens := []Open{
		{Destination: "exit", Protocol: TCP, Target: "example.org:80"},
		{Destination: "exit", Protocol: UDP, Target: "[2001:db8::1]:53"},
		{Destination: "other", Protocol: TCP, Service: "web"},
		{Destination: "exit", Protocol: TCP, Target: "example.net:443"},
	}
	var infos []Info
	for _, o := range opens {
		before := time.Now()
		info, err := e.Open(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(info.ID) || info.Destination != o.Destination ||
			info.Protocol != o.Protocol || info.Target != o.Target || info.Service != o.Service ||
			info.Opened.Before(before) || info.Active != 0 || info.Total != 0 {
			t.Fatalf("Open %+v: %+v", o, info)
		}
		if host, port, err := net.SplitHostPort(info.Listen); err != nil || host != "127.0.0.1" || port == "0" {
			t.Fatalf("listens on %q", info.Listen)
		}
		infos = append(infos, info)
	}
	ids := func() []string {
		var out []string
		for _, i := range e.List() {
			out = append(out, i.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{infos[0].ID, infos[1].ID, infos[2].ID, infos[3].ID}) {
		t.Fatalf("List: %v", got)
	}

	// A connection to a session whose exit refuses is closed without a byte and counted.
	c := dial(t, "tcp", infos[0].Listen)
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a refused connection read %d, %v", n, err)
	}
	wait.For(t, func() bool { l := e.List(); return l[0].Total == 1 && l[0].Active == 0 }, 10*time.Second, "the connection counted and gone")

	if err := e.Close(infos[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(infos[1].ID); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("closing again: %v", err)
	}
	if err := e.Close("0123456789abcdef"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("closing an unknown id: %v", err)
	}
	if got := ids(); !slices.Equal(got, []string{infos[0].ID, infos[2].ID, infos[3].ID}) {
		t.Fatalf("List after a Close: %v", got)
	}
	// Its UDP port is free again: a socket binds it.
	if pc, err := net.ListenPacket("udp", infos[1].Listen); err != nil {
		t.Fatalf("the closed session's port: %v", err)
	} else {
		pc.Close()
	}

	e.Shutdown()
	if l := e.List(); len(l) != 0 {
		t.Fatalf("after Shutdown: %+v", l)
	}
	for _, i := range []int{0, 2, 3} {
		if c, err := net.DialTimeout("tcp", infos[i].Listen, time.Second); err == nil {
			c.Close()
			t.Fatalf("session %d still listens after Shutdown", i)
		}
	}
	if _, err := e.Open(t.Context(), opens[0]); !errors.Is(err, ErrListen) {
		t.Fatalf("Open after Shutdown: %v, want ErrListen", err)
	}
	e.Shutdown() // twice is harmless
}

// TestCloseEndsConnections: closing a session ends the connections it carries: one waiting for
// its session to open is closed without a byte, and the Close returns.
func TestCloseEndsConnections(t *testing.T) {
	dialing := make(chan struct{}, 1)
	e := newEntry(t, EntryConfig{Dial: func(ctx context.Context, _ peer.ID, _ session.Mode, _ []byte) (*session.Conn, error) {
		dialing <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	info, err := e.Open(t.Context(), Open{Destination: "exit", Protocol: TCP, Target: "example.org:80"})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, "tcp", info.Listen)
	<-dialing
	if l := e.List(); l[0].Active != 1 || l[0].Total != 1 {
		t.Fatalf("a connection opening: %+v", l[0])
	}
	if err := e.Close(info.ID); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); len(b) != 0 || err != nil {
		t.Fatalf("the connection read %d bytes, %v; want EOF", len(b), err)
	}
}
