package fragment

import (
	"bytes"
	"errors"
	"testing"
)

func TestSplitCounts(t *testing.T) {
	rng := newRand(1)
	body := randBytes(rng, 64<<10)
	tests := []struct {
		name      string
		body      int
		blocks    int
		capacity  int
		fragments int
	}{
		{"64 KiB at 500", 64 << 10, 0, 500, 139},
		{"64 KiB at 468", 64 << 10, 0, 468, 149},
		{"64 KiB and 3 blocks of 960 at 500", 64 << 10, 3, 500, 145},
		{"empty", 0, 0, 500, 1},
		{"one chunk", 473, 0, 500, 1},
		{"one chunk and a byte", 474, 0, 500, 2},
		{"one block, empty body", 0, 1, 500, 3},
		{"the smallest capacity", 10, 0, FragmentHeaderSize + 1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks := make([][]byte, tt.blocks)
			for i := range blocks {
				blocks[i] = randBytes(rng, 960)
			}
			texts, err := Split(testID, body[:tt.body], blocks, tt.capacity)
			if err != nil {
				t.Fatal(err)
			}
			if len(texts) != tt.fragments {
				t.Fatalf("%d fragments, want %d", len(texts), tt.fragments)
			}
			var content []byte
			for i, text := range texts {
				if len(text) > tt.capacity || i < len(texts)-1 && len(text) != tt.capacity {
					t.Fatalf("fragment %d: %d bytes at capacity %d", i, len(text), tt.capacity)
				}
				f, err := Decode(text)
				if err != nil {
					t.Fatal(err)
				}
				frag := f.(Fragment)
				if int(frag.Index) != i || int(frag.Count) != len(texts) || int(frag.BodyLen) != tt.body || int(frag.Blocks) != tt.blocks {
					t.Fatalf("fragment %d: %+v", i, frag)
				}
				content = append(content, frag.Data...)
			}
			want := append(bytes.Join(blocks, nil), body[:tt.body]...)
			if !bytes.Equal(content, want) {
				t.Fatal("the fragments' data is not blocks then body")
			}
		})
	}
}

func TestSplitLimits(t *testing.T) {
	rng := newRand(2)
	block := randBytes(rng, 960)
	tests := []struct {
		name     string
		body     int
		blocks   [][]byte
		capacity int
		want     error
	}{
		{"no room for data", 10, nil, FragmentHeaderSize, ErrCapacity},
		{"negative capacity", 0, nil, -1, ErrCapacity},
		{"more fragments than acks count", MaxFragments + 1, nil, FragmentHeaderSize + 1, ErrTooLarge},
		{"body over the length field", MaxBodyLen + 1, nil, 500, ErrTooLarge},
		{"blocks of two sizes", 10, [][]byte{block, block[:959]}, 500, ErrBlockSize},
		{"empty block", 10, [][]byte{{}}, 500, ErrBlockSize},
		{"block over 64 KiB", 10, [][]byte{make([]byte, MaxBlockSize+1)}, 500, ErrBlockSize},
		{"256 blocks", 10, make([][]byte, 256), 1 << 20, ErrBlockSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts, err := Split(testID, make([]byte, tt.body), tt.blocks, tt.capacity)
			if !errors.Is(err, tt.want) {
				t.Fatalf("%d texts, %v; want %v", len(texts), err, tt.want)
			}
		})
	}
	// Exactly MaxFragments fragments are allowed.
	if texts, err := Split(testID, make([]byte, MaxFragments), nil, FragmentHeaderSize+1); err != nil || len(texts) != MaxFragments {
		t.Fatalf("%d texts, %v", len(texts), err)
	}
}

func TestAckBlockParts(t *testing.T) {
	rng := newRand(3)
	block := randBytes(rng, 1000)
	for _, tt := range []struct{ size, capacity, parts int }{
		{964, 500, 2}, {965, 500, 3}, {960, 484, 3}, {960, 468, 3}, {1, 500, 1}, {482, 500, 1}, {483, 500, 2},
	} {
		texts, err := AckBlockParts(testID, 9, block[:tt.size], tt.capacity)
		if err != nil || len(texts) != tt.parts {
			t.Fatalf("block of %d at capacity %d: %d parts, %v; want %d", tt.size, tt.capacity, len(texts), err, tt.parts)
		}
		var data []byte
		for i, text := range texts {
			f, err := Decode(text)
			if err != nil || len(text) > tt.capacity {
				t.Fatalf("part %d: %d bytes, %v", i, len(text), err)
			}
			p := f.(AckBlockPart)
			if p.Round != 9 || int(p.Index) != i || int(p.Count) != tt.parts {
				t.Fatalf("part %d: %+v", i, p)
			}
			data = append(data, p.Data...)
		}
		if !bytes.Equal(data, block[:tt.size]) {
			t.Fatal("parts do not join into the block")
		}
	}
	if _, err := AckBlockParts(testID, 0, nil, 500); !errors.Is(err, ErrBlockSize) {
		t.Fatalf("empty block: %v", err)
	}
	if _, err := AckBlockParts(testID, 0, block, AckBlockPartHeaderSize); !errors.Is(err, ErrCapacity) {
		t.Fatalf("no room: %v", err)
	}
	chunk := 500 - AckBlockPartHeaderSize
	if _, err := AckBlockParts(testID, 0, make([]byte, MaxParts*chunk+1), 500); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%d parts: %v", MaxParts+1, err)
	}
	if texts, err := AckBlockParts(testID, 0, make([]byte, MaxParts*chunk), 500); err != nil || len(texts) != MaxParts {
		t.Fatalf("%d parts: %d, %v", MaxParts, len(texts), err)
	}
	if _, err := AckBlockParts(testID, MaxRound+1, block, 500); !errors.Is(err, ErrMalformed) {
		t.Fatalf("round %d: %v", MaxRound+1, err)
	}
}

func TestSplitReply(t *testing.T) {
	body := randBytes(newRand(4), 1000)
	texts, err := SplitReply(testID, 3, body, 468)
	if err != nil || len(texts) != 3 {
		t.Fatalf("%d texts, %v", len(texts), err)
	}
	var data []byte
	for i, text := range texts {
		f, err := Decode(text)
		if err != nil || len(text) > 468 {
			t.Fatal(err)
		}
		r := f.(Reply)
		if r.ID != testID || r.Seq != 3 || int(r.Index) != i || r.Count != 3 || r.BodyLen != 1000 {
			t.Fatalf("reply %d: %+v", i, r)
		}
		data = append(data, r.Data...)
	}
	if !bytes.Equal(data, body) {
		t.Fatal("replies do not join into the body")
	}
	if _, err := SplitReply(testID, 0, body, ReplyHeaderSize); !errors.Is(err, ErrCapacity) {
		t.Fatalf("no room: %v", err)
	}
	if _, err := SplitReply(testID, 0, make([]byte, MaxFragments+1), ReplyHeaderSize+1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too many: %v", err)
	}
}
