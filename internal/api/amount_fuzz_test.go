package api

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzParseAmount feeds arbitrary client amounts to ParseAmount (every REST amount, in the
// smallest unit): it never panics; what it accepts is a positive integer that fits the
// contracts' uint256 and whose decimal form is the input without leading zeros.
func FuzzParseAmount(f *testing.F) {
	maxUint256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, s := range []string{"1", "1000000000000000000", "0001", "0", "-1", "1.5", "1e18", "0x10", " 1", "",
		maxUint256.String(), new(big.Int).Add(maxUint256, big.NewInt(1)).String(), strings.Repeat("9", 78),
		strings.Repeat("9", 79)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := ParseAmount(s)
		if !ok {
			return
		}
		if a == nil || a.Sign() <= 0 || a.Cmp(maxUint256) > 0 {
			t.Fatalf("ParseAmount(%q) = %v: not a positive uint256", s, a)
		}
		if want := strings.TrimLeft(s, "0"); a.String() != want {
			t.Fatalf("ParseAmount(%q) = %v, want %s", s, a, want)
		}
	})
}
