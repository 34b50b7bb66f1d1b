package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// The layout of the message records (inbox.go, outbox.go): plain binary, not JSON, so
// that encoding is fast and one value has one encoding. A record starts with a version
// byte; fixed-width fields follow big-endian, then the variable ones, each prefixed by its
// length (4 bytes, big-endian). Times are unix milliseconds (8 bytes, two's complement).
// A decoder accepts exactly what its encoder writes: any other bytes are ErrCorrupt.

// maxRecordInt bounds the counts a record holds (ints stored in 4 bytes), so that they
// fit an int on every platform.
const maxRecordInt = math.MaxInt32

func appendMillis(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixMilli()))
}

func appendLenBytes(b, v []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

// recordReader reads a record's fields in order; the first field that runs past the end
// sets err, and every later read returns zero values.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: %d bytes left, want %d", ErrCorrupt, len(r.b), n)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *recordReader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *recordReader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// count reads a 4-byte count of at most maxRecordInt.
func (r *recordReader) count() int {
	n := r.u32()
	if n > maxRecordInt && r.err == nil {
		r.err = fmt.Errorf("%w: count %d", ErrCorrupt, n)
	}
	return int(n)
}

func (r *recordReader) millis() time.Time {
	return time.UnixMilli(int64(r.u64()))
}

func (r *recordReader) id() (id [16]byte) {
	copy(id[:], r.take(16))
	return id
}

// lenBytes reads a length-prefixed field and returns a copy (nil when it is empty): a
// record's bytes belong to bbolt only until its transaction ends.
func (r *recordReader) lenBytes() []byte {
	n := r.u32()
	if uint64(n) > uint64(len(r.b)) {
		if r.err == nil {
			r.err = fmt.Errorf("%w: field of %d bytes, %d left", ErrCorrupt, n, len(r.b))
		}
		return nil
	}
	v := r.take(int(n))
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

// end returns the first error, or ErrCorrupt when bytes are left over.
func (r *recordReader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the record", ErrCorrupt, len(r.b))
	}
	return r.err
}
