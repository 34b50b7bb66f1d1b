package node

import (
	"fmt"
	"math/big"
	"strings"
)

// decimals is the token's (and the native coin's) number of decimals.
const decimals = 18

var unit = new(big.Int).Exp(big.NewInt(10), big.NewInt(decimals), nil)

// parseTokens reads a positive amount of whole tokens with up to 18
// decimals ("1", "0.5") and returns it in the smallest unit.
func parseTokens(s string) (*big.Int, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > decimals || strings.TrimLeft(whole+frac, "0123456789") != "" || len(whole) > 30 {
		return nil, fmt.Errorf("%q is not an amount of tokens like 1 or 0.5", s)
	}
	v, _ := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	if v.Sign() <= 0 {
		return nil, fmt.Errorf("amount %q must be more than 0", s)
	}
	return v, nil
}

// formatTokens renders an amount in the smallest unit as tokens, without
// trailing zeros ("0.02").
func formatTokens(v *big.Int) string {
	if v == nil {
		return "0"
	}
	q, r := new(big.Int).QuoRem(v, unit, new(big.Int))
	if r.Sign() == 0 {
		return q.String()
	}
	frac := fmt.Sprintf("%0*s", decimals, r.String())
	return q.String() + "." + strings.TrimRight(frac, "0")
}
