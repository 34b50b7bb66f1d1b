package bench

import (
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

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
	peer   ecdsa.PublicKey
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
	w := &floorWork{key: k, scalar: crypto.FromECDSA(k), peer: other.PublicKey, hash: crypto.Keccak256([]byte("ticket"))}
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

// MeasureFloor times rounds rounds of the floor's operations, interleaved (each round runs each
// operation once, so all of them see the same load), on the calling goroutine, and takes each
// operation's median over the rounds: a round that another process preempted is an outlier, not
// a cost. A round takes about 0.15–0.3 ms on a 2020s core.
func MeasureFloor(rounds int) (Floor, error) {
	if rounds < 1 {
		return Floor{}, fmt.Errorf("floor: %d rounds", rounds)
	}
	w, err := newFloorWork()
	if err != nil {
		return Floor{}, err
	}
	ecdh := make([]time.Duration, rounds)
	rec := make([]time.Duration, rounds)
	sign := make([]time.Duration, rounds)
	base := make([]time.Duration, rounds)
	for i := range rounds {
		t0 := time.Now()
		x, _ := crypto.S256().ScalarMult(w.peer.X, w.peer.Y, w.scalar)
		t1 := time.Now()
		_, errRec := crypto.Ecrecover(w.hash, w.sig)
		t2 := time.Now()
		_, errSign := crypto.Sign(w.hash, w.key)
		t3 := time.Now()
		_, errBase := por.MulBase(w.ks[:]...)
		t4 := time.Now()
		if x == nil || errRec != nil || errSign != nil || errBase != nil {
			return Floor{}, errFloor
		}
		ecdh[i], rec[i], sign[i], base[i] = t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3)
	}
	return Floor{ECDHNs: medianNs(ecdh), RecoverNs: medianNs(rec), SignNs: medianNs(sign),
		BaseMultNs: medianNs(base) / float64(len(w.ks)), Rounds: rounds}, nil
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
