package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openTest(t *testing.T) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func msgID(i int) (id [16]byte) {
	copy(id[:], fmt.Sprintf("message %8d", i))
	return id
}

func testInbox(i int, blocks ...string) InboxMessage {
	m := InboxMessage{ID: msgID(i), Received: time.UnixMilli(1_760_000_000_000 + int64(i)), SentAt: 1_760_000_000_000 - uint64(i),
		Body: []byte(fmt.Sprintf("body %d", i))}
	for _, b := range blocks {
		m.ReplyBlocks = append(m.ReplyBlocks, []byte(b))
	}
	return m
}

func sameInbox(a, b InboxMessage) bool {
	if a.Seq != b.Seq || a.ID != b.ID || !a.Received.Equal(b.Received) || a.SentAt != b.SentAt || !bytes.Equal(a.Body, b.Body) ||
		a.Reply != b.Reply || a.InReplyTo != b.InReplyTo || len(a.ReplyBlocks) != len(b.ReplyBlocks) {
		return false
	}
	for i := range a.ReplyBlocks {
		if !bytes.Equal(a.ReplyBlocks[i], b.ReplyBlocks[i]) {
			return false
		}
	}
	return true
}

func mustPutInbox(t *testing.T, db *DB, m InboxMessage) uint64 {
	t.Helper()
	seq, dup, err := db.PutInbox(m)
	if err != nil || dup {
		t.Fatalf("put inbox message %x: seq %d, dup %v, %v", m.ID[:4], seq, dup, err)
	}
	return seq
}

func TestInboxPutGetList(t *testing.T) {
	db, dir := openTest(t)
	reply := testInbox(2, "block a", "block b")
	reply.Reply, reply.InReplyTo = true, [16]byte{0xee, 1}
	want := []InboxMessage{testInbox(1), reply, testInbox(3)}
	want[2].Body = nil // an empty message
	for i := range want {
		want[i].Seq = mustPutInbox(t, db, want[i])
		if want[i].Seq != uint64(i+1) {
			t.Fatalf("message %d got seq %d", i, want[i].Seq)
		}
	}
	db = reopen(t, db, dir)
	for _, w := range want {
		got, ok, err := db.GetInbox(w.Seq)
		if err != nil || !ok || !sameInbox(got, w) {
			t.Fatalf("get %d: %+v, %v, %v; want %+v", w.Seq, got, ok, err, w)
		}
	}
	if _, ok, err := db.GetInbox(4); ok || err != nil {
		t.Fatalf("get of a seq never given: %v, %v", ok, err)
	}
	for _, tc := range []struct {
		since uint64
		limit int
		want  []uint64
	}{
		{0, 10, []uint64{1, 2, 3}},
		{0, 2, []uint64{1, 2}},
		{1, 10, []uint64{2, 3}},
		{3, 10, nil},
		{^uint64(0), 10, nil},
		{0, 0, nil},
		{0, -1, nil},
	} {
		t.Run(fmt.Sprintf("since %d limit %d", tc.since, tc.limit), func(t *testing.T) {
			msgs, total, err := db.ListInbox(tc.since, tc.limit)
			if err != nil || total != 3 || len(msgs) != len(tc.want) {
				t.Fatalf("%d messages, total %d, %v", len(msgs), total, err)
			}
			for i, m := range msgs {
				if !sameInbox(m, want[tc.want[i]-1]) {
					t.Fatalf("message %d: %+v", i, m)
				}
			}
		})
	}
	n, size, err := db.InboxUsage()
	if wantSize := len("body 1") + len("body 2") + len("block a") + len("block b"); err != nil || n != 3 || size != int64(wantSize) {
		t.Fatalf("usage %d messages, %d bytes, %v; want 3, %d", n, size, err, wantSize)
	}
}

func TestListInboxIsBounded(t *testing.T) {
	db, _ := openTest(t)
	db.bolt.NoSync = true // a thousand messages, not a thousand fsyncs
	for i := range MaxInboxList + 2 {
		mustPutInbox(t, db, testInbox(i))
	}
	msgs, total, err := db.ListInbox(0, MaxInboxList+2)
	if err != nil || len(msgs) != MaxInboxList || total != MaxInboxList+2 {
		t.Fatalf("%d messages of %d, %v; want %d", len(msgs), total, err, MaxInboxList)
	}
	if msgs[0].Seq != 1 || msgs[len(msgs)-1].Seq != MaxInboxList {
		t.Fatalf("seqs %d to %d", msgs[0].Seq, msgs[len(msgs)-1].Seq)
	}
}

func TestInboxDuplicates(t *testing.T) {
	db, dir := openTest(t)
	seq := mustPutInbox(t, db, testInbox(1))
	other := mustPutInbox(t, db, testInbox(2))
	// The same id with another body is the same message: the first copy stays.
	again := testInbox(1)
	again.Body = []byte("changed")
	if s, dup, err := db.PutInbox(again); err != nil || !dup || s != seq {
		t.Fatalf("second copy: seq %d, dup %v, %v; want %d, true", s, dup, err, seq)
	}
	if _, total, _ := db.ListInbox(0, 10); total != 2 {
		t.Fatalf("%d messages after a duplicate", total)
	}
	// Read by the app, then resent: still a duplicate, also after a restart.
	if ok, err := db.DeleteInbox(seq); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if m, ok, err := db.PopInbox(); !ok || err != nil || m.Seq != other {
		t.Fatalf("pop: %+v, %v, %v", m, ok, err)
	}
	db = reopen(t, db, dir)
	for _, i := range []int{1, 2} {
		if seen, err := db.SeenInbox(msgID(i)); !seen || err != nil {
			t.Fatalf("message %d read by the app is not seen: %v", i, err)
		}
		if s, dup, err := db.PutInbox(testInbox(i)); err != nil || !dup || s != uint64(i) {
			t.Fatalf("resent message %d: seq %d, dup %v, %v", i, s, dup, err)
		}
	}
	if seen, err := db.SeenInbox(msgID(3)); seen || err != nil {
		t.Fatalf("a message never received is seen: %v", err)
	}
	if _, total, _ := db.ListInbox(0, 10); total != 0 {
		t.Fatalf("%d messages after resends of read ones", total)
	}
}

func TestInboxSeqNeverReused(t *testing.T) {
	db, dir := openTest(t)
	for i := 1; i <= 3; i++ {
		mustPutInbox(t, db, testInbox(i))
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if ok, err := db.DeleteInbox(seq); !ok || err != nil {
			t.Fatalf("delete %d: %v, %v", seq, ok, err)
		}
	}
	if ok, err := db.DeleteInbox(3); ok || err != nil {
		t.Fatalf("second delete: %v, %v", ok, err)
	}
	db = reopen(t, db, dir)
	if seq := mustPutInbox(t, db, testInbox(4)); seq != 4 {
		t.Fatalf("after deleting every message and reopening, the next seq is %d, want 4", seq)
	}
	if msgs, _, _ := db.ListInbox(3, 10); len(msgs) != 1 || msgs[0].Seq != 4 {
		t.Fatalf("the app's cursor 3 sees %+v", msgs)
	}
}

func TestPopInbox(t *testing.T) {
	db, _ := openTest(t)
	if _, ok, err := db.PopInbox(); ok || err != nil {
		t.Fatalf("pop of an empty inbox: %v, %v", ok, err)
	}
	for i := 1; i <= 3; i++ {
		mustPutInbox(t, db, testInbox(i, "b"))
	}
	db.DeleteInbox(2)
	for _, want := range []uint64{1, 3} {
		m, ok, err := db.PopInbox()
		if !ok || err != nil || m.Seq != want || m.ID != msgID(int(want)) || len(m.ReplyBlocks) != 1 {
			t.Fatalf("pop: %+v, %v, %v; want seq %d", m, ok, err, want)
		}
	}
	if _, ok, _ := db.PopInbox(); ok {
		t.Fatal("popped from an emptied inbox")
	}
	if n, size, _ := db.InboxUsage(); n != 0 || size != 0 {
		t.Fatalf("usage of an emptied inbox: %d, %d", n, size)
	}
}

func TestInboxQuota(t *testing.T) {
	db, dir := openTest(t)
	if db.inboxMessages.Load() != DefaultInboxMessages || db.inboxBytes.Load() != DefaultInboxBytes {
		t.Fatalf("default quota %d, %d", db.inboxMessages.Load(), db.inboxBytes.Load())
	}
	db.SetInboxQuota(2, 30)
	m := func(i, size int, blocks ...string) InboxMessage {
		m := testInbox(i, blocks...)
		m.Body = bytes.Repeat([]byte{'x'}, size)
		return m
	}
	mustPutInbox(t, db, m(1, 10, "0123456789")) // 20 bytes
	if _, _, err := db.PutInbox(m(2, 11)); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("31 bytes in a 30-byte inbox: %v", err)
	}
	mustPutInbox(t, db, m(3, 10))
	if _, _, err := db.PutInbox(m(4, 0)); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("a third message in a two-message inbox: %v", err)
	}
	// A duplicate is answered, full or not; a refused message was not stored.
	if seq, dup, err := db.PutInbox(m(1, 10)); err != nil || !dup || seq != 1 {
		t.Fatalf("duplicate in a full inbox: %d, %v, %v", seq, dup, err)
	}
	if seen, _ := db.SeenInbox(msgID(4)); seen {
		t.Fatal("a refused message is seen")
	}
	// Taking a reply block frees its bytes; reading a message frees its place.
	db.SetInboxQuota(3, 30)
	if _, _, err := db.PutInbox(m(5, 1)); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("31 bytes: %v", err)
	}
	if _, _, err := db.TakeReplyBlock(1); err != nil {
		t.Fatal(err)
	}
	mustPutInbox(t, db, m(5, 10))
	db = reopen(t, db, dir) // the quota is the node's setting, the usage is stored
	db.SetInboxQuota(3, 30)
	if _, _, err := db.PutInbox(m(6, 1)); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("after reopening, a fourth message: %v", err)
	}
	db.PopInbox()
	mustPutInbox(t, db, m(6, 10))
	db.SetInboxQuota(0, -1)
	if db.inboxMessages.Load() != DefaultInboxMessages || db.inboxBytes.Load() != DefaultInboxBytes {
		t.Fatalf("quota below 1 gives %d, %d", db.inboxMessages.Load(), db.inboxBytes.Load())
	}
}

func TestInboxRefusesInvalid(t *testing.T) {
	db, _ := openTest(t)
	for name, m := range map[string]InboxMessage{
		"empty reply block": testInbox(1, "a", ""),
		"too many blocks":   {ID: msgID(2), ReplyBlocks: make([][]byte, MaxReplyBlocks+1)},
	} {
		if _, _, err := db.PutInbox(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	blocks := make([]string, MaxReplyBlocks)
	for i := range blocks {
		blocks[i] = "b"
	}
	mustPutInbox(t, db, testInbox(3, blocks...))
}

func TestTakeReplyBlock(t *testing.T) {
	db, dir := openTest(t)
	seq := mustPutInbox(t, db, testInbox(1, "first", "second", "third"))
	plain := mustPutInbox(t, db, testInbox(2))
	take := func(want string, wantLeft int) {
		t.Helper()
		b, left, err := db.TakeReplyBlock(seq)
		if err != nil || string(b) != want || left != wantLeft {
			t.Fatalf("take: %q, %d left, %v; want %q, %d", b, left, err, want, wantLeft)
		}
	}
	take("first", 2)
	db = reopen(t, db, dir)
	if m, _, _ := db.GetInbox(seq); len(m.ReplyBlocks) != 2 || string(m.ReplyBlocks[0]) != "second" {
		t.Fatalf("blocks left after reopening: %q", m.ReplyBlocks)
	}
	take("second", 1)
	take("third", 0)
	if _, _, err := db.TakeReplyBlock(seq); !errors.Is(err, ErrNoReplyBlock) {
		t.Fatalf("take from a message with no block left: %v", err)
	}
	if _, _, err := db.TakeReplyBlock(plain); !errors.Is(err, ErrNoReplyBlock) {
		t.Fatalf("take from a message without blocks: %v", err)
	}
	if _, _, err := db.TakeReplyBlock(99); !errors.Is(err, ErrNotFound) {
		t.Fatalf("take from a missing message: %v", err)
	}
	if m, ok, _ := db.GetInbox(seq); !ok || string(m.Body) != "body 1" {
		t.Fatalf("the message after its blocks were taken: %+v", m)
	}
	if _, size, _ := db.InboxUsage(); size != int64(2*len("body 1")) {
		t.Fatalf("usage %d bytes after every block was taken", size)
	}
}

// TestInboxSeenIsBounded: the inbox remembers the ids of the last seenKept deleted messages;
// an older one is a new message again.
func TestInboxSeenIsBounded(t *testing.T) {
	db, dir := openTest(t)
	db.seenKept = 3
	for i := 1; i <= 5; i++ {
		mustPutInbox(t, db, testInbox(i))
	}
	// Stored messages are always known, however many.
	for i := 1; i <= 5; i++ {
		if seen, _ := db.SeenInbox(msgID(i)); !seen {
			t.Fatalf("stored message %d is not seen", i)
		}
	}
	for range 5 {
		if _, ok, err := db.PopInbox(); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	db = reopen(t, db, dir)
	db.seenKept = 3
	for i := 1; i <= 5; i++ {
		if seen, _ := db.SeenInbox(msgID(i)); seen != (i > 2) {
			t.Fatalf("message %d seen %v", i, seen)
		}
	}
	if seq, dup, err := db.PutInbox(testInbox(1)); err != nil || dup || seq != 6 {
		t.Fatalf("a message forgotten: seq %d, dup %v, %v", seq, dup, err)
	}
	db.DeleteInbox(6) // remembered again, forgetting message 3
	for i := 1; i <= 5; i++ {
		if seen, _ := db.SeenInbox(msgID(i)); seen != (i != 2 && i != 3) {
			t.Fatalf("message %d seen %v", i, seen)
		}
	}
	if n := entries(t, db, bucketInboxSeen); n != 3 {
		t.Fatalf("%d seen entries", n)
	}
	if n := entries(t, db, bucketInboxIDs); n != 3 {
		t.Fatalf("%d ids", n)
	}
}

func entries(t *testing.T, db *DB, bucket []byte) int {
	t.Helper()
	var n int
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInboxCorruptRecord: a damaged record is an error, never a panic, and DeleteInbox gets
// rid of it.
func TestInboxCorruptRecord(t *testing.T) {
	db, _ := openTest(t)
	mustPutInbox(t, db, testInbox(1, "block"))
	seq := mustPutInbox(t, db, testInbox(2, "block"))
	v := get(t, db, bucketInbox, seqKey(seq))
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketInbox).Put(seqKey(seq), v[:len(v)-1])
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.GetInbox(seq); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("get: %v", err)
	}
	if _, _, err := db.ListInbox(0, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := db.TakeReplyBlock(seq); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("take: %v", err)
	}
	if ok, err := db.DeleteInbox(seq); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if n, size, _ := db.InboxUsage(); n != 1 || size != int64(len("body 1")+len("block")) {
		t.Fatalf("usage after deleting the corrupt record: %d, %d", n, size)
	}
	if seen, _ := db.SeenInbox(msgID(2)); !seen {
		t.Fatal("the corrupt record's id is forgotten")
	}
	if msgs, _, err := db.ListInbox(0, 10); err != nil || len(msgs) != 1 {
		t.Fatalf("list: %d, %v", len(msgs), err)
	}
}

// TestInboxConcurrent: writers racing with the same ids store each message once, with
// distinct seqs, and readers taking blocks of one message get each block once.
func TestInboxConcurrent(t *testing.T) {
	db, _ := openTest(t)
	db.bolt.NoSync = true
	const writers, ids = 4, 50
	seqs := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range ids {
				seq, _, err := db.PutInbox(testInbox(i))
				if err != nil {
					t.Error(err)
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		})
	}
	wg.Wait()
	for i := range ids {
		for w := 1; w < writers; w++ {
			if seqs[w][i] != seqs[0][i] {
				t.Fatalf("message %d stored as %d and %d", i, seqs[0][i], seqs[w][i])
			}
		}
	}
	if _, total, _ := db.ListInbox(0, ids); total != ids {
		t.Fatalf("%d messages stored, want %d", total, ids)
	}

	blocks := make([]string, 40)
	for i := range blocks {
		blocks[i] = fmt.Sprintf("block %d", i)
	}
	seq := mustPutInbox(t, db, testInbox(ids, blocks...))
	var mu sync.Mutex
	taken := map[string]int{}
	for range writers {
		wg.Go(func() {
			for {
				b, _, err := db.TakeReplyBlock(seq)
				if errors.Is(err, ErrNoReplyBlock) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				taken[string(b)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, b := range blocks {
		if taken[b] != 1 {
			t.Fatalf("%s taken %d times", b, taken[b])
		}
	}
}

// TestPutInboxBatch: a batch stores in order, finds duplicates (of stored messages and within
// the batch), refuses what the quota or validity refuses without stopping the others, and
// survives a reopen like single puts.
func TestPutInboxBatch(t *testing.T) {
	db, dir := openTest(t)
	mustPutInbox(t, db, testInbox(1))
	db.SetInboxQuota(4, 1<<20)
	bad := testInbox(9)
	bad.ReplyBlocks = [][]byte{{}} // an empty block is invalid
	batch := []InboxMessage{testInbox(2), testInbox(1), bad, testInbox(3), testInbox(2), testInbox(4), testInbox(5)}
	res, err := db.PutInboxBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		seq  uint64
		dup  bool
		fail error
	}{{2, false, nil}, {1, true, nil}, {0, false, ErrInvalid}, {3, false, nil}, {2, true, nil}, {4, false, nil}, {0, false, ErrInboxFull}}
	for i, w := range want {
		r := res[i]
		if r.Seq != w.seq || r.Dup != w.dup || (w.fail == nil) != (r.Err == nil) || (w.fail != nil && !errors.Is(r.Err, w.fail)) {
			t.Errorf("message %d: %+v, want %+v", i, r, w)
		}
	}
	db = reopen(t, db, dir)
	msgs, total, err := db.ListInbox(0, 10)
	if err != nil || total != 4 || len(msgs) != 4 {
		t.Fatalf("after reopening: %d listed, total %d, %v", len(msgs), total, err)
	}
	for i, m := range msgs {
		if m.Seq != uint64(i+1) || m.ID != msgID(i+1) {
			t.Fatalf("message %d: seq %d id %x", i, m.Seq, m.ID[:4])
		}
	}
}
