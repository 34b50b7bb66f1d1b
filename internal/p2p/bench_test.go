package p2p

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// BenchmarkSendFrames measures one-way throughput of 1 KiB frames from A to B over
// loopback on one long-lived stream, until B's handler has seen every frame: /tcp
// is TCP+Noise+Yamux (what nodes prefer), /quic is QUIC v1 for comparison.
// Run: go test -run '^$' -bench BenchmarkSendFrames ./internal/p2p/
func BenchmarkSendFrames(b *testing.B) {
	for _, tc := range []struct{ name, listen string }{
		{"tcp", tcpLoopback},
		{"quic", quicLoopback},
	} {
		b.Run(tc.name, func(b *testing.B) { benchmarkSendFrames(b, tc.listen) })
	}
}

func benchmarkSendFrames(b *testing.B, listen string) {
	edit := func(c *Config) { c.ListenAddrs = mustAddrs(b, listen) }
	a := newTestHost(b, edit)
	dst := newTestHost(b, edit)
	var got atomic.Int64
	if err := dst.Handle(ProtocolMsg, func(peer.ID, []byte) { got.Add(1) }); err != nil {
		b.Fatal(err)
	}
	introduce(b, a, dst)
	frame := make([]byte, 1024)
	// Warm up: connect and open the stream.
	if err := a.Send(b.Context(), dst.ID(), ProtocolMsg, frame); err != nil {
		b.Fatal(err)
	}
	eventually(b, 10*time.Second, "warm-up frame", func() bool { return got.Load() == 1 })
	got.Store(0)

	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; {
		err := a.Send(b.Context(), dst.ID(), ProtocolMsg, frame)
		switch {
		case err == nil:
			i++
		case errors.Is(err, ErrQueueFull):
			time.Sleep(20 * time.Microsecond) // let the writer drain
		default:
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for got.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d frames", got.Load(), b.N)
		}
		time.Sleep(50 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "frames/s")
}
