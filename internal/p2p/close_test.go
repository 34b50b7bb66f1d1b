package p2p

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// exercise starts two hosts, sends frames both ways, pings, runs the heartbeat,
// and closes both, with a handler still busy when Close starts.
func exercise(t *testing.T) {
	listen := func(c *Config) { c.ListenAddrs = mustAddrs(t, tcpLoopback, quicLoopback) }
	a, err := New(withEdit(testConfig(t), listen))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(withEdit(testConfig(t), listen))
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	slow := make(chan struct{})
	entered := make(chan struct{}, 1)
	for _, h := range []*Host{a, b} {
		if err := h.Handle(ProtocolMsg, func(peer.ID, []byte) { got.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Handle(ProtocolAck, func(peer.ID, []byte) {
		entered <- struct{}{}
		<-slow
	}); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b)
	introduce(t, b, a)
	ctx, cancel := context.WithCancel(t.Context())
	runDone := make(chan struct{})
	go func() { defer close(runDone); _ = a.Run(ctx) }()
	for range 100 {
		_ = a.Send(t.Context(), b.ID(), ProtocolMsg, []byte("ab"))
		_ = b.Send(t.Context(), a.ID(), ProtocolMsg, []byte("ba"))
	}
	_ = a.Send(t.Context(), b.ID(), ProtocolAck, []byte("ack"))
	eventually(t, 10*time.Second, "frames both ways", func() bool { return got.Load() == 200 })
	if _, err := b.Ping(t.Context(), a.ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("ack handler not called")
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a handler was still running", err)
	case <-time.After(50 * time.Millisecond): // proves a negative: Close must still be waiting
	}
	close(slow)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-runDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	cancel()
}

func withEdit(c Config, edit func(*Config)) Config {
	edit(&c)
	return c
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	exercise(t) // the first run starts libp2p's process-wide goroutines
	before := runtime.NumGoroutine()
	exercise(t)
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}
