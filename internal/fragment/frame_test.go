package fragment

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

var testID = ID{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}

const testIDHex = "000102030405060708090a0b0c0d0e0f"

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLayouts pins every frame's bytes to docs/PROTOCOL.md §8.
func TestLayouts(t *testing.T) {
	tests := []struct {
		name  string
		frame Frame
		text  string
	}{
		{"fragment", Fragment{ID: testID, Index: 1, Count: 3, BodyLen: 10, Data: []byte("efgh")},
			"11" + testIDHex + "0001 0003 00000a 00 0000" + "65666768"},
		{"fragment with reply blocks", Fragment{ID: testID, Index: 2, Count: 3, BodyLen: 4, Blocks: 2, BlockSize: 3, Data: []byte("ij")},
			"11" + testIDHex + "0002 0003 000004 02 0003" + "696a"},
		{"single empty fragment", Fragment{ID: testID, Count: 1},
			"11" + testIDHex + "0000 0001 000000 00 0000"},
		{"ack block part", AckBlockPart{ID: testID, Round: 5, Index: 1, Count: 2, Data: []byte{0xaa}},
			"12" + testIDHex + "55" + "aa"}, // round 5, part 1 of 2
		{"ack", Ack{ID: testID, Round: 7, Total: 10, Bitmap: []byte{0x05, 0x02}},
			"13" + testIDHex + "0007 000a 00" + "0502"},
		{"complete ack", Ack{ID: testID, Round: 7, Total: 10, Complete: true},
			"13" + testIDHex + "0007 000a 01"},
		{"reply", Reply{ID: testID, Seq: 2, Index: 0, Count: 1, BodyLen: 3, Data: []byte("abc")},
			"14" + testIDHex + "02 0000 0001 000003" + "616263"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.text)
			got, err := tt.frame.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded\n%x, want\n%x", got, want)
			}
			f, err := Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := f.Encode()
			if !bytes.Equal(again, want) || f.Kind() != tt.frame.Kind() || f.MessageID() != testID {
				t.Fatalf("decoded %+v", f)
			}
		})
	}
	if a, _ := Decode(unhex(t, "13"+testIDHex+"0007 000a 00 0502")); !a.(Ack).Has(0) || a.(Ack).Has(1) || !a.(Ack).Has(2) || !a.(Ack).Has(9) || a.(Ack).Has(10) {
		t.Fatal("Ack.Has misreads the bitmap")
	}
}

func TestHeaderSizes(t *testing.T) {
	if FragmentHeaderSize != 27 || AckBlockPartHeaderSize != 18 || AckHeaderSize != 22 || ReplyHeaderSize != 25 {
		t.Fatalf("header sizes %d %d %d %d", FragmentHeaderSize, AckBlockPartHeaderSize, AckHeaderSize, ReplyHeaderSize)
	}
	// An incomplete ack for the most fragments fits the smallest reply text expected (468).
	if AckSize(MaxFragments) != 406 || AckSize(2048) != 278 || AckSize(140) != 40 {
		t.Fatalf("ack sizes %d %d %d", AckSize(MaxFragments), AckSize(2048), AckSize(140))
	}
	ack := Ack{Total: MaxFragments, Bitmap: make([]byte, MaxFragments/8)}
	text, err := ack.Encode()
	if err != nil || len(text) != AckSize(MaxFragments) || len(text) > 468 {
		t.Fatalf("ack of %d fragments: %d bytes, %v", MaxFragments, len(text), err)
	}
}

func TestDecodeRejects(t *testing.T) {
	frag := "11" + testIDHex
	tests := []struct{ name, text string }{
		{"empty", ""},
		{"version 0", "01" + testIDHex + "0000 0001 000000 00 0000"},
		{"version 2", "21" + testIDHex + "0000 0001 000000 00 0000"},
		{"kind 0", "10" + testIDHex + "0000 0001 000000 00 0000"},
		{"kind 5", "15" + testIDHex + "0000 0001 000000 00 0000"},
		{"kind 15", "1f" + testIDHex + "0000 0001 000000 00 0000"},
		{"short fragment", frag + "0000 0001 000000 00 00"},
		{"fragment count 0", frag + "0000 0000 000000 00 0000"},
		{"fragment index = count", frag + "0003 0003 00000a 00 0000 61"},
		{"blocks without size", frag + "0000 0001 000000 01 0000"},
		{"size without blocks", frag + "0000 0001 000000 00 0003"},
		{"single fragment, trailing byte", frag + "0000 0001 000002 00 0000 616263"},
		{"single fragment, missing byte", frag + "0000 0001 000004 00 0000 616263"},
		{"blocks not carried", frag + "0000 0001 000001 01 0002 61"},
		{"empty non-last fragment", frag + "0000 0002 00000a 00 0000"},
		{"empty last fragment", frag + "0001 0002 00000a 00 0000"},
		{"chunks too short for the content", frag + "0000 0002 00000a 00 0000 6161 6161"},
		{"chunks too long for the content", frag + "0000 0003 000008 00 0000 6161 6161"},
		{"last fragment longer than the chunk", frag + "0001 0002 000005 00 0000 616161"},
		{"last fragment not a chunk multiple away", frag + "0002 0003 000008 00 0000 6161 61"},
		{"short part", "12" + testIDHex},
		{"part index 3 of 1", "12" + testIDHex + "0c aa"},
		{"part index = count", "12" + testIDHex + "59 aa"},
		{"empty part", "12" + testIDHex + "55"},
		{"short ack", "13" + testIDHex + "0007 000a"},
		{"ack total 0", "13" + testIDHex + "0007 0000 01"},
		{"ack flags 2", "13" + testIDHex + "0007 000a 02 0502"},
		{"ack flags 0x81", "13" + testIDHex + "0007 000a 81"},
		{"complete ack with bitmap", "13" + testIDHex + "0007 000a 01 ffff"},
		{"ack bitmap short", "13" + testIDHex + "0007 000a 00 05"},
		{"ack bitmap long", "13" + testIDHex + "0007 000a 00 050200"},
		{"ack bit past total", "13" + testIDHex + "0007 000a 00 0504"},
		{"incomplete ack of everything", "13" + testIDHex + "0007 000a 00 ff03"},
		{"short reply", "14" + testIDHex + "02 0000 0001 0000"},
		{"reply count 0", "14" + testIDHex + "02 0000 0000 000000"},
		{"reply index = count", "14" + testIDHex + "02 0001 0001 000003 616263"},
		{"reply trailing byte", "14" + testIDHex + "02 0000 0001 000003 61626364"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Decode(unhex(t, tt.text))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decoded %+v, %v; want ErrMalformed", f, err)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	for name, f := range map[string]Frame{
		"body too long":           Fragment{ID: testID, Count: 1, BodyLen: MaxBodyLen + 1},
		"fragment index >= count": Fragment{ID: testID, Index: 1, Count: 1},
		"reply body too long":     Reply{ID: testID, Count: 1, BodyLen: MaxBodyLen + 1},
		"complete ack bitmap":     Ack{ID: testID, Total: 3, Complete: true, Bitmap: []byte{7}},
		"incomplete ack all set":  Ack{ID: testID, Total: 3, Bitmap: []byte{7}},
		"16 parts":                AckBlockPart{ID: testID, Index: 0, Count: 16, Data: []byte{1}},
	} {
		if _, err := f.Encode(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
