package ws

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello world", "hello world"},
		{"", ""},
		{`C:\path\x1b`, `C:\path\x1b`}, // backslashes are kept
		{"é 日本 🙂 ½", "é 日本 🙂 ½"},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"\x1b]0;pwned\x07\x1b[31m", `\x1b]0;pwned\x07\x1b[31m`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u009b31m\u0085", `\u009b31m\u0085`},                       // C1: CSI, NEL
		{"abc\u202edcba\u2066x\u2069", `abc\u202edcba\u2066x\u2069`}, // bidi override and isolates
		{"a\u2028b\u00a0c\u200bd", `a\u2028b\u00a0c\u200bd`},         // line separator, no-break and zero-width space
		{"\U000e0001tag", `\U000e0001tag`},
		{"bad \xff\xc3 utf8", `bad \xff\xc3 utf8`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"hi", "\x1b[31m\n", "\u202e", "\xff", "a\\nb", "🙂\u200d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, got)
		}
		if i := strings.IndexFunc(got, needsEscape); i >= 0 {
			t.Fatalf("Escape(%q) = %q keeps a control rune at %d", s, got, i)
		}
		if again := Escape(got); again != got {
			t.Fatalf("Escape is not idempotent: %q then %q", got, again)
		}
		if !strings.ContainsFunc(s, needsEscape) && utf8.ValidString(s) && got != s {
			t.Fatalf("printable %q changed to %q", s, got)
		}
	})
}
