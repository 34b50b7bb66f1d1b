package fragment_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/relayd/relayd/internal/fragment"
)

// A 64 KiB message sent in one round with an ack block, reassembled, and acknowledged.
func Example() {
	id := fragment.ID{1} // from crypto/rand in a real sender
	body := bytes.Repeat([]byte("relayd "), 65536/7+1)[:65536]
	texts, _ := fragment.Split(id, body, nil, 500)
	ackBlock := bytes.Repeat([]byte{0xab}, 960) // from the packet layer in a real sender
	parts, _ := fragment.AckBlockParts(id, 0, ackBlock, 500)
	fmt.Println(len(texts), "fragments,", len(parts), "ack block parts")

	r, _ := fragment.NewReassembler(fragment.DefaultLimits())
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, text := range append(parts, texts...) {
		f, _ := fragment.Decode(text)
		res, _ := r.Add(now, f)
		if res.Kind == fragment.Complete {
			fmt.Println("complete:", bytes.Equal(res.Body, body))
		}
	}
	ack, _ := r.Status(id)
	_, ack.Round, _ = r.TakeAckBlock(id) // the ack travels on this block
	text, _ := ack.Encode()
	fmt.Println("ack of", len(text), "bytes")

	f, _ := fragment.Decode(text)
	acked := 0
	for i := range texts {
		if f.(fragment.Ack).Has(i) {
			acked++
		}
	}
	fmt.Println(acked, "fragments acknowledged, complete:", f.(fragment.Ack).Complete)
	// Output:
	// 139 fragments, 2 ack block parts
	// complete: true
	// ack of 22 bytes
	// 139 fragments acknowledged, complete: true
}
