package bench

import (
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/crypto/secp256k1"

	"github.com/relayd/relayd/internal/por"
)

// Floor is the unavoidable public-key work of each role, timed in this process with the
// libraries and calls the nodes use (go-ethereum's libsecp256k1 for ECDH, signature recovery
// and signing, decred's precomputed base-point multiplication for ephemeral keys and
// proof-of-relay points), in nanoseconds per operation. The machine's speed changes from
// minute to minute, so a node's CPU per packet means something only as a ratio to a floor
// timed in the same run; the tool times it right before and right after the load.
type Floor struct {
	ECDHNs    float64 `json:"ecdhNs"`    // one variable-base multiplication (Peel's, and the sender's per hop)
	RecoverNs float64 `json:"recoverNs"` // one ecrecover (an incoming ticket's signer)
	SignNs    float64 `json:"signNs"`    // one signature (an outgoing ticket)
	// BaseMultNs is one fixed-base multiplication k·G with its share of the field inversion
	// that converts a batch of four to affine coordinates (por.MulBase), as the sender makes
	// them for its ephemeral keys and proof-of-relay points.
	BaseMultNs float64 `json:"baseMultNs"`
	Rounds     int     `json:"rounds"` // interleaved rounds timed
}

// HopNs is the floor of a relayer's paid hop: one ECDH, one ecrecover and one signature, the
// same work as internal/relay's BenchmarkUnavoidablePublicKeyWork.
func (f Floor) HopNs() float64 { return f.ECDHNs + f.RecoverNs + f.SignNs }

// RecipientNs is the floor of a delivery: one ECDH (Peel) and one ecrecover (the padded ticket
// the recipient holds, PROTOCOL.md §4.5).
func (f Floor) RecipientNs() float64 { return f.ECDHNs + f.RecoverNs }

// CreateNs is the floor of a sender's message over relayers relayers (hops = relayers + 1,
// fractional for a mean over paths of different lengths): per hop one ephemeral key
// (fixed-base) and one ECDH, 2·hops+1 proof-of-relay base-point multiplications in all (one
// ticket challenge per hop and the first acknowledgement's challenge, PROTOCOL.md §2: that is
// hops+1, plus the hops ephemeral keys), and the first ticket's signature when there is a
// relayer (a direct message has no ticket and no ticket challenge). This is the work of the original's Packet.create with its proof-of-relay values and
// ticket signature.
func (f Floor) CreateNs(relayers float64) float64 {
	if relayers <= 0 {
		// A direct message: one ephemeral key, one ECDH, the acknowledgement's challenge, no
		// ticket.
		return f.ECDHNs + 2*f.BaseMultNs
	}
	hops := relayers + 1
	return hops*f.ECDHNs + (2*hops+1)*f.BaseMultNs + f.SignNs
}

// MeanFloor averages two measurements (before and after a run).
func MeanFloor(a, b Floor) Floor {
	return Floor{
		ECDHNs: (a.ECDHNs + b.ECDHNs) / 2, RecoverNs: (a.RecoverNs + b.RecoverNs) / 2,
		SignNs: (a.SignNs + b.SignNs) / 2, BaseMultNs: (a.BaseMultNs + b.BaseMultNs) / 2,
		Rounds: a.Rounds + b.Rounds,
	}
}

// floorWork holds the fixed inputs of the floor's operations.
type floorWork struct {
	key    *ecdsa.PrivateKey
	scalar []byte
	px, py *big.Int // the peer's public key, an affine point
	hash   []byte
	sig    []byte
	ks     [4]por.Scalar
}

func newFloorWork() (*floorWork, error) {
	k, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	other, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	px, py := secp256k1.DecompressPubkey(crypto.CompressPubkey(&other.PublicKey))
	w := &floorWork{key: k, scalar: crypto.FromECDSA(k), px: px, py: py, hash: crypto.Keccak256([]byte("ticket"))}
	if w.sig, err = crypto.Sign(w.hash, k); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	for i := range w.ks {
		if _, err := rand.Read(w.ks[i][:]); err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		w.ks[i][0] &= 0x7f // below the group order
		w.ks[i][31] |= 1   // not zero
	}
	return w, nil
}

// errFloor is returned when an operation of the floor fails, which only a broken library
// would do with these inputs.
var errFloor = errors.New("floor: a public-key operation failed")

// floorBlock is how many times in a row each operation runs between two readings of the
// thread's CPU clock (a reading costs about a microsecond).
const floorBlock = 20

// MeasureFloor times about rounds runs of each of the floor's operations on the calling
// goroutine, locked to its OS thread, in blocks of floorBlock runs of one operation, the
// operations taking turns block by block so that all of them see the same load. Each
// operation's cost is the thread's CPU time over its runs: like the nodes' process CPU, it does
// not count the time the thread waited for a core, which on a shared machine is most of the
// noise. (Where there is no thread CPU clock it falls back to the wall clock, median of the
// blocks.)
func MeasureFloor(rounds int) (Floor, error) {
	if rounds < 1 {
		return Floor{}, fmt.Errorf("floor: %d rounds", rounds)
	}
	w, err := newFloorWork()
	if err != nil {
		return Floor{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, cpuClock := ThreadCPU()
	now := func() time.Duration {
		if cpuClock {
			d, _ := ThreadCPU()
			return d
		}
		return time.Duration(time.Now().UnixNano())
	}
	ops := []func() bool{
		func() bool { x, _ := crypto.S256().ScalarMult(w.px, w.py, w.scalar); return x != nil },
		func() bool { _, err := crypto.Ecrecover(w.hash, w.sig); return err == nil },
		func() bool { _, err := crypto.Sign(w.hash, w.key); return err == nil },
		func() bool { _, err := por.MulBase(w.ks[:]...); return err == nil },
	}
	// Warm up: decred builds its base-point tables on first use.
	for _, op := range ops {
		if !op() {
			return Floor{}, errFloor
		}
	}
	blocks := max(1, (rounds+floorBlock-1)/floorBlock)
	spent := make([][]time.Duration, len(ops))
	for range blocks {
		for i, op := range ops {
			t0 := now()
			for range floorBlock {
				if !op() {
					return Floor{}, errFloor
				}
			}
			spent[i] = append(spent[i], now()-t0)
		}
	}
	per := make([]float64, len(ops))
	for i, ds := range spent {
		if cpuClock {
			var sum time.Duration
			for _, d := range ds {
				sum += d
			}
			per[i] = float64(sum) / float64(blocks*floorBlock)
		} else {
			per[i] = medianNs(ds) / floorBlock
		}
	}
	return Floor{ECDHNs: per[0], RecoverNs: per[1], SignNs: per[2], BaseMultNs: per[3] / float64(len(w.ks)),
		Rounds: blocks * floorBlock}, nil
}

// medianNs sorts ds and returns their median in nanoseconds.
func medianNs(ds []time.Duration) float64 {
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return float64(ds[n/2])
	}
	return float64(ds[n/2-1]+ds[n/2]) / 2
}
