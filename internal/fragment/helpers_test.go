package fragment

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func randID(rng *rand.Rand) ID { return ID(randBytes(rng, IDSize)) }

func testLimits() Limits {
	return Limits{MaxMessages: 8, MaxBytes: 1 << 20, Timeout: time.Minute, RememberFor: 10 * time.Minute,
		MaxRemembered: 16, MaxAckBlocks: 2}
}

func newReassembler(t testing.TB, lim Limits) *Reassembler {
	t.Helper()
	r, err := NewReassembler(lim)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// add decodes text and adds it, failing on an error.
func add(t testing.TB, r *Reassembler, now time.Time, text []byte) Result {
	t.Helper()
	f, err := Decode(text)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	res, err := r.Add(now, f)
	if err != nil {
		t.Fatalf("add %v: %v", f.Kind(), err)
	}
	checkInvariants(t, r)
	return res
}

// checkInvariants recounts what r holds and checks it against its counters and limits.
func checkInvariants(t testing.TB, r *Reassembler) {
	t.Helper()
	if n := r.incomplete.Len() + r.completed.Len(); n != len(r.entries) {
		t.Fatalf("%d entries listed, %d in the map", n, len(r.entries))
	}
	if r.incomplete.Len() > r.lim.MaxMessages || r.completed.Len() > r.lim.MaxRemembered {
		t.Fatalf("%d incomplete (max %d), %d completed (max %d)", r.incomplete.Len(), r.lim.MaxMessages, r.completed.Len(), r.lim.MaxRemembered)
	}
	total, done := 0, 0
	for el := r.incomplete.Front(); el != nil; el = el.Next() {
		total += checkEntry(t, r, el.Value.(*entry), false)
	}
	for el := r.completed.Front(); el != nil; el = el.Next() {
		n := checkEntry(t, r, el.Value.(*entry), true)
		total += n
		done += n
	}
	if total != r.bytes || done != r.doneBytes {
		t.Fatalf("held %d bytes (%d completed), counted %d (%d)", total, done, r.bytes, r.doneBytes)
	}
	if r.bytes > r.lim.MaxBytes {
		t.Fatalf("%d bytes held, limit %d", r.bytes, r.lim.MaxBytes)
	}
}

func checkEntry(t testing.TB, r *Reassembler, e *entry, done bool) int {
	t.Helper()
	if e.done != done || r.entries[e.key] != e {
		t.Fatalf("entry %x: done %v in the list of done %v, or not in the map", e.key.id[:4], e.done, done)
	}
	n := 0
	for _, c := range e.chunks {
		n += len(c) + PieceOverhead
	}
	if n != e.chunkBytes {
		t.Fatalf("entry %x: chunks of %d bytes, counted %d", e.key.id[:4], n, e.chunkBytes)
	}
	if done {
		if e.chunks != nil || e.got != nil || e.received != e.total {
			t.Fatal("completed entry holds fragments")
		}
	} else if e.total > 0 && (countBits(e.got) != e.received || len(e.chunks) != e.received || e.received >= e.total) {
		t.Fatalf("entry %x: %d bits, %d chunks, %d received of %d", e.key.id[:4], countBits(e.got), len(e.chunks), e.received, e.total)
	}
	if len(e.partials) > r.lim.MaxAckBlocks || len(e.whole) > r.lim.MaxAckBlocks {
		t.Fatalf("entry %x: %d partial and %d whole ack blocks", e.key.id[:4], len(e.partials), len(e.whole))
	}
	for _, pa := range e.partials {
		m := 0
		for _, p := range pa.parts {
			if p != nil {
				m += len(p) + PieceOverhead
			}
		}
		if m != pa.bytes || pa.have >= len(pa.parts) {
			t.Fatalf("partial round %d: %d bytes counted %d, %d of %d parts", pa.round, m, pa.bytes, pa.have, len(pa.parts))
		}
		n += m
	}
	if !slices.IsSortedFunc(e.whole, func(a, b ackBlock) int { return int(a.round) - int(b.round) }) {
		t.Fatal("ack blocks out of round order")
	}
	for _, b := range e.whole {
		n += len(b.data) + PieceOverhead
	}
	if n != e.bytes {
		t.Fatalf("entry %x holds %d bytes, counted %d", e.key.id[:4], n, e.bytes)
	}
	return n
}
