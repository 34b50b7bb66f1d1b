package token

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]string{"1": "1000000000000000000", "0.5": "500000000000000000", "0.01": "10000000000000000",
		".5": "500000000000000000", "2.": "2000000000000000000", "0.000000000000000001": "1", "0": "0", "0.0": "0",
		"007.100": "7100000000000000000"}
	for in, want := range good {
		v, err := Parse(in)
		if err != nil || v.Units() != want {
			t.Errorf("Parse(%q) = %v, %v; want %s units", in, v.Units(), err, want)
		}
	}
	for in, want := range map[string]error{"": ErrSyntax, ".": ErrSyntax, "-1": ErrSyntax, "1e18": ErrSyntax, "abc": ErrSyntax,
		"1.2.3": ErrSyntax, "0.0000000000000000001": ErrSyntax, " 1": ErrSyntax, "1 ": ErrSyntax, "+1": ErrSyntax, "0x10": ErrSyntax,
		"١": ErrSyntax, strings.Repeat("9", 31): ErrRange} {
		if v, err := Parse(in); !errors.Is(err, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, v, err, want)
		}
	}
	for _, in := range []string{"0", "0.0", ".0"} {
		if _, err := ParsePositive(in); !errors.Is(err, ErrRange) {
			t.Errorf("ParsePositive(%q) = %v, want ErrRange", in, err)
		}
	}
	if v, err := ParsePositive("0.02"); err != nil || v != Units(20_000_000_000_000_000) {
		t.Errorf("ParsePositive(0.02) = %v, %v", v.Units(), err)
	}
}

func TestParseUnits(t *testing.T) {
	max := strings.Repeat("f", 64)
	maxDec, _ := new(big.Int).SetString(max, 16)
	for in, want := range map[string]string{"1": "1", "0": "0", "000123": "123", maxDec.String(): maxDec.String()} {
		v, err := ParseUnits(in)
		if err != nil || v.Units() != want {
			t.Errorf("ParseUnits(%q) = %v, %v; want %s", in, v.Units(), err, want)
		}
	}
	over := new(big.Int).Add(maxDec, big.NewInt(1)).String()
	for in, want := range map[string]error{"": ErrSyntax, "-1": ErrSyntax, "1.0": ErrSyntax, "1e3": ErrSyntax, " 1": ErrSyntax,
		over: ErrRange, strings.Repeat("1", 79): ErrRange, "0x1": ErrSyntax} {
		if _, err := ParseUnits(in); !errors.Is(err, want) {
			t.Errorf("ParseUnits(%q) = %v, want %v", in, err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "1000000000000000000": "1", "20000000000000000": "0.02",
		"1500000000000000001": "1.500000000000000001", "123000000000000000000": "123"} {
		v, _ := ParseUnits(in)
		if got := v.String(); got != want {
			t.Errorf("%s units = %s tokens, want %s", in, got, want)
		}
	}
	if f := Units(2_500_000_000_000_000).Float64(); f != 0.0025 {
		t.Errorf("Float64 = %v, want 0.0025", f)
	}
	if Tokens(3).String() != "3" || One.Big().String() != "1000000000000000000" {
		t.Errorf("Tokens(3) = %s, One = %s", Tokens(3), One.Big())
	}
	if _, err := FromBig(big.NewInt(-1)); !errors.Is(err, ErrRange) {
		t.Errorf("FromBig(-1) = %v, want ErrRange", err)
	}
	if v, err := FromBig(nil); err != nil || !v.IsZero() {
		t.Errorf("FromBig(nil) = %v, %v", v, err)
	}
	huge, _ := ParseUnits(strings.Repeat("9", 77))
	if s := huge.Add(huge); s.Cmp(huge) <= 0 {
		t.Errorf("Add did not saturate upwards: %s", s.Units())
	}
}

// FuzzParse feeds arbitrary operator input to Parse: it never panics; what it accepts is below
// 10^48 units, and String renders it as the input without redundant zeros, which parses back to
// the same amount.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "0.5", ".5", "2.", "0.000000000000000001", "007.100", "0", "-1", "1e18",
		"1.2.3", "999999999999999999999999999999.999999999999999999", "", ".", "١"} {
		f.Add(s)
	}
	limit, _ := ParseUnits("1" + strings.Repeat("0", 48))
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			if !v.IsZero() {
				t.Fatalf("Parse(%q) = %v with error %v", s, v, err)
			}
			return
		}
		if v.Cmp(limit) >= 0 {
			t.Fatalf("Parse(%q) = %v: out of range", s, v.Units())
		}
		whole, frac, _ := strings.Cut(s, ".")
		want := strings.TrimLeft(whole, "0")
		if want == "" {
			want = "0"
		}
		if frac = strings.TrimRight(frac, "0"); frac != "" {
			want += "." + frac
		}
		if got := v.String(); got != want {
			t.Fatalf("Parse(%q).String() = %q, want %q", s, got, want)
		}
		if back, err := Parse(v.String()); err != nil || back != v {
			t.Fatalf("%q parses back to %v, %v; want %v", v.String(), back.Units(), err, v.Units())
		}
	})
}

// FuzzParseUnits: ParseUnits never panics, and what it accepts writes back as its digits
// without leading zeros.
func FuzzParseUnits(f *testing.F) {
	for _, s := range []string{"0", "1", "007", "", "-1", strings.Repeat("9", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseUnits(s)
		if err != nil {
			return
		}
		want := strings.TrimLeft(s, "0")
		if want == "" {
			want = "0"
		}
		if v.Units() != want {
			t.Fatalf("ParseUnits(%q).Units() = %q", s, v.Units())
		}
	})
}

func TestOf(t *testing.T) {
	over := new(big.Int).Lsh(big.NewInt(1), 256)
	for _, c := range []struct {
		in   *big.Int
		want string
	}{{nil, "0"}, {big.NewInt(-5), "0"}, {big.NewInt(7), "7"}, {over, new(big.Int).Sub(over, big.NewInt(1)).String()}} {
		if got := Of(c.in).Units(); got != c.want {
			t.Errorf("Of(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
