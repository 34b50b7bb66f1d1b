package p2p

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// fuzzStream is a heartbeat stream whose peer sends in (then closes its side) and which
// records what is written to it and how it ended. Only the methods the heartbeat uses are
// implemented.
type fuzzStream struct {
	network.Stream
	in            io.Reader
	out           bytes.Buffer
	onWrite       func([]byte)
	closed, reset bool
}

func (s *fuzzStream) Read(b []byte) (int, error) { return s.in.Read(b) }
func (s *fuzzStream) Write(b []byte) (int, error) {
	if s.onWrite != nil {
		s.onWrite(b)
	}
	return s.out.Write(b)
}
func (s *fuzzStream) Close() error                     { s.closed = true; return nil }
func (s *fuzzStream) Reset() error                     { s.reset = true; return nil }
func (s *fuzzStream) SetReadDeadline(time.Time) error  { return nil }
func (s *fuzzStream) SetWriteDeadline(time.Time) error { return nil }

// fuzzHost is a libp2p host that is connected to every peer and opens s as every stream.
type fuzzHost struct {
	host.Host
	s *fuzzStream
}

func (h fuzzHost) Network() network.Network { return fuzzNetwork{} }
func (h fuzzHost) NewStream(context.Context, peer.ID, ...protocol.ID) (network.Stream, error) {
	return h.s, nil
}

type fuzzNetwork struct{ network.Network }

func (fuzzNetwork) Connectedness(peer.ID) network.Connectedness { return network.Connected }

// FuzzHeartbeat feeds arbitrary peer bytes to both ends of the heartbeat protocol. The server
// (serveHeartbeat) must echo exactly the whole 16-byte nonces it received, then close the
// stream at a clean end or reset it after a partial nonce. The pinger (ping) gets a reply of
// the fuzz bytes XOR its nonce: it must succeed only on an exact echo (all-zero bytes), report
// ErrBadPong for any other full reply, and fail for a short one; never panic.
func FuzzHeartbeat(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, nonceSize))
	f.Add(make([]byte, nonceSize-1))
	f.Add(append(make([]byte, nonceSize), 1))
	f.Add(bytes.Repeat([]byte{0xa5}, 3*nonceSize))
	self := peer.ID("self")
	f.Fuzz(func(t *testing.T, in []byte) {
		// Server side.
		h := &Host{cfg: Config{PingTimeout: time.Second}}
		s := &fuzzStream{in: bytes.NewReader(in)}
		h.serveHeartbeat(s)
		whole := len(in) / nonceSize * nonceSize
		if !bytes.Equal(s.out.Bytes(), in[:whole]) {
			t.Fatalf("echoed %x, want %x", s.out.Bytes(), in[:whole])
		}
		if clean := len(in)%nonceSize == 0; s.closed != clean || s.reset == clean {
			t.Fatalf("%d bytes in: closed %v, reset %v", len(in), s.closed, s.reset)
		}

		// Pinger side: the reply is the nonce XOR in, cut to len(in).
		ps := &fuzzStream{}
		ps.onWrite = func(nonce []byte) {
			reply := make([]byte, min(len(in), nonceSize))
			for i := range reply {
				reply[i] = nonce[i] ^ in[i]
			}
			ps.in = bytes.NewReader(reply)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ph := &Host{cfg: Config{PingTimeout: time.Second}, host: fuzzHost{s: ps}, ctx: ctx}
		_, err := ph.ping(t.Context(), self)
		switch {
		case len(in) < nonceSize:
			if err == nil || errors.Is(err, ErrBadPong) || !ps.reset {
				t.Fatalf("short reply of %d bytes: err %v, reset %v", len(in), err, ps.reset)
			}
		case bytes.Equal(in[:nonceSize], make([]byte, nonceSize)):
			if err != nil || !ps.closed {
				t.Fatalf("exact echo refused: %v", err)
			}
		default:
			if !errors.Is(err, ErrBadPong) || !ps.reset {
				t.Fatalf("wrong echo: err %v, reset %v; want ErrBadPong", err, ps.reset)
			}
		}
	})
}
