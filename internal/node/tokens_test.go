package node

import (
	"math/big"
	"testing"
)

func TestParseAndFormatTokens(t *testing.T) {
	good := map[string]string{"1": "1000000000000000000", "0.5": "500000000000000000", "0.01": "10000000000000000",
		".5": "500000000000000000", "2.": "2000000000000000000", "0.000000000000000001": "1"}
	for in, want := range good {
		v, err := parseTokens(in)
		if err != nil || v.String() != want {
			t.Errorf("parseTokens(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", ".", "0", "0.0", "-1", "1e18", "abc", "1.2.3", "0.0000000000000000001", " 1"} {
		if v, err := parseTokens(in); err == nil {
			t.Errorf("parseTokens(%q) = %v, want error", in, v)
		}
	}
	for in, want := range map[string]string{"0": "0", "1000000000000000000": "1", "20000000000000000": "0.02", "1500000000000000001": "1.500000000000000001"} {
		v, _ := new(big.Int).SetString(in, 10)
		if got := formatTokens(v); got != want {
			t.Errorf("formatTokens(%s) = %s, want %s", in, got, want)
		}
	}
}
