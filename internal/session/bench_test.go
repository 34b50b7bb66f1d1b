package session

import (
	"crypto/sha256"
	"testing"
	"time"
)

// BenchmarkTransfer sends 1 MiB from the entry to the exit over a lossless in-memory link (500
// bytes forward, 472 back), a new session each time: the transport's own cost, no network.
func BenchmarkTransfer(b *testing.B) {
	const size = 1 << 20
	data := randomBytes(10, size)
	want := sha256.Sum256(data)
	p := newPair(b, fastConfig(), netem{}, netem{})
	b.SetBytes(size)
	b.ReportAllocs()
	var frames int64
	for b.Loop() {
		entry, exit := p.connect(b, ModeTCP)
		_ = entry.SetDeadline(time.Now().Add(time.Minute))
		_ = exit.SetDeadline(time.Now().Add(time.Minute))
		before := p.ab.sent.Load() + p.ba.sent.Load()
		sent := sendAll(entry, data)
		r := <-readAll(exit)
		if err := <-sent; err != nil {
			b.Fatal(err)
		}
		if r.err != nil || r.sum != want {
			b.Fatalf("read %d bytes: %v", r.n, r.err)
		}
		frames += p.ab.sent.Load() + p.ba.sent.Load() - before
		_ = exit.Close()
		_ = entry.Close()
	}
	b.ReportMetric(float64(frames)/float64(b.N), "frames/op")
}
