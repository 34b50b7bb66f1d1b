package session

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: any text either is ErrMalformed or decodes to a frame whose encoding is the text
// again, and which a session would take (its SACK ranges ascending above the ack).
func FuzzDecode(f *testing.F) {
	for _, fr := range validFrames() {
		text, err := fr.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	f.Add([]byte{})
	f.Add([]byte{KindSegment})
	f.Add(bytes.Repeat([]byte{0xff}, 60))
	syn, err := (&Frame{ID: testID, Flags: FlagSYN}).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(syn, EarlyMarker, 0, 9, 1, 'a', ':', '8')) // a request longer than the rest
	f.Add(append(syn, EarlyMarker, 0, 1, EarlyMarker, 'x')) // a marker within the marker
	f.Fuzz(func(t *testing.T, text []byte) {
		fr, err := Decode(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode: %v", err)
			}
			return
		}
		again, err := fr.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", fr, err)
		}
		if !bytes.Equal(again, text) {
			t.Fatalf("decoded %+v encodes as\n%x, not\n%x", fr, again, text)
		}
		if fr.Size() != len(text) || len(fr.SACK) > MaxSACK {
			t.Fatalf("decoded %+v from %d bytes", fr, len(text))
		}
		if fr.Flags&(FlagSYN|FlagACK) == FlagSYN {
			// An entry's SYN: its payload is a request and early data, which lay out as it again.
			req, early, err := splitSYN(fr.Payload, fr.Flags&FlagUDP != 0)
			if err != nil {
				t.Fatalf("a SYN decoded whose payload does not split: %v", err)
			}
			if len(early) > 0 {
				if again, err := WithEarlyData(req, early); err != nil || !bytes.Equal(again, fr.Payload) {
					t.Fatalf("request %x and early data %x lay out as %x (%v), not %x", req, early, again, err, fr.Payload)
				}
			}
		}
		low := fr.Ack
		for _, r := range fr.SACK {
			if r.Start <= low || r.End <= r.Start {
				t.Fatalf("SACK %v after %d", fr.SACK, fr.Ack)
			}
			low = r.End
		}
	})
}
