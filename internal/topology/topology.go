package topology

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// DefaultMaxEntries bounds a candidate's lottery entries when Params.MaxEntries is 0.
const DefaultMaxEntries = 64

// Candidate is a node that may relay in a layer, as every node reads it from public data: its
// id (a libp2p peer id's bytes, or any identity unique to the node and the same for every
// reader), its stake (the tokens it holds for relaying: its safe's balance or its channels'
// funds, as the network decides; nil is none), and whether its announcement was mined before the
// epoch started (a candidate announced later waits for the next epoch).
type Candidate struct {
	ID        string
	Stake     *big.Int
	Announced bool
}

// Params is a network's layered topology: Layers layers of at most Width relayers each, drawn
// among the announced candidates whose stake is at least MinStake. Each eligible candidate holds
// one lottery entry per MinStake of stake, at most MaxEntries (0: DefaultMaxEntries); with
// MinStake nil or 0 every announced candidate holds one.
type Params struct {
	Layers, Width int
	MinStake      *big.Int
	MaxEntries    int
}

func (p Params) validate() error {
	switch {
	case p.Layers < 1 || p.Layers > 16:
		return fmt.Errorf("%w: layers %d, want 1 to 16", ErrBadParams, p.Layers)
	case p.Width < 1:
		return fmt.Errorf("%w: width %d, want at least 1", ErrBadParams, p.Width)
	case p.MinStake != nil && p.MinStake.Sign() < 0:
		return fmt.Errorf("%w: negative minimum stake", ErrBadParams)
	case p.MaxEntries < 0:
		return fmt.Errorf("%w: negative entries", ErrBadParams)
	}
	return nil
}

// EpochOfBlock is the epoch of a chain block when an epoch lasts epochBlocks blocks (at least
// 1): block / epochBlocks. The epoch's seed should come from the hash of its first block
// (Seed), which every node reads from the chain and no candidate chooses.
func EpochOfBlock(block, epochBlocks uint64) uint64 { return block / max(epochBlocks, 1) }

// EpochAt is the epoch at time t when epochs of length (positive) start at genesis: for a
// network without a chain beacon, or a simulation. Before genesis it is 0.
func EpochAt(t, genesis time.Time, length time.Duration) uint64 {
	if length <= 0 || t.Before(genesis) {
		return 0
	}
	return uint64(t.Sub(genesis) / length)
}

// Seed is the epoch's seed: SHA-256 over a domain tag, the epoch number (big-endian) and the
// beacon, the hash of the epoch's first block (empty without a chain: then the draw is as
// predictable as the epoch number, and only the stake weighting holds against grinding ids).
func Seed(epoch uint64, beacon []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("relayd/topology/v1"))
	var e [8]byte
	binary.BigEndian.PutUint64(e[:], epoch)
	h.Write(e[:])
	h.Write(beacon)
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// Topology is one epoch's layers. It is immutable and safe for concurrent use.
type Topology struct {
	epoch   uint64
	layers  [][]string
	layerOf map[string]int
}

// ranked is an eligible candidate and its lottery key (the least of its entries' hashes).
type ranked struct {
	id  string
	key [32]byte
}

// Draw derives the epoch's layers from the candidates: the eligible ones (announced, stake at
// least p.MinStake) ranked by their least entry hash SHA-256(seed ‖ len(id) ‖ id ‖ entry); the
// first Layers × width of them, width being p.Width or, with fewer eligible candidates,
// eligible / Layers; the i-th in rank goes to layer i mod Layers. The result does not depend on
// the order of cands; a candidate listed twice counts once, with its largest stake.
// Errors: ErrBadParams, ErrTooFewCandidates.
func Draw(p Params, epoch uint64, seed [32]byte, cands []Candidate) (*Topology, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	maxEntries := p.MaxEntries
	if maxEntries == 0 {
		maxEntries = DefaultMaxEntries
	}
	best := map[string]*big.Int{}
	for _, c := range cands {
		if !c.Announced {
			continue
		}
		stake := c.Stake
		if stake == nil {
			stake = new(big.Int)
		}
		if old, ok := best[c.ID]; !ok || stake.Cmp(old) > 0 {
			best[c.ID] = stake
		}
	}
	var rs []ranked
	for id, stake := range best {
		n := entries(stake, p.MinStake, maxEntries)
		if n == 0 {
			continue
		}
		rs = append(rs, ranked{id: id, key: key(seed, id, n)})
	}
	width := min(p.Width, len(rs)/p.Layers)
	if width == 0 {
		return nil, fmt.Errorf("%w: %d eligible for %d layers", ErrTooFewCandidates, len(rs), p.Layers)
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := bytes.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.id), []byte(b.id))
	})
	t := &Topology{epoch: epoch, layers: make([][]string, p.Layers), layerOf: make(map[string]int, p.Layers*width)}
	for i, r := range rs[:p.Layers*width] {
		k := i % p.Layers
		t.layers[k] = append(t.layers[k], r.id)
		t.layerOf[r.id] = k
	}
	return t, nil
}

// entries is a stake's lottery entries: one per minStake, at most limit; 0 below minStake. With
// no threshold every candidate holds one.
func entries(stake, minStake *big.Int, limit int) int {
	if minStake == nil || minStake.Sign() == 0 {
		return 1
	}
	if stake.Cmp(minStake) < 0 {
		return 0
	}
	q := new(big.Int).Quo(stake, minStake)
	if !q.IsInt64() || q.Int64() > int64(limit) {
		return limit
	}
	return int(q.Int64())
}

// key is the least of the candidate's n entry hashes.
func key(seed [32]byte, id string, n int) [32]byte {
	var least [32]byte
	buf := make([]byte, 0, 32+8+len(id)+4)
	for e := range n {
		buf = buf[:0]
		buf = append(buf, seed[:]...)
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(id)))
		buf = append(buf, id...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e))
		h := sha256.Sum256(buf)
		if e == 0 || bytes.Compare(h[:], least[:]) < 0 {
			least = h
		}
	}
	return least
}

// Epoch is the epoch the layers were drawn for.
func (t *Topology) Epoch() uint64 { return t.epoch }

// Layers returns the layers in path order, each its relayers in rank order (a copy).
func (t *Topology) Layers() [][]string {
	out := make([][]string, len(t.layers))
	for k, l := range t.layers {
		out[k] = slices.Clone(l)
	}
	return out
}

// Len is the number of layers.
func (t *Topology) Len() int { return len(t.layers) }

// Width is the relayers per layer (every layer has as many).
func (t *Topology) Width() int { return len(t.layers[0]) }

// Layer returns layer k's relayers (0 is the first a path crosses); the slice is the
// Topology's own: do not modify it.
func (t *Topology) Layer(k int) []string { return t.layers[k] }

// LayerOf reports the layer of id (0-based) and whether id relays in this epoch.
func (t *Topology) LayerOf(id string) (int, bool) {
	k, ok := t.layerOf[id]
	return k, ok
}

// Next returns the relayers id forwards to: the next layer's (none for the last layer or a node
// outside the layers). The channel strategy of a layered network opens a channel from a relayer
// to each of them; a node outside opens its channels to Layer(0).
func (t *Topology) Next(id string) []string {
	k, ok := t.layerOf[id]
	if !ok || k+1 >= len(t.layers) {
		return nil
	}
	return t.layers[k+1]
}

// Allowed reports whether id may be the position-th relayer (0-based) of a path: whether it
// relays in layer position.
func (t *Topology) Allowed(position int, id string) bool {
	k, ok := t.layerOf[id]
	return ok && k == position
}

// Valid reports whether relayers (a path's relayers in order, without its sender and recipient)
// obey the layers: one relayer of each layer, in order.
func (t *Topology) Valid(relayers []string) bool {
	if len(relayers) != len(t.layers) {
		return false
	}
	for i, id := range relayers {
		if !t.Allowed(i, id) {
			return false
		}
	}
	return true
}
