package packet

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/relayd/relayd/internal/wait"
)

func TestEphemeralPoolConfig(t *testing.T) {
	if _, err := NewEphemeralPool(nil, 8); !errors.Is(err, ErrPoolConfig) {
		t.Fatalf("nil reader: %v", err)
	}
	if _, err := NewEphemeralPool(crand.Reader, 0); !errors.Is(err, ErrPoolConfig) {
		t.Fatalf("size 0: %v", err)
	}
}

// Every key Fill puts in the pool is a valid scalar with its public key, no two alike, and
// taking them empties the pool: a key is handed out once.
func TestEphemeralPoolKeys(t *testing.T) {
	p, err := NewEphemeralPool(newSeededReader(t.Name()), 21) // not a multiple of the batch
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fill(); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 21 || p.Cap() != 21 {
		t.Fatalf("len %d cap %d", p.Len(), p.Cap())
	}
	seen := map[[32]byte]bool{}
	var e ephemeral
	for p.take(&e) {
		if seen[e.scalar] {
			t.Fatal("a scalar came out of the pool twice")
		}
		seen[e.scalar] = true
		var s dsecp.ModNScalar
		if overflow := s.SetBytes(&e.scalar); overflow != 0 || s.IsZero() {
			t.Fatal("invalid scalar")
		}
		var pt dsecp.JacobianPoint
		dsecp.ScalarBaseMultNonConst(&s, &pt)
		pt.ToAffine()
		var want [EphemeralKeySize]byte
		want[0] = 4
		pt.X.PutBytesUnchecked(want[1:33])
		pt.Y.PutBytesUnchecked(want[33:])
		if want != e.pub {
			t.Fatal("public key is not scalar·G")
		}
	}
	if len(seen) != 21 || p.Len() != 0 {
		t.Fatalf("took %d keys, %d left", len(seen), p.Len())
	}
}

// A route built from the pool peels like any other: every hop derives the secret the route
// holds, and the recipient reads the message.
func TestEphemeralPoolRoutePeels(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	p, err := NewEphemeralPool(newSeededReader(t.Name()+" pool"), 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fill(); err != nil {
		t.Fatal(err)
	}
	msg := Message{Text: []byte("from the pool"), Timestamp: 0}
	// The first route takes 3 of the 4 keys, the second 1 from the pool and 2 computed.
	for round := range 2 {
		r, err := p.NewRoute(rand, pubs(nodes))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Len(), []int{1, 0}[round]; got != want {
			t.Fatalf("round %d: %d keys left, want %d", round, got, want)
		}
		pkt, err := r.Seal(msg, testPoR(3))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range nodes {
			got, err := Peel(n.priv, pkt, t0, newMemReplay())
			if err != nil {
				t.Fatalf("round %d hop %d: %v", round, i, err)
			}
			if got.Secret != r.Secret(i) {
				t.Fatalf("round %d hop %d: secret differs from the route's", round, i)
			}
			pkt = got.Next
			if i == 2 && (!got.Final || !bytes.Equal(got.Message.Text, msg.Text)) {
				t.Fatalf("round %d: recipient got %+v", round, got)
			}
		}
	}
}

// No reuse under concurrency: routes built at once by several goroutines while Run refills the
// pool never share an ephemeral key, whether it came from the pool or was computed on the spot.
// Run with -race.
func TestEphemeralPoolNoReuse(t *testing.T) {
	nodes := newNodes(t, newSeededReader(t.Name()), 3)
	p, err := NewEphemeralPool(crand.Reader, 16)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	runDone := make(chan error, 1)
	go func() { runDone <- p.Run(ctx) }()
	wait.For(t, func() bool { return p.Len() == p.Cap() }, 10*time.Second, "the pool to fill")

	const workers, routes = 4, 40
	var mu sync.Mutex
	seen := map[[EphemeralKeySize]byte]bool{}
	dup := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range routes {
				r, err := p.NewRoute(crand.Reader, pubs(nodes))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i := range r.Len() {
					if seen[r.hops[i].eph] {
						dup++
					}
					seen[r.hops[i].eph] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if dup != 0 || len(seen) != workers*routes*3 {
		t.Fatalf("%d keys reused, %d distinct of %d", dup, len(seen), workers*routes*3)
	}
	// Run refills what the routes took.
	wait.For(t, func() bool { return p.Len() == p.Cap() }, 10*time.Second, "the pool to refill")
	cancel()
	if err := <-runDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	// The keys left are new too.
	var e ephemeral
	for p.take(&e) {
		if seen[e.pub] {
			t.Fatal("a key left in the pool was already used by a route")
		}
	}
}

// A route takes what keys the pool has and computes the rest; with the pool empty it needs the
// reader. (Its copies of the scalars are cleared by NewRoute once the secrets are derived, and
// the channel clears its slot on receive, so no copy of a used scalar stays in the pool.)
func TestEphemeralsTakeFromPoolThenCompute(t *testing.T) {
	p, err := NewEphemeralPool(newSeededReader(t.Name()), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fill(); err != nil {
		t.Fatal(err)
	}
	var scalars [3][32]byte
	pubs, err := ephemerals(newSeededReader(t.Name()+" inline"), p, scalars[:])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if scalars[i] == ([32]byte{}) || pubs[i][0] != 4 {
			t.Fatalf("key %d missing", i)
		}
	}
	if p.Len() != 0 {
		t.Fatalf("%d keys left", p.Len())
	}
	// A failing reader for the keys the pool lacks fails the route.
	if _, err := ephemerals(failingReader{}, p, scalars[:1]); err == nil {
		t.Fatal("no error from a failing reader")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no randomness") }
