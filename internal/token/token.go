// Package token is relayd's one amount type: an amount of the network token, or of the chain's
// native currency, in its smallest unit (both have 18 decimals), and the one way each surface
// reads and writes it: whole tokens for people ("0.5", the admin console, flags, logs), the
// smallest unit as a decimal string for the REST API ("500000000000000000"), and a float of
// whole tokens for metrics.
//
// An Amount holds at most 2^256 − 1 units, the most any contract amount can be. It is a value
// (no pointers), safe to copy and compare with ==.
//
// Pure: it imports no other relayd package and does no I/O.
package token

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/holiman/uint256"
)

// Decimals is the token's and the native currency's number of decimals.
const Decimals = 18

// Errors of the parsers. Their texts are sentences an operator or a client reads.
var (
	// ErrSyntax reports text that is not an amount in the form the parser reads.
	ErrSyntax = errors.New("not an amount")
	// ErrRange reports an amount that is zero where a positive one is needed, or larger than
	// the parser allows.
	ErrRange = errors.New("amount out of range")
)

// maxWholeDigits bounds the whole-token digits Parse reads: 10^30 tokens is far beyond any
// supply, and keeps every parsed amount below 2^256 units.
const maxWholeDigits = 30

// maxUnitDigits is the most decimal digits of a uint256 (2^256 − 1 has 78).
const maxUnitDigits = 78

// Amount is an amount in the smallest unit. The zero value is 0.
type Amount struct{ v uint256.Int }

// One is one whole token: 10^18 units.
var One = Units(1_000_000_000_000_000_000)

// Units is n of the smallest unit.
func Units(n uint64) Amount {
	var a Amount
	a.v.SetUint64(n)
	return a
}

// Tokens is n whole tokens.
func Tokens(n uint64) Amount {
	var a Amount
	a.v.Mul(uint256.NewInt(n), &One.v)
	return a
}

// FromUint256 is the amount of v units.
func FromUint256(v *uint256.Int) Amount { return Amount{v: *v} }

// FromBig is the amount of v units. A negative v, or one above 2^256 − 1, is ErrRange; nil is 0.
func FromBig(v *big.Int) (Amount, error) {
	var a Amount
	if v == nil {
		return a, nil
	}
	if v.Sign() < 0 {
		return a, fmt.Errorf("%w: %s is negative", ErrRange, v)
	}
	if a.v.SetFromBig(v) {
		return Amount{}, fmt.Errorf("%w: %s units is more than 2^256 − 1", ErrRange, v)
	}
	return a, nil
}

// Of is FromBig for an amount read from the chain or a contract, which is never negative nor
// above 2^256 − 1: nil or a negative v reads as 0, a larger one as 2^256 − 1.
func Of(v *big.Int) Amount {
	a, err := FromBig(v)
	if err != nil && v.Sign() > 0 {
		a.v.SetAllOne()
	}
	return a
}

// Parse reads an amount of whole tokens with up to Decimals decimals, such as "1", "0.5",
// ".5" or "2.": ASCII digits and at most one point, nothing else (no sign, exponent or
// spaces), at most 30 whole digits. It reads 0 too: Positive says whether a caller must refuse
// it.
func Parse(s string) (Amount, error) {
	whole, frac, _ := strings.Cut(s, ".")
	switch {
	case whole == "" && frac == "", !digits(whole), !digits(frac):
		return Amount{}, fmt.Errorf("%w: %q is not an amount of tokens like 1 or 0.5", ErrSyntax, s)
	case len(frac) > Decimals:
		return Amount{}, fmt.Errorf("%w: %q has more than %d decimals", ErrSyntax, s, Decimals)
	case len(whole) > maxWholeDigits:
		return Amount{}, fmt.Errorf("%w: %q has more than %d whole digits", ErrRange, s, maxWholeDigits)
	}
	units := strings.TrimLeft(whole+frac+strings.Repeat("0", Decimals-len(frac)), "0")
	if units == "" {
		return Amount{}, nil
	}
	var a Amount
	if err := a.v.SetFromDecimal(units); err != nil { // cannot fail: at most 48 digits
		return Amount{}, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	return a, nil
}

// ParsePositive is Parse that refuses 0 (ErrRange).
func ParsePositive(s string) (Amount, error) {
	a, err := Parse(s)
	if err == nil && a.IsZero() {
		return Amount{}, fmt.Errorf("%w: amount %q must be more than 0", ErrRange, s)
	}
	return a, err
}

// ParseUnits reads an amount in the smallest unit as a decimal string of ASCII digits (the REST
// API's form): no sign, point or spaces; at most 2^256 − 1.
func ParseUnits(s string) (Amount, error) {
	if s == "" || !digits(s) {
		return Amount{}, fmt.Errorf("%w: %q is not a whole number of the smallest unit", ErrSyntax, s)
	}
	if len(strings.TrimLeft(s, "0")) > maxUnitDigits {
		return Amount{}, fmt.Errorf("%w: %q is more than 2^256 − 1 units", ErrRange, s)
	}
	b, _ := new(big.Int).SetString(s, 10)
	return FromBig(b)
}

// digits reports whether s is ASCII digits only (true for "").
func digits(s string) bool { return strings.TrimLeft(s, "0123456789") == "" }

// String writes a in whole tokens without trailing zeros: "0.02", "1", "0".
func (a Amount) String() string {
	var q, r uint256.Int
	q.DivMod(&a.v, &One.v, &r)
	if r.IsZero() {
		return q.Dec()
	}
	frac := strings.TrimRight(fmt.Sprintf("%0*s", Decimals, r.Dec()), "0")
	return q.Dec() + "." + frac
}

// Units writes a in the smallest unit as a decimal string (the REST API's form).
func (a Amount) Units() string { return a.v.Dec() }

// Float64 is a in whole tokens as a float, for metrics (exact to about 15 significant digits).
func (a Amount) Float64() float64 {
	f, _ := new(big.Rat).SetFrac(a.v.ToBig(), One.v.ToBig()).Float64()
	return f
}

// Big is a in units as a new big.Int.
func (a Amount) Big() *big.Int { return a.v.ToBig() }

// Uint256 is a in units.
func (a Amount) Uint256() uint256.Int { return a.v }

// IsZero reports whether a is 0.
func (a Amount) IsZero() bool { return a.v.IsZero() }

// Cmp compares a and b: -1, 0 or +1.
func (a Amount) Cmp(b Amount) int { return a.v.Cmp(&b.v) }

// Add is a + b, saturating at 2^256 − 1.
func (a Amount) Add(b Amount) Amount {
	var s Amount
	if _, overflow := s.v.AddOverflow(&a.v, &b.v); overflow {
		s.v.SetAllOne()
	}
	return s
}
