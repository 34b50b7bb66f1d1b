package packet_test

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/relayd/relayd/internal/packet"
)

// memStore is a toy replay store; a node keeps its tags in its database,
// grouped by epoch so that it can drop them once the window has passed.
type memStore map[[packet.TagSize]byte]bool

func (m memStore) CheckAndAdd(_ uint32, tag [packet.TagSize]byte) (bool, error) {
	if m[tag] {
		return false, nil
	}
	m[tag] = true
	return true, nil
}

// A message from a sender over two relayers to a recipient.
func Example() {
	keys := make([]*packet.PrivateKey, 3) // relayer, relayer, recipient
	hops := make([]*packet.PublicKey, 3)
	for i := range keys {
		var scalar [32]byte
		rand.Read(scalar[:])
		k, err := packet.NewPrivateKey(scalar[:])
		if err != nil {
			panic(err)
		}
		keys[i], hops[i] = k, k.PublicKey()
	}

	// Sender: draw the route's keys, derive proof-of-relay data from the
	// secrets (PROTOCOL.md §2; left zero here), seal.
	route, err := packet.NewRoute(rand.Reader, hops)
	if err != nil {
		panic(err)
	}
	_ = route.Secret(0)
	por := make([][packet.PoRSize]byte, route.Len()-1)
	// The timestamp (the sender's clock, here fixed) also sets the packet's
	// epoch: hops accept it while their own clock is within one epoch of it.
	sent := time.UnixMilli(1767225600000)
	pkt, err := route.Seal(packet.Message{Text: []byte("hello"), Timestamp: uint64(sent.UnixMilli())}, por)
	if err != nil {
		panic(err)
	}

	// Each hop peels one layer with its own key, clock and replay store.
	for i, k := range keys {
		now := sent.Add(time.Duration(i) * time.Second) // a hop passes the packet on within a second
		p, err := packet.Peel(k, pkt, now, memStore{})
		if err != nil {
			panic(err)
		}
		if p.Final {
			fmt.Printf("hop %d: recipient got %q sent at %d\n", i, p.Message.Text, p.Message.Timestamp)
			break
		}
		fmt.Printf("hop %d: forward %d bytes to the next hop\n", i, len(p.Next))
		pkt = p.Next
	}
	// Output:
	// hop 0: forward 1351 bytes to the next hop
	// hop 1: forward 1351 bytes to the next hop
	// hop 2: recipient got "hello" sent at 1767225600000
}
