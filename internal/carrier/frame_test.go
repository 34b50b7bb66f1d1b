package carrier

import (
	"bytes"
	"errors"
	"testing"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// TestPartLayout: a reply block travels in two parts of a whole forward text each (PROTOCOL.md
// §9.7): 0x21, the session id, the number (15 bits) and the half in two bytes, and half of the
// block less its version byte and its header's first byte, which the exit puts back. A block
// whose bytes there differ is not carried.
func TestPartLayout(t *testing.T) {
	n := newMemNet(t, 0)
	raw, _, err := view{n, "entry"}.NewSessionReplyBlock(t.Context(), "exit")
	if err != nil {
		t.Fatal(err)
	}
	carried, err := carry(raw)
	if err != nil || len(carried) != 962 {
		t.Fatalf("carried %d bytes: %v", len(carried), err)
	}
	var id session.ID
	id[0], id[15] = 0xa0, 0x0f
	var halves [2][]byte
	for half := range uint8(2) {
		text := encodePart(id, 300, half, carried[int(half)*partData:][:partData])
		if len(text) != packet.MaxMessageSize {
			t.Fatalf("a part of %d bytes", len(text))
		}
		if want := []byte{0x21, 0xa0}; !bytes.Equal(text[:2], want) || text[16] != 0x0f || text[17] != 0x02 || text[18] != 0x58|half {
			t.Fatalf("half %d's header % x", half, text[:19])
		}
		p, err := decodePart(text)
		if err != nil || p.id != id || p.number != 300 || p.half != half {
			t.Fatalf("decoded %+v: %v", p, err)
		}
		halves[half] = p.data
	}
	if got := uncarry(halves[0], halves[1]); !bytes.Equal(got, raw) {
		t.Fatal("the joined halves are not the block")
	}
	for name, at := range map[string]int{"version": 0, "header's first byte": headerAt} {
		bad := bytes.Clone(raw)
		bad[at]++
		if _, err := carry(bad); !errors.Is(err, ErrBlockLayout) {
			t.Errorf("another %s: %v, want ErrBlockLayout", name, err)
		}
	}
	if _, err := carry(raw[1:]); !errors.Is(err, ErrBlockLayout) {
		t.Errorf("a short block: %v", err)
	}
}
