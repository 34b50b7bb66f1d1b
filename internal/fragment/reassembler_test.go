package fragment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// message is a test message split for sending.
type message struct {
	id     ID
	body   []byte
	blocks [][]byte
	texts  [][]byte
}

func newMessage(t testing.TB, rng *rand.Rand, size, blocks, capacity int) message {
	t.Helper()
	m := message{id: randID(rng), body: randBytes(rng, size)}
	for range blocks {
		m.blocks = append(m.blocks, randBytes(rng, 960))
	}
	var err error
	if m.texts, err = Split(m.id, m.body, m.blocks, capacity); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m message) check(t testing.TB, res Result) {
	t.Helper()
	if res.Kind != Complete || res.ID != m.id || res.Reply {
		t.Fatalf("result %v for %x, want complete", res.Kind, res.ID[:4])
	}
	if !bytes.Equal(res.Body, m.body) || len(res.Blocks) != len(m.blocks) {
		t.Fatalf("body of %d bytes and %d blocks, want %d and %d", len(res.Body), len(res.Blocks), len(m.body), len(m.blocks))
	}
	for i := range m.blocks {
		if !bytes.Equal(res.Blocks[i], m.blocks[i]) {
			t.Fatalf("reply block %d differs", i)
		}
	}
}

// TestRoundTrip: messages of random sizes up to 64 KiB with 0 to 3 reply blocks, at random
// capacities, delivered shuffled and with duplicates, complete exactly when their last
// distinct fragment arrives, once, whole.
func TestRoundTrip(t *testing.T) {
	rng := newRand(10)
	r := newReassembler(t, Limits{MaxMessages: 4, MaxBytes: 4 << 20, Timeout: time.Minute, RememberFor: time.Hour,
		MaxRemembered: 1000, MaxAckBlocks: 2})
	sizes := []int{0, 1, 472, 473, 474, 946, 947, 64 << 10}
	for trial := range 300 {
		size := rng.IntN(64<<10 + 1)
		if trial < len(sizes) {
			size = sizes[trial]
		}
		capacity := []int{500, 468, 484, 100 + rng.IntN(401)}[trial%4]
		m := newMessage(t, rng, size, rng.IntN(4), capacity)
		var order []int
		for i := range m.texts {
			for range 1 + rng.IntN(3)*rng.IntN(2) {
				order = append(order, i)
			}
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		seen := map[int]bool{}
		completed := false
		for _, i := range order {
			res := add(t, r, t0, m.texts[i])
			switch {
			case seen[i] || completed:
				if res.Kind != Duplicate {
					t.Fatalf("trial %d: fragment %d again: %v", trial, i, res.Kind)
				}
			case len(seen) == len(m.texts)-1:
				m.check(t, res)
				completed = true
			default:
				if res.Kind != Stored || res.Received != len(seen)+1 || res.Total != len(m.texts) {
					t.Fatalf("trial %d: fragment %d: %+v", trial, i, res)
				}
			}
			seen[i] = true
		}
		if !completed {
			t.Fatalf("trial %d: never complete", trial)
		}
		if ack, ok := r.Status(m.id); !ok || !ack.Complete || int(ack.Total) != len(m.texts) {
			t.Fatalf("trial %d: status %+v %v", trial, ack, ok)
		}
	}
	if r.Bytes() != 0 || r.InProgress() != 0 {
		t.Fatalf("%d bytes and %d messages held after every message completed", r.Bytes(), r.InProgress())
	}
}

// TestInterleaved: several messages' fragments interleaved complete each in its own time.
func TestInterleaved(t *testing.T) {
	rng := newRand(11)
	r := newReassembler(t, testLimits())
	var msgs []message
	type item struct{ m, i int }
	var all []item
	for k := range 5 {
		msgs = append(msgs, newMessage(t, rng, rng.IntN(5000), k%3, 500))
		for i := range msgs[k].texts {
			all = append(all, item{k, i})
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	left := make([]int, len(msgs))
	for k := range msgs {
		left[k] = len(msgs[k].texts)
	}
	for _, it := range all {
		res := add(t, r, t0, msgs[it.m].texts[it.i])
		if left[it.m]--; left[it.m] == 0 {
			msgs[it.m].check(t, res)
		} else if res.Kind != Stored {
			t.Fatalf("fragment %d of message %d: %v", it.i, it.m, res.Kind)
		}
	}
}

// TestStatus: the bitmap acknowledges exactly the fragments received, and completion turns it
// into a complete ack.
func TestStatus(t *testing.T) {
	rng := newRand(12)
	r := newReassembler(t, testLimits())
	m := newMessage(t, rng, 3000, 0, 500) // 7 fragments
	if _, ok := r.Status(m.id); ok {
		t.Fatal("status of an unknown id")
	}
	for _, i := range []int{5, 0, 6} {
		add(t, r, t0, m.texts[i])
	}
	ack, ok := r.Status(m.id)
	if !ok || ack.Complete || ack.Total != 7 || !bytes.Equal(ack.Bitmap, []byte{0b01100001}) {
		t.Fatalf("status %+v %v", ack, ok)
	}
	ack.Round = 3
	text, err := ack.Encode()
	if err != nil || len(text) != AckSize(7) {
		t.Fatalf("ack text of %d bytes, %v", len(text), err)
	}
	for _, i := range []int{1, 2, 3, 4} {
		add(t, r, t0, m.texts[i])
	}
	if ack, ok := r.Status(m.id); !ok || !ack.Complete || ack.Bitmap != nil || ack.Total != 7 {
		t.Fatalf("status after completion %+v %v", ack, ok)
	}
}

func parts(t testing.TB, id ID, round uint16, block []byte, capacity int) [][]byte {
	t.Helper()
	p, err := AckBlockParts(id, round, block, capacity)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAckBlocks: parts in any order make a block once; the newest MaxAckBlocks blocks are kept
// and handed out once each, newest first.
func TestAckBlocks(t *testing.T) {
	rng := newRand(13)
	r := newReassembler(t, testLimits()) // 2 blocks kept
	m := newMessage(t, rng, 2000, 0, 500)
	add(t, r, t0, m.texts[0])
	blocks := map[uint16][]byte{}
	for _, round := range []uint16{1, 3, 2} {
		blocks[round] = randBytes(rng, 960)
		p := parts(t, m.id, round, blocks[round], 468) // 3 parts
		for k, i := range []int{2, 0, 2, 1} {
			res := add(t, r, t0, p[i])
			want := []ResultKind{Stored, Stored, Duplicate, AckBlock}[k]
			if res.Kind != want || res.Round != round || res.ID != m.id {
				t.Fatalf("round %d part %d: %+v, want %v", round, i, res, want)
			}
		}
		if res := add(t, r, t0, p[0]); res.Kind != Duplicate {
			t.Fatalf("part of a whole round: %v", res.Kind)
		}
	}
	for _, want := range []uint16{3, 2} {
		b, round, ok := r.TakeAckBlock(m.id)
		if !ok || round != want || !bytes.Equal(b, blocks[want]) {
			t.Fatalf("took round %d (%v), want %d", round, ok, want)
		}
	}
	if _, _, ok := r.TakeAckBlock(m.id); ok {
		t.Fatal("a block handed out twice, or round 1 kept beyond the limit")
	}
	checkInvariants(t, r)
	// Blocks for an id no fragment of which arrived yet are kept too.
	other := randID(rng)
	for _, p := range parts(t, other, 0, blocks[1], 500) {
		add(t, r, t0, p)
	}
	if _, ok := r.Status(other); ok {
		t.Fatal("status without a fragment")
	}
	if b, round, ok := r.TakeAckBlock(other); !ok || round != 0 || !bytes.Equal(b, blocks[1]) {
		t.Fatal("block of an id without fragments lost")
	}
}

func TestAckBlockPartsDisagree(t *testing.T) {
	rng := newRand(14)
	r := newReassembler(t, testLimits())
	id := randID(rng)
	block := randBytes(rng, 960)
	at500 := parts(t, id, 1, block, 500) // 480 + 480
	at468 := parts(t, id, 1, block, 468) // 448 + 448 + 64
	add(t, r, t0, at500[0])
	for _, p := range at468 {
		f, _ := Decode(p)
		if _, err := r.Add(t0, f); !errors.Is(err, ErrMalformed) {
			t.Fatalf("part of another count: %v", err)
		}
	}
	// Same count, a last part longer than the first: 2 parts of 600 (capacity 620) against 480.
	at620 := parts(t, id, 1, randBytes(rng, 1200), 620)
	f, _ := Decode(at620[1])
	if _, err := r.Add(t0, f); !errors.Is(err, ErrMalformed) {
		t.Fatalf("part of another chunk: %v", err)
	}
	// Three parts of 40, 40 and 20 bytes against 448, 448 and 64.
	at60 := parts(t, id, 1, randBytes(rng, 100), 60)
	for _, held := range []int{0, 2} {
		r := newReassembler(t, testLimits())
		add(t, r, t0, at468[held])
		f, _ := Decode(at60[1])
		if _, err := r.Add(t0, f); !errors.Is(err, ErrMalformed) {
			t.Fatalf("part of 40 bytes against part %d: %v", held, err)
		}
		checkInvariants(t, r)
	}
	checkInvariants(t, r)
	if res := add(t, r, t0, at500[1]); res.Kind != AckBlock {
		t.Fatalf("the right part after wrong ones: %v", res.Kind)
	}
	// With BlockSize set, a block of another size is refused.
	lim := testLimits()
	lim.BlockSize = 961
	r = newReassembler(t, lim)
	add(t, r, t0, at500[0])
	f, _ = Decode(at500[1])
	if _, err := r.Add(t0, f); !errors.Is(err, ErrMalformed) {
		t.Fatalf("block of 960 bytes, BlockSize 961: %v", err)
	}
	checkInvariants(t, r)
	if _, _, ok := r.TakeAckBlock(id); ok {
		t.Fatal("a block of the wrong size kept")
	}
}

// TestCompletedDuplicates: fragments of a completed message are duplicates, never delivered
// again while the id is remembered; its status stays complete and ack blocks arriving for it
// can be taken, so a sender whose ack was lost is answered.
func TestCompletedDuplicates(t *testing.T) {
	rng := newRand(15)
	r := newReassembler(t, testLimits())
	m := newMessage(t, rng, 1500, 1, 500)
	for i, text := range m.texts {
		if res := add(t, r, t0, text); i == len(m.texts)-1 {
			m.check(t, res)
		}
	}
	block := randBytes(rng, 960)
	later := t0.Add(5 * time.Minute)
	for _, p := range parts(t, m.id, 2, block, 500) {
		add(t, r, later, p)
	}
	for _, text := range m.texts {
		if res := add(t, r, later, text); res.Kind != Duplicate || res.Received != len(m.texts) || res.Total != len(m.texts) {
			t.Fatalf("fragment of a completed message: %+v", res)
		}
	}
	ack, ok := r.Status(m.id)
	if !ok || !ack.Complete {
		t.Fatalf("status %+v %v", ack, ok)
	}
	if b, round, ok := r.TakeAckBlock(m.id); !ok || round != 2 || !bytes.Equal(b, block) {
		t.Fatal("ack block of a completed message not handed out")
	}
	if r.Expire(t0.Add(10*time.Minute-1)) != nil || r.Remembered() != 1 {
		t.Fatal("forgot a completed id early")
	}
	if r.Expire(t0.Add(10*time.Minute)) != nil || r.Remembered() != 0 {
		t.Fatal("remembered a completed id past RememberFor, or reported it")
	}
	// Forgotten: the same fragments are a new message.
	if res := add(t, r, later, m.texts[0]); res.Kind != Stored {
		t.Fatalf("fragment of a forgotten id: %v", res.Kind)
	}
}

func TestRememberedBound(t *testing.T) {
	rng := newRand(16)
	lim := testLimits()
	lim.MaxRemembered = 3
	r := newReassembler(t, lim)
	var msgs []message
	for range 5 {
		m := newMessage(t, rng, 100, 0, 500)
		msgs = append(msgs, m)
		m.check(t, add(t, r, t0, m.texts[0]))
	}
	if r.Remembered() != 3 {
		t.Fatalf("%d remembered", r.Remembered())
	}
	for k, m := range slices.Backward(msgs) { // the newest first: re-completing one forgets another
		res := add(t, r, t0, m.texts[0])
		if want := []ResultKind{Complete, Complete, Duplicate, Duplicate, Duplicate}[k]; res.Kind != want {
			t.Fatalf("message %d again: %v, want %v", k, res.Kind, want)
		}
	}
}

// TestLossAndResend runs the sender's rounds against the recipient over links losing a
// third of the packets each way: fragments, ack block parts and acks. Each round the sender
// sends what the newest acknowledgement does not name (as the courier does) and a new ack block;
// the recipient answers on the newest block it holds. The message is delivered once and the
// sender ends with a complete acknowledgement, also when the acks lost are those sent after
// completion.
func TestLossAndResend(t *testing.T) {
	for seed := range uint64(20) {
		rng := newRand(100 + seed)
		r := newReassembler(t, testLimits())
		m := newMessage(t, rng, 1+rng.IntN(64<<10), rng.IntN(3), 500)
		var latest *Ack // the newest acknowledgement the sender holds
		pending := func() []int {
			var out []int
			for i := range m.texts {
				if latest == nil || !latest.Has(i) {
					out = append(out, i)
				}
			}
			return out
		}
		lost := func() bool { return rng.IntN(3) == 0 }
		delivered, now := 0, t0
		round := uint16(0)
		for ; latest == nil || !latest.Complete; round++ {
			if round == 100 {
				t.Fatalf("seed %d: not done after %d rounds, pending %v", seed, round, pending())
			}
			now = now.Add(time.Second)
			block := randBytes(rng, 960)
			packets := parts(t, m.id, round, block, 500)
			for _, i := range pending() {
				packets = append(packets, m.texts[i])
			}
			rng.Shuffle(len(packets), func(i, j int) { packets[i], packets[j] = packets[j], packets[i] })
			for _, p := range packets {
				if lost() {
					continue
				}
				if res := add(t, r, now, p); res.Kind == Complete {
					m.check(t, res)
					delivered++
				}
			}
			ack, ok := r.Status(m.id)
			b, ackRound, took := r.TakeAckBlock(m.id)
			if !ok || !took {
				continue
			}
			if !bytes.Equal(b, block) && ackRound == round {
				t.Fatal("block of the round differs")
			}
			ack.Round = ackRound
			text, err := ack.Encode()
			if err != nil || len(text) > 468 {
				t.Fatalf("ack of %d bytes: %v", len(text), err)
			}
			if lost() {
				continue
			}
			f, err := Decode(text)
			if err != nil {
				t.Fatal(err)
			}
			got := f.(Ack)
			if got.Complete && delivered != 1 {
				t.Fatalf("seed %d: a complete acknowledgement before the message was delivered", seed)
			}
			if latest == nil || got.Round >= latest.Round {
				latest = &got
			}
		}
		if delivered != 1 {
			t.Fatalf("seed %d: delivered %d times", seed, delivered)
		}
	}
}

func TestExpire(t *testing.T) {
	rng := newRand(17)
	r := newReassembler(t, testLimits()) // timeout 1 min
	a := newMessage(t, rng, 2000, 0, 500)
	b := newMessage(t, rng, 2000, 0, 500)
	add(t, r, t0, a.texts[0])
	add(t, r, t0, b.texts[0])
	add(t, r, t0.Add(30*time.Second), b.texts[1]) // progress
	for _, p := range parts(t, randID(rng), 0, randBytes(rng, 960), 500)[:1] {
		add(t, r, t0, p) // only an ack block part of a third id
	}
	if got := r.Expire(t0.Add(time.Minute - 1)); got != nil {
		t.Fatalf("expired early: %+v", got)
	}
	got := r.Expire(t0.Add(time.Minute))
	if len(got) != 1 || got[0] != (Incomplete{ID: a.id, Received: 1, Total: 5}) {
		t.Fatalf("expired %+v", got)
	}
	if r.InProgress() != 1 {
		t.Fatalf("%d in progress; the ack-only id should be dropped silently", r.InProgress())
	}
	got = r.Expire(t0.Add(90 * time.Second))
	if len(got) != 1 || got[0] != (Incomplete{ID: b.id, Received: 2, Total: 5}) {
		t.Fatalf("expired %+v", got)
	}
	if r.InProgress() != 0 || r.Bytes() != 0 {
		t.Fatalf("%d messages, %d bytes left", r.InProgress(), r.Bytes())
	}
	checkInvariants(t, r)
	if _, ok := r.Status(a.id); ok {
		t.Fatal("status of an expired message")
	}
}

// TestFloodOfMessages: made-up ids beyond MaxMessages evict the least recently active
// incomplete message, each reported once; a message still making progress survives.
func TestFloodOfMessages(t *testing.T) {
	rng := newRand(18)
	lim := testLimits()
	lim.MaxMessages = 4
	r := newReassembler(t, lim)
	legit := newMessage(t, rng, 6000, 0, 500)
	idle := newMessage(t, rng, 6000, 0, 500)
	add(t, r, t0, idle.texts[0])
	var evicted []Incomplete
	next := 0
	for k := range 1000 {
		now := t0.Add(time.Duration(k) * time.Millisecond)
		if k%3 == 0 && next < len(legit.texts) { // the legitimate message keeps arriving
			res := add(t, r, now, legit.texts[next])
			evicted = append(evicted, res.Evicted...)
			if next++; next == len(legit.texts) {
				legit.check(t, res)
			}
		}
		flood, err := Split(randID(rng), randBytes(rng, 600), nil, 500)
		if err != nil {
			t.Fatal(err)
		}
		res := add(t, r, now, flood[0])
		evicted = append(evicted, res.Evicted...)
		if r.InProgress() > 4 {
			t.Fatalf("%d in progress", r.InProgress())
		}
	}
	if next != len(legit.texts) {
		t.Fatal("the legitimate message did not complete")
	}
	if len(evicted) != 1+1000-4 { // the idle message and every flood message but the 4 held
		t.Fatalf("%d evicted", len(evicted))
	}
	if evicted[0] != (Incomplete{ID: idle.id, Received: 1, Total: 13}) {
		t.Fatalf("first evicted %+v, want the idle message", evicted[0])
	}
	for _, e := range evicted {
		if e.ID == legit.id {
			t.Fatal("the progressing message was evicted")
		}
	}
}

// TestFloodOfBytes: MaxBytes holds under fragments of made-up ids; completed messages' ack
// blocks go first, then the least recently active messages; a message larger than the budget
// is refused outright, and one whose own pieces fill it is ErrFull.
func TestFloodOfBytes(t *testing.T) {
	rng := newRand(19)
	lim := testLimits()
	lim.MaxMessages = 1000
	lim.MaxBytes = 20_000
	r := newReassembler(t, lim)
	done := newMessage(t, rng, 100, 0, 500)
	done.check(t, add(t, r, t0, done.texts[0]))
	for _, p := range parts(t, done.id, 0, randBytes(rng, 960), 500) {
		add(t, r, t0, p)
	}
	old := newMessage(t, rng, 5000, 0, 500)
	add(t, r, t0, old.texts[0])
	held := r.Bytes()
	var evicted []Incomplete
	for k := range 200 {
		m := newMessage(t, rng, 5000, 0, 500)
		res := add(t, r, t0.Add(time.Duration(k+1)*time.Millisecond), m.texts[0])
		evicted = append(evicted, res.Evicted...)
		if k == 0 && (len(res.Evicted) != 0 || r.Bytes() != held+500-FragmentHeaderSize+PieceOverhead) {
			t.Fatalf("evicted %+v with room left", res.Evicted)
		}
	}
	if _, _, ok := r.TakeAckBlock(done.id); ok {
		t.Fatal("the completed message's ack block outlived the flood")
	}
	if _, ok := r.Status(done.id); !ok {
		t.Fatal("the completed id was forgotten under byte pressure")
	}
	if len(evicted) == 0 || evicted[0].ID != old.id {
		t.Fatalf("evicted %+v, want the oldest first", evicted)
	}
	perFragment := 500 - FragmentHeaderSize + PieceOverhead
	if r.InProgress() != lim.MaxBytes/perFragment {
		t.Fatalf("%d messages held in %d bytes", r.InProgress(), r.Bytes())
	}

	big := newMessage(t, rng, lim.MaxBytes, 0, 500)
	f, _ := Decode(big.texts[0])
	if _, err := r.Add(t0, f); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("message over MaxBytes: %v", err)
	}
	// A message's own ack blocks give way to its fragments, the lowest rounds first.
	lim.MaxAckBlocks = 10
	r = newReassembler(t, lim)
	m := newMessage(t, rng, 15_000, 0, 500) // 32 fragments
	for _, text := range m.texts[:31] {
		add(t, r, t0, text) // 31 × 537 bytes
	}
	for round := range uint16(4) { // blocks of 1,024 bytes: the fourth drops the first
		add(t, r, t0, parts(t, m.id, round, randBytes(rng, 960), 1000)[0])
	}
	if r.Bytes() != 31*537+3*1024 {
		t.Fatalf("%d bytes held", r.Bytes())
	}
	m.check(t, add(t, r, t0, m.texts[31])) // drops round 1's block
	for _, want := range []uint16{3, 2} {
		if _, round, ok := r.TakeAckBlock(m.id); !ok || round != want {
			t.Fatalf("took round %d, %v; want %d", round, ok, want)
		}
	}
	if _, _, ok := r.TakeAckBlock(m.id); ok {
		t.Fatal("a third block survived")
	}
	// An ack block part that does not fit beside its message's fragments is ErrFull.
	r = newReassembler(t, lim)
	m = newMessage(t, rng, 17_500, 0, 500) // 37 fragments, 19,868 bytes counted
	for _, text := range m.texts[:36] {
		add(t, r, t0, text)
	}
	f, _ = Decode(parts(t, m.id, 0, randBytes(rng, 960), 1000)[0])
	if _, err := r.Add(t0, f); !errors.Is(err, ErrFull) {
		t.Fatalf("ack block part beside a full message: %v", err)
	}
	checkInvariants(t, r)
	m.check(t, add(t, r, t0, m.texts[36]))
}

func TestAddRejects(t *testing.T) {
	rng := newRand(20)
	lim := testLimits()
	lim.BlockSize = 960
	r := newReassembler(t, lim)
	m := newMessage(t, rng, 3000, 0, 500)
	add(t, r, t0, m.texts[0])
	other, err := Split(m.id, randBytes(rng, 3000), nil, 400) // same id, other chunk
	if err != nil {
		t.Fatal(err)
	}
	longer, err := Split(m.id, randBytes(rng, 3001), nil, 500) // same id, other length
	if err != nil {
		t.Fatal(err)
	}
	withBlock, err := Split(randID(rng), nil, [][]byte{randBytes(rng, 959)}, 500)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{
		"other chunk":      other[1],
		"other last chunk": other[len(other)-1],
		"other length":     longer[1],
		"block size":       withBlock[0],
	} {
		f, err := Decode(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Add(t0, f); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	checkInvariants(t, r)
	if ack, _ := r.Status(m.id); !bytes.Equal(ack.Bitmap, []byte{1}) {
		t.Fatalf("rejected fragments changed the status: %x", ack.Bitmap)
	}
	for name, tt := range map[string]struct {
		f    Frame
		want error
	}{
		"ack":                {Ack{ID: m.id, Total: 1, Complete: true}, ErrKind},
		"nil":                {nil, ErrMalformed},
		"pointer":            {&Fragment{ID: m.id, Count: 1}, ErrKind},
		"bad fragment":       {Fragment{ID: m.id, Index: 2, Count: 1}, ErrMalformed},
		"bad reply":          {Reply{ID: m.id, Count: 0}, ErrMalformed},
		"bad part":           {AckBlockPart{ID: m.id, Count: 1}, ErrMalformed},
		"too many fragments": {Fragment{ID: randID(rng), Index: 0, Count: MaxFragments + 1, BodyLen: MaxFragments + 1, Data: []byte{1}}, ErrTooLarge},
	} {
		if _, err := r.Add(t0, tt.f); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", name, err, tt.want)
		}
	}
	for _, bad := range []Limits{{}, {MaxMessages: 1, MaxBytes: 1, Timeout: 1, RememberFor: 1, MaxRemembered: 1, MaxAckBlocks: 1, BlockSize: -1}} {
		if _, err := NewReassembler(bad); !errors.Is(err, ErrLimits) {
			t.Errorf("limits %+v: %v", bad, err)
		}
	}
	if _, err := NewReassembler(DefaultLimits()); err != nil {
		t.Fatal(err)
	}
}

// TestReplies: a long answer over several reply blocks reassembles apart from the message it
// answers and from other answers to it.
func TestReplies(t *testing.T) {
	rng := newRand(21)
	r := newReassembler(t, testLimits())
	id := randID(rng)
	first, second := randBytes(rng, 1000), randBytes(rng, 10)
	a, err := SplitReply(id, 0, first, 468)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SplitReply(id, 1, second, 468)
	if err != nil {
		t.Fatal(err)
	}
	add(t, r, t0, a[2])
	if res := add(t, r, t0, b[0]); res.Kind != Complete || !res.Reply || res.Seq != 1 || !bytes.Equal(res.Body, second) || res.Blocks != nil {
		t.Fatalf("second answer: %+v", res)
	}
	add(t, r, t0, a[0])
	if res := add(t, r, t0, a[0]); res.Kind != Duplicate {
		t.Fatalf("duplicate reply chunk: %v", res.Kind)
	}
	if res := add(t, r, t0, a[1]); res.Kind != Complete || !res.Reply || res.Seq != 0 || !bytes.Equal(res.Body, first) {
		t.Fatalf("first answer: %+v", res)
	}
	if res := add(t, r, t0, b[0]); res.Kind != Duplicate {
		t.Fatalf("answer again: %v", res.Kind)
	}
	if _, ok := r.Status(id); ok {
		t.Fatal("replies have a status")
	}
	// An expired reply is reported as one.
	c, _ := SplitReply(id, 2, first, 468)
	add(t, r, t0, c[0])
	if got := r.Expire(t0.Add(time.Hour)); !slices.Equal(got, []Incomplete{{ID: id, Reply: true, Seq: 2, Received: 1, Total: 3}}) {
		t.Fatalf("expired %+v", got)
	}
}

// TestPartialBlocksBounded: at most MaxAckBlocks rounds are assembled at once, the lowest
// giving way, also to the message's own fragments when its pieces fill MaxBytes.
func TestPartialBlocksBounded(t *testing.T) {
	rng := newRand(22)
	r := newReassembler(t, testLimits()) // 2 rounds at once
	id := randID(rng)
	p := map[uint16][][]byte{}
	for _, round := range []uint16{1, 2, 3} {
		p[round] = parts(t, id, round, randBytes(rng, 960), 500)
		add(t, r, t0, p[round][0])
	}
	steps := []struct {
		round uint16
		part  int
		want  ResultKind
	}{
		{1, 1, Stored},   // round 1 was dropped for round 3: begins again, dropping round 2
		{3, 1, AckBlock}, // round 3 whole
		{2, 1, Stored},   // round 2 was dropped: begins again
		{1, 0, AckBlock}, // round 1 whole
	}
	for _, s := range steps {
		if res := add(t, r, t0, p[s.round][s.part]); res.Kind != s.want || res.Round != s.round {
			t.Fatalf("round %d part %d: %v, want %v", s.round, s.part, res.Kind, s.want)
		}
	}

	lim := testLimits()
	lim.MaxBytes, lim.MaxAckBlocks = 20_000, 10
	r = newReassembler(t, lim)
	m := newMessage(t, rng, 15_000, 0, 500) // 32 fragments
	for _, text := range m.texts[:31] {
		add(t, r, t0, text) // 16,647 bytes
	}
	for round := range uint16(6) { // 6 first parts of 544 bytes: 19,911
		p[round] = parts(t, m.id, round, randBytes(rng, 960), 500)
		add(t, r, t0, p[round][0])
	}
	m.check(t, add(t, r, t0, m.texts[31])) // 401 more: round 0's part gives way
	if res := add(t, r, t0, p[0][1]); res.Kind != Stored {
		t.Fatalf("second part of the round dropped: %v", res.Kind)
	}
	if res := add(t, r, t0, p[1][1]); res.Kind != AckBlock {
		t.Fatalf("second part of a round kept: %v", res.Kind)
	}
}

func TestNames(t *testing.T) {
	for want, s := range map[string]fmt.Stringer{
		"fragment": KindFragment, "ack block part": KindAckBlockPart, "ack": KindAck, "reply": KindReply, "kind 9": Kind(9),
		"stored": Stored, "duplicate": Duplicate, "complete": Complete, "ack block": AckBlock, "result 0": ResultKind(0),
	} {
		if s.String() != want {
			t.Errorf("%q, want %q", s.String(), want)
		}
	}
}
