package packet

import (
	"context"
	"io"
	"sync"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/relayd/relayd/internal/por"
)

// poolBatch is how many ephemeral keys the pool computes at once: their conversions to affine
// coordinates share one field inversion.
const poolBatch = 8

// ephemeral is a precomputed ephemeral key: the secret scalar and its public key 0x04 ‖ X ‖ Y.
type ephemeral struct {
	scalar [32]byte
	pub    [EphemeralKeySize]byte
}

// EphemeralPool holds ephemeral keys computed ahead of time, so that a sender's request does
// only the work that depends on its path and text: an ephemeral key is a fresh random scalar
// and its base-point multiplication (about a third of a packet's public-key work), independent
// of the route. The pool is bounded; Run refills it in the background whenever keys are taken,
// and a route that finds it empty computes its keys itself, as NewRoute does, so the pool never
// makes a send wait.
//
// Every key leaves the pool exactly once: keys travel through a buffered channel, whose receive
// hands each element to one receiver and clears the channel's copy, and the route that takes a
// key clears its own copy of the scalar once the shared secret is derived. It is safe for
// concurrent use.
type EphemeralPool struct {
	rand io.Reader
	keys chan ephemeral
	// want wakes Run when a key was taken (capacity 1: one pending wake-up is enough).
	want chan struct{}
	// randMu serialises reads of rand, which need not be safe for concurrent use.
	randMu sync.Mutex
}

// NewEphemeralPool returns an empty pool of at most size keys drawn from rand (which it reads
// under its own lock, from Fill and Run only). size must be at least 1.
func NewEphemeralPool(rand io.Reader, size int) (*EphemeralPool, error) {
	if rand == nil || size < 1 {
		return nil, ErrPoolConfig
	}
	return &EphemeralPool{rand: rand, keys: make(chan ephemeral, size), want: make(chan struct{}, 1)}, nil
}

// Len returns how many keys the pool holds now.
func (p *EphemeralPool) Len() int { return len(p.keys) }

// Cap returns the most keys the pool holds.
func (p *EphemeralPool) Cap() int { return cap(p.keys) }

// Fill tops the pool up to its capacity, poolBatch keys at a time, and returns the reader's
// error if it fails. Keys computed while routes also take keys are added as long as there is
// room; any that find the pool full are cleared and dropped.
func (p *EphemeralPool) Fill() error {
	return p.fill(context.Background())
}

func (p *EphemeralPool) fill(ctx context.Context) error {
	var batch [poolBatch]ephemeral
	defer clear(batch[:])
	for len(p.keys) < cap(p.keys) {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(poolBatch, cap(p.keys)-len(p.keys))
		if err := p.compute(batch[:n]); err != nil {
			return err
		}
		for i := range n {
			select {
			case p.keys <- batch[i]:
			default: // full: a concurrent Fill got there first
			}
			clear(batch[i].scalar[:])
		}
	}
	return nil
}

// compute draws len(out) scalars and their public keys, with one shared inversion.
func (p *EphemeralPool) compute(out []ephemeral) error {
	var pts [poolBatch]dsecp.JacobianPoint
	p.randMu.Lock()
	for i := range out {
		s, err := drawScalar(p.rand, &out[i].scalar)
		if err != nil {
			p.randMu.Unlock()
			return err
		}
		dsecp.ScalarBaseMultNonConst(&s, &pts[i])
		s.Zero()
	}
	p.randMu.Unlock()
	por.ToAffine(pts[:len(out)])
	for i := range out {
		out[i].pub[0] = 4
		pts[i].X.PutBytesUnchecked(out[i].pub[1:33])
		pts[i].Y.PutBytesUnchecked(out[i].pub[33:65])
	}
	return nil
}

// Run keeps the pool full until ctx ends: it fills it, then refills it each time routes have
// taken keys. It returns ctx's error, or the reader's if that fails.
func (p *EphemeralPool) Run(ctx context.Context) error {
	for {
		if err := p.fill(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.want:
		}
	}
}

// take moves one key out of the pool into e; false when the pool is empty.
func (p *EphemeralPool) take(e *ephemeral) bool {
	select {
	case *e = <-p.keys:
	default:
		return false
	}
	select {
	case p.want <- struct{}{}:
	default:
	}
	return true
}

// NewRoute is NewRoute with the ephemeral keys taken from the pool; the keys it does not find
// there are drawn from rand and computed on the spot. The route is the same as NewRoute's for
// the same keys; each pool key serves this route only.
func (p *EphemeralPool) NewRoute(rand io.Reader, hops []*PublicKey) (*Route, error) {
	return newRoute(rand, hops, p)
}
