package packet

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzPeel feeds arbitrary bytes to Peel: it must never panic, must reject
// anything that is not a packet built for the key (the seeds are a valid
// packet and its mutations), and must answer with one of its sentinels.
func FuzzPeel(f *testing.F) {
	rand := newSeededReader("FuzzPeel")
	nodes := newNodes(f, rand, 3)
	pkt, _ := build(f, rand, nodes, Message{Text: []byte("fuzz"), Timestamp: 1})
	f.Add(pkt)
	f.Add(pkt[:100])
	f.Add(make([]byte, PacketSize))
	random := make([]byte, PacketSize)
	rand.Read(random)
	random[0] = 4
	f.Add(random)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Peel(nodes[0].priv, b, t0, fresh{})
		if bytes.Equal(b, pkt) {
			if err != nil {
				t.Fatalf("valid packet rejected: %v", err)
			}
			return
		}
		if err == nil {
			t.Fatalf("accepted an altered packet: %+v", p)
		}
		for _, want := range []error{ErrSize, ErrBadPoint, ErrMAC} { // an altered packet fails the MAC before the window is read
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error %v", err)
	})
}
