package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/identity"
)

// sessionsFake plays the gateway: Open gives ids 5e0c1f8a9b3d0000, …01 and 127.0.0.1:40000+n
// unless a listen address is asked, and refuses 127.0.0.1:1 (in use); err, when set, is every
// call's.
type sessionsFake struct {
	opened []gateway.Open
	list   []gateway.Info
	closed []string
	err    error
}

func (f *sessionsFake) Open(_ context.Context, o gateway.Open) (gateway.Info, error) {
	if f.err != nil {
		return gateway.Info{}, f.err
	}
	if o.Listen == "127.0.0.1:1" {
		return gateway.Info{}, fmt.Errorf("%w: listen tcp 127.0.0.1:1: bind: address already in use", gateway.ErrListen)
	}
	f.opened = append(f.opened, o)
	listen := o.Listen
	if listen == "" {
		listen = fmt.Sprintf("127.0.0.1:%d", 40000+len(f.opened)-1)
	}
	s := gateway.Info{ID: fmt.Sprintf("5e0c1f8a9b3d%04x", len(f.opened)-1), Destination: o.Destination, Protocol: o.Protocol,
		Target: o.Target, Service: o.Service, Listen: listen, Opened: time.Date(2026, 11, 26, 22, 40, 0, 0, time.UTC)}
	f.list = append(f.list, s)
	return s, nil
}

func (f *sessionsFake) List() []gateway.Info { return slices.Clone(f.list) }

func (f *sessionsFake) Close(id string) error {
	if f.err != nil {
		return f.err
	}
	i := slices.IndexFunc(f.list, func(s gateway.Info) bool { return s.ID == id })
	if i < 0 {
		return fmt.Errorf("close %s: %w", id, gateway.ErrUnknownSession)
	}
	f.list = slices.Delete(f.list, i, i+1)
	f.closed = append(f.closed, id)
	return nil
}

// sessionConsole is a console with the gateway (nil: without it) and bob's PeerId.
func sessionConsole(t *testing.T, s Sessions) (*Commands, peer.ID) {
	t.Helper()
	self, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	bob, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Version: "9.9.9", Self: fakeSelf{self.PeerID()}, Peers: resolvePeers{self: self.PeerID(), bob: bob.PeerID()},
		Settings: fixedSettings{}, Messenger: &sendMessenger{}, Sessions: s}
	c := &console{cfg: cfg}
	cmds, err := NewCommands(c.sessionCommands()...)
	if err != nil {
		t.Fatal(err)
	}
	return cmds, bob.PeerID()
}

// TestSessionCommands: session open hands the gateway the resolved peer, the protocol and the
// target, service or listen address, and says where the session listens; sessions lists the open
// ones with their rates; session close ends one.
func TestSessionCommands(t *testing.T) {
	f := &sessionsFake{}
	cmds, bob := sessionConsole(t, f)
	run := func(line string) []string {
		t.Helper()
		r := cmds.Run(t.Context(), line)
		if r.Failed {
			t.Fatalf("%s: %q", line, r.Lines)
		}
		return r.Lines
	}
	if got := run("sessions"); !slices.Equal(got, []string{"No open sessions."}) {
		t.Fatalf("no sessions: %q", got)
	}
	got := run("session open bob tcp example.org:443")
	want := "Session 5e0c1f8a9b3d0000 open: tcp on 127.0.0.1:40000 to " + bob.String() + " for example.org:443. " +
		"Connect to 127.0.0.1:40000; session close 5e0c1f8a9b3d0000 ends it."
	if !slices.Equal(got, []string{want}) {
		t.Fatalf("open:\n%q\nwant %q", got, want)
	}
	if got := run("session   open " + bob.String() + " UDP service:dns [::1]:5353"); !strings.Contains(got[0], "udp on [::1]:5353 to "+bob.String()+" for service:dns") {
		t.Fatalf("open a service: %q", got)
	}
	if !slices.Equal(f.opened, []gateway.Open{
		{Destination: bob, Protocol: gateway.TCP, Target: "example.org:443"},
		{Destination: bob, Protocol: gateway.UDP, Service: "dns", Listen: "[::1]:5353"},
	}) {
		t.Fatalf("the gateway was asked %+v", f.opened)
	}

	f.list[0].Active, f.list[0].Total, f.list[0].BytesOut, f.list[0].BytesIn = 1, 3, 5120, 1<<20
	f.list[0].RateOut, f.list[0].RateIn, f.list[0].Retransmits = 120.4, 98304, 4
	got = run("sessions")
	if len(got) != 3 || got[0] != "2 open sessions:" {
		t.Fatalf("sessions: %q", got)
	}
	want = "5e0c1f8a9b3d0000 tcp 127.0.0.1:40000 -> " + bob.String() + " example.org:443: 1 active, 3 in all; " +
		"out 120 B/s (5.1 kB), in 98.3 kB/s (1.0 MB); 4 retransmits; opened 2026-11-26T22:40:00.000Z"
	if got[1] != want {
		t.Fatalf("sessions:\n%q\nwant %q", got[1], want)
	}
	if !strings.HasPrefix(got[2], "5e0c1f8a9b3d0001 udp [::1]:5353 -> "+bob.String()+" service:dns: 0 active") {
		t.Fatalf("sessions: %q", got[2])
	}
	if list := run("session list"); !slices.Equal(list, got) {
		t.Fatalf("session list %q, sessions %q", list, got)
	}

	if got := run("session close 5E0C1F8A9B3D0000"); !slices.Equal(got, []string{"Session 5e0c1f8a9b3d0000 closed."}) {
		t.Fatalf("close: %q", got)
	}
	if got := run("sessions"); len(got) != 2 || got[0] != "1 open session:" {
		t.Fatalf("after close: %q", got)
	}
	if !slices.Equal(f.closed, []string{"5e0c1f8a9b3d0000"}) {
		t.Fatalf("closed %q", f.closed)
	}
}

// TestSessionCommandRefusals: bad arguments are usage errors that reach no gateway; the
// gateway's refusals and a node without it say why.
func TestSessionCommandRefusals(t *testing.T) {
	f := &sessionsFake{}
	cmds, _ := sessionConsole(t, f)
	for line, want := range map[string]string{
		"session":                                 "session needs open, close or list. Usage: session open|close|list …",
		"session start bob tcp a:1":               `"start" is not open, close or list. Usage:`,
		"session open bob tcp":                    sessionUsage + ". Usage:",
		"session open bob tcp a:1 b:2 c:3":        sessionUsage + ". Usage:",
		"session open bob sctp a:1":               `"sctp" is neither tcp nor udp. Usage:`,
		"session open bob tcp example.org":        `"example.org" is neither host:port nor service:<name>. Usage:`,
		"session open bob tcp service:":           "service: needs the service's name. Usage:",
		"session open bob tcp a:1 127.0.0.1":      `"127.0.0.1" is not a host:port to listen on. Usage:`,
		"session open me tcp a:1":                 "the destination is this node; a session goes to another node. Usage:",
		"session open nobody tcp a:1":             `Error: "nobody" is neither an alias nor a valid PeerId`,
		"session open bob tcp a:1 127.0.0.1:1":    "Error: gateway: cannot listen: listen tcp 127.0.0.1:1: bind: address already in use",
		"session close":                           "session close needs one session id (sessions lists them). Usage:",
		"session close a b":                       "session close needs one session id (sessions lists them). Usage:",
		"session close 5e0c1f8a9b3d0009":          "Error: no open session 5e0c1f8a9b3d0009",
		"session list now":                        "session list takes no arguments. Usage:",
		"sessions all":                            "sessions takes no arguments. Usage: sessions",
		"session open bob tcp a:1 <img src=x>:80": "Usage:", // five fields
	} {
		r := cmds.Run(t.Context(), line)
		if !r.Failed || len(r.Lines) != 1 || !strings.HasPrefix(r.Lines[0], want) && !strings.Contains(r.Lines[0], want) {
			t.Errorf("%s: %q, want %q", line, r.Lines, want)
		}
	}
	if len(f.opened) != 0 || len(f.closed) != 0 {
		t.Fatalf("refused commands reached the gateway: %+v %q", f.opened, f.closed)
	}
	f.err = errors.New("gateway is closed")
	if r := cmds.Run(t.Context(), "session open bob tcp a:1"); !r.Failed || r.Lines[0] != "Error: gateway is closed" {
		t.Errorf("gateway fails: %q", r.Lines)
	}

	none, _ := sessionConsole(t, nil)
	for _, line := range []string{"sessions", "session list", "session open bob tcp a:1", "session close 5e0c1f8a9b3d0000"} {
		if r := none.Run(t.Context(), line); !r.Failed || !slices.Equal(r.Lines, []string{"Error: " + errNoSessions.Error()}) {
			t.Errorf("without the gateway, %s: %q", line, r.Lines)
		}
	}
}

func TestByteCount(t *testing.T) {
	for v, want := range map[float64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 5120: "5.1 kB", 999949: "999.9 kB",
		999950: "1.0 MB", 1 << 20: "1.0 MB", 2.5e9: "2.5 GB", 1e21: "1000.0 EB", -1: "0 B"} {
		if got := byteCount(v); got != want {
			t.Errorf("byteCount(%v) = %q, want %q", v, got, want)
		}
	}
}

// FuzzSessionArgs: no line makes session open's parser panic, and what it accepts is one
// protocol and exactly one of a target and a service.
func FuzzSessionArgs(f *testing.F) {
	for _, s := range []string{"bob tcp a:1", "bob udp service:dns [::1]:0", "bob tcp", "x y z w v", "bob tcp service:", "bob TCP a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, o, err := sessionArgs(s)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v is no usage error", s, err)
			}
			return
		}
		if name == "" || (o.Protocol != gateway.TCP && o.Protocol != gateway.UDP) || (o.Target == "") == (o.Service == "") {
			t.Fatalf("%q: %q %+v", s, name, o)
		}
	})
}
