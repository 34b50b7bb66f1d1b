package ws

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape renders s for a terminal: every rune a terminal could interpret is
// shown as a visible escape instead, so text from a remote peer can neither
// move the cursor, change colours or the window title, nor start a new line
// that looks like the node's own. Newline, carriage return and tab become
// \n, \r and \t; other C0 controls, DEL and bytes that are not UTF-8 become
// \xNN; any other rune unicode.IsPrint rejects (C1 controls, bidirectional
// overrides and isolates, zero-width and line separators) becomes \uNNNN or
// \UNNNNNNNN. Printable text, the ASCII space and the backslash are kept as
// they are, so Escape(Escape(s)) == Escape(s).
func Escape(s string) string {
	i := strings.IndexFunc(s, needsEscape)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !needsEscape(r):
			b.WriteString(s[:size])
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		s = s[size:]
	}
	return b.String()
}

// needsEscape reports whether a terminal could interpret r rather than
// show it. unicode.IsPrint already rejects C0 and C1 controls and the
// format characters (bidirectional overrides U+202A–U+202E and isolates
// U+2066–U+2069 among them).
func needsEscape(r rune) bool {
	return r != ' ' && !unicode.IsPrint(r)
}
