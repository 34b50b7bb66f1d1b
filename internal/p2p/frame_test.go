package p2p

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func encodeFrames(frames ...[]byte) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, f := range frames {
		if err := writeFrame(w, f); err != nil {
			panic(err)
		}
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func header(n uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, n)
}

func TestReadFrame(t *testing.T) {
	const max = 16
	for _, tc := range []struct {
		name string
		in   []byte
		want [][]byte
		err  error // after the frames in want
	}{
		{"empty stream", nil, nil, io.EOF},
		{"one frame", encodeFrames([]byte("hello")), [][]byte{[]byte("hello")}, io.EOF},
		{"two frames", encodeFrames([]byte("a"), []byte("bc")), [][]byte{[]byte("a"), []byte("bc")}, io.EOF},
		{"max size", encodeFrames(make([]byte, max)), [][]byte{make([]byte, max)}, io.EOF},
		{"over max", encodeFrames(make([]byte, max+1)), nil, ErrFrameTooLarge},
		{"huge length", header(0xffffffff), nil, ErrFrameTooLarge},
		{"zero length", header(0), nil, ErrBadFrame},
		{"truncated header", []byte{0, 0}, nil, ErrBadFrame},
		{"truncated body", append(header(5), "abc"...), nil, ErrBadFrame},
		{"good then bad", append(encodeFrames([]byte("ok")), header(0)...), [][]byte{[]byte("ok")}, ErrBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(bytes.NewReader(tc.in))
			var buf []byte
			for i, want := range tc.want {
				got, err := readFrame(r, buf, max)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("frame %d = %q, %v; want %q", i, got, err, want)
				}
				buf = got[:cap(got)]
			}
			if _, err := readFrame(r, buf, max); !errors.Is(err, tc.err) {
				t.Fatalf("final readFrame error = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	r := bufio.NewReader(bytes.NewReader(encodeFrames([]byte("abcd"), []byte("xy"))))
	buf := make([]byte, 8)
	f1, err := readFrame(r, buf, 8)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := readFrame(r, buf, 8)
	if err != nil {
		t.Fatal(err)
	}
	if &f1[0] != &buf[0] || &f2[0] != &buf[0] {
		t.Error("readFrame did not reuse a large enough buffer")
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(encodeFrames([]byte("hello"), []byte("world")))
	f.Add(header(0))
	f.Add(header(0xffffffff))
	f.Add(append(header(3), 'a'))
	f.Add([]byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 64
		r := bufio.NewReader(bytes.NewReader(in))
		var buf []byte
		var frames [][]byte
		consumed := 0
		for {
			frame, err := readFrame(r, buf, max)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				if errors.Is(err, io.EOF) && consumed != len(in) {
					t.Fatalf("EOF after %d of %d bytes", consumed, len(in))
				}
				break
			}
			if len(frame) == 0 || len(frame) > max {
				t.Fatalf("frame of %d bytes", len(frame))
			}
			consumed += frameHeaderSize + len(frame)
			frames = append(frames, bytes.Clone(frame))
			buf = frame[:cap(frame)]
		}
		// Whatever decoded re-encodes to the same prefix of the input.
		if enc := encodeFrames(frames...); !bytes.Equal(enc, in[:len(enc)]) {
			t.Fatalf("re-encoding differs from input")
		}
	})
}
