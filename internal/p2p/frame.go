package p2p

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// frameHeaderSize is the length prefix of every msg and ack frame: a big-endian uint32.
const frameHeaderSize = 4

// readFrame reads one length-prefixed frame from r into buf (growing it if it is too
// small) and returns the frame, which aliases buf when buf was large enough. A clean
// end of stream before a header returns io.EOF. A zero length or a stream that ends
// inside a frame returns ErrBadFrame; a length above max returns ErrFrameTooLarge
// without reading the body. After any error the stream is out of sync and must be
// dropped.
func readFrame(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	hdr, err := r.Peek(frameHeaderSize)
	if err != nil {
		if errors.Is(err, io.EOF) && len(hdr) > 0 {
			return nil, fmt.Errorf("%w: truncated header", ErrBadFrame)
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr)
	if n == 0 {
		return nil, fmt.Errorf("%w: zero length", ErrBadFrame)
	}
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, max %d", ErrFrameTooLarge, n, max)
	}
	if _, err := r.Discard(frameHeaderSize); err != nil {
		return nil, err
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	frame := buf[:n]
	if _, err := io.ReadFull(r, frame); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated body", ErrBadFrame)
		}
		return nil, err
	}
	return frame, nil
}

// writeFrame writes the length prefix and frame to w. The caller checks the size.
func writeFrame(w *bufio.Writer, frame []byte) error {
	var hdr [frameHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(frame)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(frame)
	return err
}
