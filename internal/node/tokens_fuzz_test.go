package node

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzParseTokens feeds arbitrary operator input to parseTokens (the amount of the admin
// console's chain commands): it never panics; what it accepts is positive, below 10^48 units
// (30 whole digits), and formatTokens renders it as the input without redundant zeros, which
// parses back to the same amount.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"1", "0.5", ".5", "2.", "0.000000000000000001", "007.100", "0", "-1", "1e18",
		"1.2.3", "999999999999999999999999999999.999999999999999999", "", ".", "١"} {
		f.Add(s)
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(48), nil)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseTokens(s)
		if err != nil {
			if v != nil {
				t.Fatalf("parseTokens(%q) = %v with error %v", s, v, err)
			}
			return
		}
		if v.Sign() <= 0 || v.Cmp(limit) >= 0 {
			t.Fatalf("parseTokens(%q) = %v: out of range", s, v)
		}
		whole, frac, _ := strings.Cut(s, ".")
		want := strings.TrimLeft(whole, "0")
		if want == "" {
			want = "0"
		}
		if frac = strings.TrimRight(frac, "0"); frac != "" {
			want += "." + frac
		}
		got := formatTokens(v)
		if got != want {
			t.Fatalf("formatTokens(parseTokens(%q)) = %q, want %q", s, got, want)
		}
		if back, err := parseTokens(got); err != nil || back.Cmp(v) != 0 {
			t.Fatalf("%q parses back to %v, %v; want %v", got, back, err, v)
		}
	})
}
