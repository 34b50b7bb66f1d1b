package courier

import (
	"encoding/hex"
	"math/bits"
	"strings"
)

// FormatID writes a message id as the faces show it: 0x and 32 lower-case hexadecimal digits.
func FormatID(id [16]byte) string { return "0x" + hex.EncodeToString(id[:]) }

// ParseID reads a message id: 0x and 32 hexadecimal digits, in either case.
func ParseID(s string) ([16]byte, bool) {
	var id [16]byte
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 2*len(id) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(h))
	return id, err == nil
}

// Acknowledged counts the fragments of m the recipient acknowledged (bits past the last
// fragment do not count).
func Acknowledged(m OutboxMessage) int {
	n := 0
	for i, b := range m.Acked {
		if i*8 >= m.Fragments {
			break
		}
		if rest := m.Fragments - i*8; rest < 8 {
			b &= byte(1)<<rest - 1
		}
		n += bits.OnesCount8(b)
	}
	return n
}
