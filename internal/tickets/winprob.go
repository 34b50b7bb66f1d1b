package tickets

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// A ticket's WinProb field w encodes the probability (w+1)/2^56 that it wins: MaxWinProb is
// certainty, 0 is 2^-56. The functions here convert between the field, the probability an
// operator reads and sets ("0.01"), and the two values of a ticket: its face Amount, paid if it
// wins, and its expected value Amount × (w+1)/2^56, what it is worth on average and what the
// protocol prices a hop in (PROTOCOL.md §4.5).

// winScale is 2^56, the denominator of a win probability.
var winScale = new(uint256.Int).Lsh(uint256.NewInt(1), 56)

// WinProbFor returns the WinProb field for probability p, rounded to the nearest representable
// value: 1 gives MaxWinProb. p must be in (0, 1]; it fails with ErrBadWinProb otherwise.
func WinProbFor(p float64) (uint64, error) {
	if math.IsNaN(p) || p <= 0 || p > 1 {
		return 0, fmt.Errorf("%w: probability %v is not in (0, 1]", ErrBadWinProb, p)
	}
	w := math.Round(p*(1<<56)) - 1
	switch {
	case w >= float64(MaxWinProb):
		return MaxWinProb, nil
	case w < 0:
		return 0, nil
	}
	return uint64(w), nil
}

// ParseWinProb parses a probability written as a decimal ("0.01", "1", ".5") into the WinProb
// field: ASCII digits and at most one point, nothing else (no sign, exponent, hexadecimal form
// or spaces).
func ParseWinProb(s string) (uint64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole+frac == "" || strings.TrimLeft(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %q is not a decimal number", ErrBadWinProb, s)
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number", ErrBadWinProb, s)
	}
	return WinProbFor(p)
}

// Probability returns the probability the WinProb field w encodes, (w+1)/2^56 (w above
// MaxWinProb counts as MaxWinProb).
func Probability(w uint64) float64 {
	return float64(min(w, MaxWinProb)+1) / (1 << 56)
}

// FormatWinProb renders the WinProb field w as the probability it encodes, with the fewest
// digits that read back as the same field ("0.01", "1").
func FormatWinProb(w uint64) string {
	w = min(w, MaxWinProb)
	p := Probability(w)
	for prec := 1; prec < 17; prec++ {
		s := strconv.FormatFloat(p, 'g', prec, 64)
		if back, err := ParseWinProb(s); err == nil && back == w {
			return s
		}
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}

// Value returns the ticket's expected value, Amount × (WinProb+1) / 2^56 rounded down: Amount
// itself for a ticket that always wins.
func (t *Ticket) Value() uint256.Int {
	return ExpectedValue(&t.Amount, t.WinProb)
}

// ExpectedValue returns amount × (w+1) / 2^56 rounded down (amount for w ≥ MaxWinProb).
func ExpectedValue(amount *uint256.Int, w uint64) uint256.Int {
	if w >= MaxWinProb {
		return *amount
	}
	var v uint256.Int
	v.MulDivOverflow(amount, uint256.NewInt(w+1), winScale)
	return v
}

// FaceAmount returns the smallest face amount whose expected value at WinProb w is at least
// value: value × 2^56 / (w+1) rounded up (value itself for w ≥ MaxWinProb). So
// ExpectedValue(FaceAmount(v, w), w) ≥ v, and a relayer that prices hops in expected value loses
// nothing to rounding. It fails with ErrBadWinProb when the face amount overflows 256 bits.
func FaceAmount(value *uint256.Int, w uint64) (uint256.Int, error) {
	if w >= MaxWinProb {
		return *value, nil
	}
	den := uint256.NewInt(w + 1)
	var face uint256.Int
	if _, overflow := face.MulDivOverflow(value, winScale, den); overflow {
		return uint256.Int{}, fmt.Errorf("%w: face amount of %s at %s overflows", ErrBadWinProb, value.Dec(), FormatWinProb(w))
	}
	var back uint256.Int
	if back.MulDivOverflow(&face, den, winScale); back.Lt(value) {
		face.AddUint64(&face, 1)
	}
	return face, nil
}

// AlwaysWins reports whether t wins whatever its draw: its WinProb is MaxWinProb. Only such a
// ticket is redeemed without its holder's VRF proof, so only for such a ticket the holder need
// not compute its VRF output (PROTOCOL.md §4.5).
func (t *Ticket) AlwaysWins() bool { return t.WinProb >= MaxWinProb }

// Wins reports whether a ticket wins, as the contract's isWinning decides it (PROTOCOL.md §4.5),
// given the proof-of-relay response that opens its challenge and beta, its holder's VRF output
// over its hash (internal/vrf's OutputOf with the key of the channel's destination, the input
// being Hash(chainID, contract)): see IsWinning. A ticket that AlwaysWins wins whatever response
// and beta are, so a holder may pass a zero beta for it. The caller computes beta: this package
// does not know the VRF, and the ticket's issuer, who knows the response, cannot compute it.
func (t *Ticket) Wins(response, beta [32]byte, chainID uint64, contract common.Address) bool {
	if t.AlwaysWins() {
		return true
	}
	return IsWinning(t.Hash(chainID, contract), response, beta, t.WinProb)
}

// IsWinning is the contract's isWinning(hash, response, beta, winProb): whether the top 56 bits
// of keccak256(hash ‖ response ‖ beta), the ticket hash, the proof-of-relay response and the
// holder's VRF output over the hash (96 bytes hashed), are at most winProb. Always true at
// MaxWinProb.
func IsWinning(hash common.Hash, response, beta [32]byte, winProb uint64) bool {
	luck := crypto.Keccak256(hash[:], response[:], beta[:])
	var top uint64
	for _, b := range luck[:7] {
		top = top<<8 | uint64(b)
	}
	return top <= winProb
}
