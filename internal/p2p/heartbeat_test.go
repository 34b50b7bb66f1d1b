package p2p

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/peers"
)

// peerInfo returns h's view of id.
func peerInfo(t testing.TB, h *Host, id peer.ID) peers.Info {
	t.Helper()
	for _, p := range h.Peers() {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("peer %s not known", id)
	return peers.Info{}
}

func TestHeartbeatQuality(t *testing.T) {
	a := newTestHost(t, func(c *Config) { c.PingTimeout = 500 * time.Millisecond })
	live := newTestHost(t, nil)
	dead := newTestHost(t, nil)
	introduce(t, a, live)
	introduce(t, a, dead)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}()

	eventually(t, 20*time.Second, "live peer quality > 0.9", func() bool {
		return peerInfo(t, a, live.ID()).Quality > 0.9
	})
	eventually(t, 20*time.Second, "dead peer quality < 0.1", func() bool {
		return peerInfo(t, a, dead.ID()).Quality < 0.1
	})
	l := peerInfo(t, a, live.ID())
	if l.LastSeen.IsZero() || l.Latency <= 0 || !l.Connected || l.Quality > 1 {
		t.Errorf("live peer = %+v", l)
	}
	d := peerInfo(t, a, dead.ID())
	if !d.LastSeen.IsZero() || d.Connected || d.Quality < 0 {
		t.Errorf("dead peer = %+v", d)
	}
	if err := a.Run(ctx); err == nil {
		t.Error("second Run = nil, want error")
	}
}

func TestPing(t *testing.T) {
	a := newTestHost(t, nil)
	b := newTestHost(t, nil)
	introduce(t, a, b)
	rtt, err := a.Ping(t.Context(), b.ID())
	if err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if rtt <= 0 || rtt > 5*time.Second {
		t.Errorf("Ping rtt = %s", rtt)
	}
	p := peerInfo(t, a, b.ID())
	if p.Latency != rtt || p.LastSeen.IsZero() || p.Quality <= InitialQuality {
		t.Errorf("after Ping: %+v", p)
	}

	unknown, err := peer.IDFromPrivateKey(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   peer.ID
		want error
	}{
		{"self", a.ID(), ErrSelf},
		{"unknown", unknown, ErrNoAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := a.Ping(t.Context(), tc.id); !errors.Is(err, tc.want) {
				t.Errorf("Ping = %v, want %v", err, tc.want)
			}
		})
	}
}
