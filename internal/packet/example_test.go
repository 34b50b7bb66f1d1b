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

// A reply: the creator makes a reply block over one relayer back to itself and
// keeps its keys; the replier, who learns neither the creator nor the path,
// seals one message with the block; the relayer peels it like any packet; the
// creator opens it.
func Example_reply() {
	keys := make([]*packet.PrivateKey, 3) // replier, relayer, creator
	for i := range keys {
		var scalar [32]byte
		rand.Read(scalar[:])
		k, err := packet.NewPrivateKey(scalar[:])
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	relayer, creator := keys[1], keys[2]
	made := time.UnixMilli(1767225600000)

	// Creator: the return path is the relayer, then itself; proof-of-relay
	// data from the route's secrets (left zero here), then the block.
	route, err := packet.NewRoute(rand.Reader, []*packet.PublicKey{relayer.PublicKey(), creator.PublicKey()})
	if err != nil {
		panic(err)
	}
	block, replyKeys, err := route.SealReply(rand.Reader, made, make([][packet.PoRSize]byte, 1))
	if err != nil {
		panic(err)
	}
	encoded, _ := block.MarshalBinary() // what the replier is given

	// Replier: decode the block, seal the reply, send it to the block's first hop.
	var b packet.ReplyBlock
	if err := b.UnmarshalBinary(encoded); err != nil {
		panic(err)
	}
	sent := made.Add(2 * time.Minute)
	pkt, err := b.Seal(rand.Reader, packet.Message{Text: []byte("the answer"), Timestamp: uint64(sent.UnixMilli())})
	if err != nil {
		panic(err)
	}

	// Relayer, then creator.
	p, err := packet.Peel(relayer, pkt, sent, memStore{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("relayer: forward %d bytes, final %v\n", len(p.Next), p.Final)
	p, err = packet.Peel(creator, p.Next, sent, memStore{})
	if err != nil {
		panic(err)
	}
	msg, err := packet.OpenReply(replyKeys, &p)
	if err != nil {
		panic(err)
	}
	fmt.Printf("creator: reply %v, %q\n", p.Reply && p.ReplyID == replyKeys.ID(), msg.Text)
	// Output:
	// relayer: forward 1351 bytes, final false
	// creator: reply true, "the answer"
}
