package session

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

var testID = ID{0: 0xa0, 1: 0x01, 15: 0xff}

// validFrames are frames of every shape the sessions send.
func validFrames() []Frame {
	return []Frame{
		{ID: testID, Flags: FlagSYN, Window: 128, Payload: []byte("example.org:443")},
		{ID: testID, Flags: FlagSYN | FlagACK, Ack: 1, Window: 128},
		{ID: testID, Flags: FlagACK, Seq: 7, Ack: 5, Window: 100, Payload: bytes.Repeat([]byte{7}, 472)},
		{ID: testID, Flags: FlagACK, Seq: 9, Ack: 5, Window: 0,
			SACK: []Range{{6, 8}, {10, 11}, {20, 4000}}},
		{ID: testID, Flags: FlagACK | FlagFIN, Seq: 12, Ack: 1, Window: 3, Payload: []byte("last")},
		{ID: testID, Flags: FlagACK | FlagFIN, Seq: MaxSeq, Ack: 1<<32 - 1, Window: 65535},
		{ID: testID, Flags: FlagACK | FlagKeepAlive, Seq: 3, Ack: 2, Window: 1},
		{ID: testID, Flags: FlagRST, Reason: ReasonNotAllowed},
		{ID: testID, Flags: FlagRST | FlagACK, Seq: 4, Ack: 2, Reason: 200},
		{ID: testID, Flags: FlagSYN, Window: 128, Payload: append([]byte{EarlyMarker, 0, 5, 1, 'a', ':', '8', '0'}, "GET / HTTP/1.1\r\n\r\n"...)},
		{ID: testID, Flags: FlagSYN | FlagUDP, Payload: []byte{1, 2, 3}},
		{ID: testID, Flags: FlagSYN | FlagACK | FlagUDP, Ack: 1},
		{ID: testID, Flags: FlagUDP, Seq: 1 << 31},
		{ID: testID, Flags: FlagUDP, Seq: 2, Payload: []byte("datagram")},
		{ID: testID, Flags: FlagUDP | FlagKeepAlive, Seq: 3},
		{ID: testID, Flags: FlagUDP | FlagACK, Seq: 3},
		{ID: testID, Flags: FlagUDP | FlagFIN, Seq: 4},
		{ID: testID, Flags: FlagUDP | FlagRST, Reason: ReasonLimit},
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range validFrames() {
		t.Run(f.Flags.String(), func(t *testing.T) {
			text, err := f.Encode()
			if err != nil {
				t.Fatalf("encode %+v: %v", f, err)
			}
			if len(text) != f.Size() {
				t.Fatalf("encoded %d bytes, Size says %d", len(text), f.Size())
			}
			g, err := Decode(text)
			if err != nil {
				t.Fatalf("decode %x: %v", text, err)
			}
			again, _ := g.Encode()
			if !bytes.Equal(again, text) {
				t.Fatalf("decoded %+v encodes as %x, not %x", g, again, text)
			}
			if g.ID != f.ID || g.Flags != f.Flags || g.Seq != f.Seq || g.Ack != f.Ack ||
				g.Window != f.Window || g.Reason != f.Reason || !bytes.Equal(g.Payload, f.Payload) ||
				len(g.SACK) != len(f.SACK) {
				t.Fatalf("decoded %+v, want %+v", g, f)
			}
		})
	}
}

// TestFrameKnownAnswer pins the byte layout of docs/PROTOCOL.md §9's example.
func TestFrameKnownAnswer(t *testing.T) {
	f := Frame{ID: testID, Flags: FlagACK, Seq: 9, Ack: 5, Window: 64, SACK: []Range{{6, 8}}, Payload: []byte("hi")}
	text, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := "20" + "a001000000000000000000000000" + "00ff" + "42" + "00000009" + "00000005" + "0040" +
		"00000006" + "00000008" + "6869"
	if got := hex.EncodeToString(text); got != want {
		t.Fatalf("encoding\n%s, want\n%s", got, want)
	}
	rst := Frame{ID: testID, Flags: FlagRST, Reason: ReasonRefused}
	text, _ = rst.Encode()
	if got := hex.EncodeToString(text); got != "20a001000000000000000000000000"+"00ff"+"08"+strings.Repeat("0", 20)+"02" {
		t.Fatalf("RST encodes as %s", got)
	}
	if HeaderSize != 28 || MinFrame > 472 {
		t.Fatalf("header %d, min frame %d", HeaderSize, MinFrame)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := func(f Frame) []byte {
		t.Helper()
		text, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	base := good(Frame{ID: testID, Flags: FlagACK, Seq: 9, Ack: 5, Window: 64, SACK: []Range{{6, 8}}})
	set := func(text []byte, at int, b byte) []byte {
		out := bytes.Clone(text)
		out[at] = b
		return out
	}
	cases := map[string][]byte{
		"empty":                nil,
		"fragment kind":        set(base, 0, 0x11),
		"reserved kind":        set(base, 0, 0x21),
		"short header":         base[:HeaderSize-1],
		"short SACK":           base[:HeaderSize+RangeSize-1],
		"SACK count above ack": set(base, 17, 0x02|2<<6),
		"ack without ACK":      set(base, 17, 0x40),
		"SACK at the ack":      set(base, HeaderSize+3, 5),
		"empty SACK range":     set(base, HeaderSize+7, 6),
		"SYN not segment 0":    good(Frame{ID: testID, Flags: FlagSYN})[:0],
		"SYN|FIN": set(good(Frame{ID: testID, Flags: FlagSYN}), 17,
			byte(FlagSYN|FlagFIN)),
		"payload on SYN|ACK": append(good(Frame{ID: testID, Flags: FlagSYN | FlagACK, Ack: 1}), 'x'),
		"RST without reason": good(Frame{ID: testID, Flags: FlagRST, Reason: 1})[:HeaderSize],
		"RST reason 0":       set(good(Frame{ID: testID, Flags: FlagRST, Reason: 1}), HeaderSize, 0),
		"RST with payload":   append(good(Frame{ID: testID, Flags: FlagRST, Reason: 1}), 'x'),
		"RST|FIN":            set(good(Frame{ID: testID, Flags: FlagRST, Reason: 1}), 17, byte(FlagRST|FlagFIN)),
		"keep-alive payload": append(good(Frame{ID: testID, Flags: FlagKeepAlive | FlagACK}), 'x'),
		"UDP FIN payload":    append(good(Frame{ID: testID, Flags: FlagUDP | FlagFIN}), 'x'),
		"segment past MaxSeq": set(set(set(set(good(Frame{ID: testID, Flags: FlagFIN}),
			18, 0xff), 19, 0xff), 20, 0xff), 21, 0xff),
		"SACK in UDP mode": set(base, 17, byte(FlagACK|FlagUDP)|1<<6),
	}
	ooo := good(Frame{ID: testID, Flags: FlagACK, Ack: 1, SACK: []Range{{2, 4}, {6, 8}}})
	cases["SACK ranges adjacent"] = set(ooo, HeaderSize+RangeSize+3, 4)
	cases["SACK ranges descending"] = set(ooo, HeaderSize+RangeSize+3, 3)
	syn := good(Frame{ID: testID, Flags: FlagSYN})
	cases["SYN not segment 0"] = set(syn, 21, 1)
	for name, payload := range map[string][]byte{
		"marker alone":                 {EarlyMarker},
		"short request length":         {EarlyMarker, 0},
		"request of 0 bytes":           {EarlyMarker, 0, 0, 'x'},
		"request without early data":   {EarlyMarker, 0, 2, 1, 'a'},
		"request longer than the rest": {EarlyMarker, 1, 0, 1, 'a', 'x'},
		"marker within marker":         {EarlyMarker, 0, 1, EarlyMarker, 'x'},
	} {
		cases["early data: "+name] = append(bytes.Clone(syn), payload...)
	}
	cases["early data on a UDP SYN"] = append(good(Frame{ID: testID, Flags: FlagSYN | FlagUDP}), EarlyMarker, 0, 1, 1, 'x')
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			if f, err := Decode(text); !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode %x: %+v, %v; want ErrMalformed", text, f, err)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	for name, f := range map[string]Frame{
		"four SACK ranges": {Flags: FlagACK, SACK: []Range{{1, 2}, {3, 4}, {5, 6}, {7, 8}}},
		"reserved flag":    {Flags: 1 << 6},
		"reason no RST":    {Flags: FlagACK, Reason: 1},
		"SACK without ACK": {SACK: []Range{{1, 2}}},
		"overlapping SACK": {Flags: FlagACK, SACK: []Range{{1, 5}, {4, 6}}},
	} {
		if _, err := f.Encode(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: encode gave %v, want ErrMalformed", name, err)
		}
	}
}

func TestReasonErrors(t *testing.T) {
	for r, want := range map[Reason]error{
		ReasonReset: ErrReset, ReasonRefused: ErrRefused, ReasonNotAllowed: ErrNotAllowed,
		ReasonUnreachable: ErrUnreachable, ReasonLimit: ErrLimit, ReasonTimeout: ErrTimeout, 99: ErrReset,
	} {
		if !errors.Is(r.Err(), want) {
			t.Errorf("%v: %v, want %v", r, r.Err(), want)
		}
	}
}

// TestEarlyDataLayout pins the layout of a SYN that carries early data (docs/PROTOCOL.md §9.8)
// and the requests WithEarlyData refuses.
func TestEarlyDataLayout(t *testing.T) {
	p, err := WithEarlyData([]byte("\x01a:80"), []byte("GET"))
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(p); got != "00"+"0005"+"01613a3830"+"474554" {
		t.Fatalf("payload %s", got)
	}
	req, early, err := splitSYN(p, false)
	if err != nil || string(req) != "\x01a:80" || string(early) != "GET" {
		t.Fatalf("split: %q, %q, %v", req, early, err)
	}
	if p, err := WithEarlyData([]byte("\x01a:80"), nil); err != nil || string(p) != "\x01a:80" {
		t.Fatalf("without early data: %q, %v", p, err)
	}
	for name, r := range map[string][]byte{
		"empty":            nil,
		"marker":           {EarlyMarker, 1},
		"over 65535 bytes": make([]byte, 1<<16),
	} {
		if _, err := WithEarlyData(r, []byte("x")); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s request: %v, want ErrMalformed", name, err)
		}
	}
	if got := EarlyRoom(500, 5); got != 500-HeaderSize-3-5 {
		t.Fatalf("EarlyRoom(500, 5) = %d", got)
	}
	if got := EarlyRoom(MinFrame, 300); got != 0 {
		t.Fatalf("EarlyRoom over a small frame = %d", got)
	}
}
