package api

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/gateway"
)

// The scripted refusals of fakeSessions.Open.
const (
	// fakeBusyListen is an address in use.
	fakeBusyListen = "127.0.0.1:1"
	// fakeFullService is a service whose session would be one too many.
	fakeFullService = "full"
	// fakeBadTarget is a target the gateway finds malformed.
	fakeBadTarget = "bad..name:80"
)

// fakeSessions plays the session gateway: Open listens nowhere and gives each session the id
// 5e0c1f8a9b3d4e5f, then …60, …61; the listen address asked, or 127.0.0.1:40000+n for a free
// port. It refuses fakeBusyListen (in use), fakeFullService (the limit) and fakeBadTarget, and a
// destination other than allowed when allowed is set. opened records what Open got.
type fakeSessions struct {
	mu     sync.Mutex
	list   []gateway.Info
	opened []gateway.Open
	closed []string
	n      int
}

// reset holds one open session, to dest, with traffic.
func (f *fakeSessions) reset(info ...gateway.Info) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list, f.opened, f.closed, f.n = slices.Clone(info), nil, nil, len(info)
}

// fakeSessionID is the id of the nth session (from 0).
func fakeSessionID(n int) string { return fmt.Sprintf("5e0c1f8a9b3d%04x", 0x4e5f+n) }

func (f *fakeSessions) Open(ctx context.Context, o gateway.Open) (gateway.Info, error) {
	switch {
	case o.Listen == fakeBusyListen:
		return gateway.Info{}, fmt.Errorf("%w: listen tcp %s: bind: address already in use", gateway.ErrListen, o.Listen)
	case o.Service == fakeFullService:
		return gateway.Info{}, fmt.Errorf("%w: 1000 open", gateway.ErrLimit)
	case o.Target == fakeBadTarget:
		return gateway.Info{}, fmt.Errorf("%w: target %q is no host name", gateway.ErrBadOpen, o.Target)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	listen := o.Listen
	if listen == "" || listen == gateway.DefaultListen {
		listen = fmt.Sprintf("127.0.0.1:%d", 40000+f.n)
	}
	info := gateway.Info{ID: fakeSessionID(f.n), Destination: o.Destination, Protocol: o.Protocol, Target: o.Target, Service: o.Service,
		Listen: listen, Opened: time.Date(2026, 11, 26, 22, 40, 0, 0, time.UTC)}
	f.n++
	f.opened = append(f.opened, o)
	f.list = append(f.list, info)
	return info, nil
}

func (f *fakeSessions) List() []gateway.Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.list)
}

func (f *fakeSessions) Close(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.list, func(s gateway.Info) bool { return s.ID == id })
	if i < 0 {
		return fmt.Errorf("close %s: %w", id, gateway.ErrUnknownSession)
	}
	f.list = slices.Delete(f.list, i, i+1)
	f.closed = append(f.closed, id)
	return nil
}

// faultySessions is a gateway whose every call that can fail fails with err.
type faultySessions struct {
	*fakeSessions
	err error
}

func (f faultySessions) Open(context.Context, gateway.Open) (gateway.Info, error) {
	return gateway.Info{}, f.err
}
func (f faultySessions) Close(string) error { return f.err }

// fakeOpenSession is a TCP session to dest that carried some traffic.
func fakeOpenSession(dest peer.ID) gateway.Info {
	return gateway.Info{ID: fakeSessionID(0), Destination: dest, Protocol: gateway.TCP, Target: "example.org:443", Listen: "127.0.0.1:40000",
		Opened: time.Date(2026, 11, 26, 22, 40, 0, 0, time.UTC), Active: 1, Total: 3, BytesOut: 5120, BytesIn: 1 << 20,
		RateOut: 120.54, RateIn: 98304, Retransmits: 4}
}
