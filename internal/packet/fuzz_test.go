package packet

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzPeel feeds arbitrary bytes to Peel at the first of two relayers: it
// must never panic, must reject anything whose header is not the one built
// for the key (the seeds are a valid packet and its mutations), answering
// with one of its sentinels, and must pass on a packet with the valid header
// whatever its payload: relayers do not authenticate the payload
// (PROTOCOL.md §3.4), they apply their layer to it.
func FuzzPeel(f *testing.F) {
	rand := newSeededReader("FuzzPeel")
	nodes := newNodes(f, rand, 3)
	pkt, _ := build(f, rand, nodes, Message{Text: []byte("fuzz"), Timestamp: 1})
	want, err := Peel(nodes[0].priv, pkt, t0, fresh{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pkt)
	f.Add(pkt[:100])
	f.Add(make([]byte, PacketSize))
	random := make([]byte, PacketSize)
	rand.Read(random)
	random[0] = 4
	f.Add(random)
	flipped := bytes.Clone(pkt)
	flipped[PacketSize-1] ^= 1
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Peel(nodes[0].priv, b, t0, fresh{})
		if len(b) == PacketSize && bytes.Equal(b[:HeaderSize], pkt[:HeaderSize]) {
			if err != nil {
				t.Fatalf("valid header rejected: %v", err)
			}
			if !bytes.Equal(p.Next[:HeaderSize], want.Next[:HeaderSize]) || p.NextHop != want.NextHop || p.PoR != want.PoR {
				t.Fatal("the next header depends on the payload")
			}
			// One layer, the same for every payload: in XOR out is the keystream.
			for i := range PayloadSize {
				if b[HeaderSize+i]^p.Next[HeaderSize+i] != pkt[HeaderSize+i]^want.Next[HeaderSize+i] {
					t.Fatalf("payload byte %d: not the hop's layer", i)
				}
			}
			return
		}
		if err == nil {
			t.Fatalf("accepted an altered header: %+v", p)
		}
		for _, want := range []error{ErrSize, ErrBadPoint, ErrMAC} { // an altered header fails the MAC before the window is read
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error %v", err)
	})
}
