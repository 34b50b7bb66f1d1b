package packet

import "testing"

// The benchmarks below run in one `go test -bench .` invocation with the
// peer reference (BenchmarkLightningOnionProcess) and the public-key floor
// (BenchmarkECDH), so their ratios are measured on the same machine and load.

func benchCreate(b *testing.B, relayers int) {
	rand := newSeededReader(b.Name())
	nodes := newNodes(b, rand, relayers+1)
	hops := pubs(nodes)
	por := testPoR(relayers + 1)
	msg := Message{Text: make([]byte, MaxMessageSize), Timestamp: 1}
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewRoute(rand, hops)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Seal(msg, por); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate2Relayers builds a packet for 2 relayers and the recipient
// (the default path), from pre-parsed keys.
func BenchmarkCreate2Relayers(b *testing.B) { benchCreate(b, 2) }

// BenchmarkCreate3Relayers builds a packet for the longest route.
func BenchmarkCreate3Relayers(b *testing.B) { benchCreate(b, 3) }

func benchPeel(b *testing.B, hop int) {
	rand := newSeededReader(b.Name())
	nodes := newNodes(b, rand, 3)
	pkt, _ := build(b, rand, nodes, Message{Text: make([]byte, MaxMessageSize), Timestamp: 1})
	for i := range hop {
		p, err := Peel(nodes[i].priv, pkt, t0, fresh{})
		if err != nil {
			b.Fatal(err)
		}
		pkt = p.Next
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Peel(nodes[hop].priv, pkt, t0, fresh{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeel is one relayer's work on a packet (the first of 2 relayers);
// the replay store accepts everything, so only the packet work is measured.
func BenchmarkPeel(b *testing.B) { benchPeel(b, 0) }

// BenchmarkPeelFinal is the recipient's work.
func BenchmarkPeelFinal(b *testing.B) { benchPeel(b, 2) }

// BenchmarkECDH is the public-key work a hop cannot avoid: the ECDH Peel
// runs, on a pre-parsed point (with cgo: one libsecp256k1 constant-time
// scalar multiplication through go-ethereum's binding).
func BenchmarkECDH(b *testing.B) {
	rand := newSeededReader(b.Name())
	nodes := newNodes(b, rand, 2)
	p := nodes[1].pub
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ecdh(&nodes[0].priv.scalar, &p.x, &p.y); !ok {
			b.Fatal("scalar mult failed")
		}
	}
}
