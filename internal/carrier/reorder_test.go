package carrier

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/relayd/relayd/internal/session"
)

// TestPartsReorderedFar: the parts of 200 blocks reach the exit reordered by far more than 64
// numbers (PROTOCOL.md §9.7): block 0's first half, block 128's second half, blocks 129 to 199,
// then block 0's second half, blocks 1 to 127 and block 128's first half. The exit joins every
// block from its own two halves (with seven-bit numbers blocks 0 and 128 shared a number: it
// joined block 0's first half with block 128's second, a block nobody made, and lost both
// blocks), drops no half, and the answer comes back whole on those blocks.
func TestPartsReorderedFar(t *testing.T) {
	const blocks = 200
	n := newMemNet(t, 0)
	var (
		mu    sync.Mutex
		parts [][]byte // the first 2·blocks parts, in the order the entry sent them
	)
	var exit *end
	delivered := make(chan struct{})
	deliver := func() {
		defer close(delivered)
		var order [][2]int // block, half
		order = append(order, [2]int{0, 0}, [2]int{128, 1})
		for b := 129; b < blocks; b++ {
			order = append(order, [2]int{b, 0}, [2]int{b, 1})
		}
		order = append(order, [2]int{0, 1})
		for b := 1; b < 128; b++ {
			order = append(order, [2]int{b, 0}, [2]int{b, 1})
		}
		order = append(order, [2]int{128, 0})
		mu.Lock()
		held := parts
		mu.Unlock()
		for _, o := range order {
			if err := exit.c.Receive(held[2*o[0]+o[1]], false); err != nil {
				t.Errorf("part %v: %v", o, err)
			}
		}
		// Every block the exit holds now is one the network made, and no half went.
		if st := exit.c.Stats(); st.HalvesDropped != 0 {
			t.Errorf("the exit dropped %d halves of %d reordered blocks", st.HalvesDropped, blocks)
		}
		exit.c.mu.Lock()
		links := slices.Collect(maps.Values(exit.c.exits))
		exit.c.mu.Unlock()
		var stock [][]byte
		for _, l := range links {
			l.mu.Lock()
			for _, s := range l.stock {
				stock = append(stock, s.raw)
			}
			l.mu.Unlock()
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, raw := range stock {
			if _, made := n.blocks[string(raw)]; !made {
				t.Errorf("the exit joined a block nobody made")
			}
		}
	}
	n.drop = func(text []byte, reply bool) bool { // holds back the first 2·blocks parts (parts leave in order)
		if reply || text[0] != KindBlockPart {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if len(parts) >= 2*blocks {
			return false
		}
		parts = append(parts, bytes.Clone(text))
		if len(parts) == 2*blocks {
			go deliver()
		}
		return true
	}
	entry := n.node(t, "entry", false, Config{InitialBlocks: blocks, OpeningBlocks: blocks})
	exit = n.node(t, "exit", true, Config{})
	const size = 128 << 10 // about 300 answers: the exit uses every block it joined
	serve(t, exit, size)
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-7"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(io.LimitReader(seeded([]byte("seed-7")), size))
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	<-delivered
	if st := exit.c.Stats(); st.BlocksReceived < blocks || st.HalvesDropped != 0 {
		t.Fatalf("the exit joined %d blocks and dropped %d halves", st.BlocksReceived, st.HalvesDropped)
	}
}
