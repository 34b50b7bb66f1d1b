package packet_test

import (
	"crypto/rand"
	"fmt"

	"github.com/relayd/relayd/internal/packet"
)

// memStore is a toy replay store; a node keeps its tags in its database.
type memStore map[[packet.TagSize]byte]bool

func (m memStore) CheckAndAdd(tag [packet.TagSize]byte) (bool, error) {
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
	pkt, err := route.Seal(packet.Message{Text: []byte("hello"), Timestamp: 1767225600000}, por)
	if err != nil {
		panic(err)
	}

	// Each hop peels one layer with its own key and replay store.
	for i, k := range keys {
		p, err := packet.Peel(k, pkt, memStore{})
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
	// hop 0: forward 1335 bytes to the next hop
	// hop 1: forward 1335 bytes to the next hop
	// hop 2: recipient got "hello" sent at 1767225600000
}
