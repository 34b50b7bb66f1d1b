package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var outboxT0 = time.UnixMilli(1_760_000_000_000)

func testOutbox(i int, state string) OutboxMessage {
	return OutboxMessage{ID: msgID(i), Recipient: "16Uiu2HAmRecipient", Body: []byte(fmt.Sprintf("body %d", i)),
		Created: outboxT0.Add(time.Duration(i) * time.Second), Updated: outboxT0.Add(time.Duration(i) * time.Second), State: state}
}

func sameOutbox(a, b OutboxMessage) bool {
	return a.ID == b.ID && a.Recipient == b.Recipient && bytes.Equal(a.Body, b.Body) && a.Replies == b.Replies &&
		a.InReplyTo == b.InReplyTo && a.ReplyTo == b.ReplyTo && a.Created.Equal(b.Created) && a.Updated.Equal(b.Updated) &&
		a.State == b.State && a.Reason == b.Reason && a.Attempts == b.Attempts && a.Fragments == b.Fragments &&
		bytes.Equal(a.Acked, b.Acked)
}

func mustPutOutbox(t *testing.T, db *DB, m OutboxMessage) {
	t.Helper()
	if err := db.PutOutbox(m); err != nil {
		t.Fatalf("put outbox message %x: %v", m.ID[:4], err)
	}
}

func TestOutboxPutGetPersist(t *testing.T) {
	db, dir := openTest(t)
	full := OutboxMessage{ID: msgID(1), Recipient: "16Uiu2HAmBob", Body: []byte("hello"), Replies: 2, InReplyTo: [16]byte{9},
		ReplyTo: 17, Created: outboxT0, Updated: outboxT0.Add(time.Second), State: OutboxFailed, Reason: "no route",
		Attempts: 3, Fragments: 9, Acked: []byte{0xff, 0x01}}
	empty := OutboxMessage{ID: msgID(2), State: OutboxQueued}
	mustPutOutbox(t, db, full)
	mustPutOutbox(t, db, empty)
	db = reopen(t, db, dir)
	for _, want := range []OutboxMessage{full, empty} {
		got, ok, err := db.GetOutbox(want.ID)
		if err != nil || !ok || !sameOutbox(got, want) {
			t.Fatalf("get: %+v, %v, %v; want %+v", got, ok, err, want)
		}
	}
	if _, ok, err := db.GetOutbox(msgID(3)); ok || err != nil {
		t.Fatalf("get of a missing message: %v, %v", ok, err)
	}
	if err := db.PutOutbox(testOutbox(1, OutboxQueued)); !errors.Is(err, ErrExists) {
		t.Fatalf("a second message with the same id: %v", err)
	}
	if got, _, _ := db.GetOutbox(full.ID); !sameOutbox(got, full) {
		t.Fatalf("the refused put changed the message: %+v", got)
	}
}

func TestOutboxRefusesInvalid(t *testing.T) {
	db, _ := openTest(t)
	for name, change := range map[string]func(*OutboxMessage){
		"unknown state":     func(m *OutboxMessage) { m.State = "lost" },
		"no state":          func(m *OutboxMessage) { m.State = "" },
		"negative attempts": func(m *OutboxMessage) { m.Attempts = -1 },
		"negative replies":  func(m *OutboxMessage) { m.Replies = -1 },
		"negative fragment": func(m *OutboxMessage) { m.Fragments = -1 },
	} {
		m := testOutbox(1, OutboxQueued)
		change(&m)
		if err := db.PutOutbox(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.ListOutbox(OutboxQueued, "lost"); !errors.Is(err, ErrInvalid) {
		t.Errorf("list of an unknown state: %v", err)
	}
	if msgs, err := db.ListOutbox(); err != nil || len(msgs) != 0 {
		t.Fatalf("refused messages were stored: %d, %v", len(msgs), err)
	}
}

func TestUpdateOutbox(t *testing.T) {
	db, dir := openTest(t)
	mustPutOutbox(t, db, testOutbox(1, OutboxQueued))
	err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error {
		m.State, m.Attempts, m.Fragments, m.Acked = OutboxSent, 1, 2, []byte{1}
		m.Updated = outboxT0.Add(time.Hour)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	errStop := errors.New("stop")
	err = db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error {
		m.State = OutboxFailed
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("an update whose function fails: %v", err)
	}
	if err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error { m.ID[0]++; return nil }); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an update that changes the id: %v", err)
	}
	if err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error { m.State = "gone"; return nil }); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an update to an unknown state: %v", err)
	}
	if err := db.UpdateOutbox(msgID(2), func(*OutboxMessage) error { t.Fatal("called for a missing message"); return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing message: %v", err)
	}
	db = reopen(t, db, dir)
	got, _, err := db.GetOutbox(msgID(1))
	want := testOutbox(1, OutboxSent)
	want.Attempts, want.Fragments, want.Acked, want.Updated = 1, 2, []byte{1}, outboxT0.Add(time.Hour)
	if err != nil || !sameOutbox(got, want) {
		t.Fatalf("after the updates: %+v, %v; want %+v", got, err, want)
	}
}

func TestOutboxQuota(t *testing.T) {
	db, dir := openTest(t)
	if db.outboxPending.Load() != DefaultOutboxPending || db.outboxBytes.Load() != DefaultOutboxBytes {
		t.Fatalf("default quota %d, %d", db.outboxPending.Load(), db.outboxBytes.Load())
	}
	db.SetOutboxQuota(2, 20)
	mustPutOutbox(t, db, testOutbox(1, OutboxQueued)) // 6 bytes each
	mustPutOutbox(t, db, testOutbox(2, OutboxSent))
	if err := db.PutOutbox(testOutbox(3, OutboxQueued)); !errors.Is(err, ErrOutboxFull) {
		t.Fatalf("a third pending message: %v", err)
	}
	mustPutOutbox(t, db, testOutbox(4, OutboxDelivered)) // finished messages do not count
	mustPutOutbox(t, db, testOutbox(5, OutboxFailed))
	if p, b, _ := db.OutboxUsage(); p != 2 || b != 12 {
		t.Fatalf("usage %d, %d", p, b)
	}
	// A failed message queued again needs a place.
	requeue := func(m *OutboxMessage) error { m.State = OutboxQueued; return nil }
	if err := db.UpdateOutbox(msgID(5), requeue); !errors.Is(err, ErrOutboxFull) {
		t.Fatalf("requeue beyond the quota: %v", err)
	}
	if got, _, _ := db.GetOutbox(msgID(5)); got.State != OutboxFailed {
		t.Fatalf("the refused update left state %q", got.State)
	}
	// Updates within the pending set need no more room.
	if err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error { m.State, m.Attempts = OutboxSent, 1; return nil }); err != nil {
		t.Fatalf("an update of a pending message in a full outbox: %v", err)
	}
	if err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error { m.State = OutboxDelivered; return nil }); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, dir)
	db.SetOutboxQuota(2, 20)
	if err := db.UpdateOutbox(msgID(5), requeue); err != nil {
		t.Fatalf("requeue into the place a delivery freed: %v", err)
	}
	// The byte quota: with message 2 delivered, 6 bytes are pending.
	if err := db.UpdateOutbox(msgID(2), func(m *OutboxMessage) error { m.State = OutboxDelivered; return nil }); err != nil {
		t.Fatal(err)
	}
	big := testOutbox(6, OutboxQueued)
	big.Body = []byte("123456789012345")
	if err := db.PutOutbox(big); !errors.Is(err, ErrOutboxFull) {
		t.Fatalf("21 bytes pending in 20: %v", err)
	}
	big.Body = big.Body[:14]
	mustPutOutbox(t, db, big)
	if err := db.UpdateOutbox(big.ID, func(m *OutboxMessage) error { m.Body = append(m.Body, 'x'); return nil }); !errors.Is(err, ErrOutboxFull) {
		t.Fatalf("a pending body grown beyond the quota: %v", err)
	}
	if p, b, _ := db.OutboxUsage(); p != 2 || b != 20 {
		t.Fatalf("usage %d, %d", p, b)
	}
	if ok, err := db.DeleteOutbox(big.ID); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if ok, err := db.DeleteOutbox(big.ID); ok || err != nil {
		t.Fatalf("second delete: %v, %v", ok, err)
	}
	if p, b, _ := db.OutboxUsage(); p != 1 || b != 6 {
		t.Fatalf("usage after the delete: %d, %d", p, b)
	}
	db.SetOutboxQuota(-1, 0)
	if db.outboxPending.Load() != DefaultOutboxPending || db.outboxBytes.Load() != DefaultOutboxBytes {
		t.Fatalf("quota below 1 gives %d, %d", db.outboxPending.Load(), db.outboxBytes.Load())
	}
}

func outboxNumbers(msgs []OutboxMessage) []int {
	var out []int
	for _, m := range msgs {
		var i int
		fmt.Sscanf(string(m.ID[8:]), "%d", &i)
		out = append(out, i)
	}
	return out
}

func TestListOutbox(t *testing.T) {
	db, _ := openTest(t)
	states := []string{OutboxSent, OutboxQueued, OutboxDelivered, OutboxFailed, OutboxQueued}
	for i := len(states); i >= 1; i-- { // stored newest first: the list sorts by creation
		mustPutOutbox(t, db, testOutbox(i, states[i-1]))
	}
	same := testOutbox(6, OutboxQueued) // created with message 2: the id breaks the tie
	same.Created = testOutbox(2, "").Created
	mustPutOutbox(t, db, same)
	for _, tc := range []struct {
		states []string
		want   []int
	}{
		{nil, []int{1, 2, 6, 3, 4, 5}},
		{[]string{OutboxQueued, OutboxSent}, []int{1, 2, 6, 5}},
		{[]string{OutboxDelivered}, []int{3}},
		{[]string{OutboxFailed, OutboxFailed}, []int{4}},
	} {
		got, err := db.ListOutbox(tc.states...)
		if err != nil || !slices.Equal(outboxNumbers(got), tc.want) {
			t.Errorf("list %v: %v, %v; want %v", tc.states, outboxNumbers(got), err, tc.want)
		}
	}
}

func TestPruneOutbox(t *testing.T) {
	db, _ := openTest(t)
	// Messages 1-6 updated at T0 + i s; 1, 3 pending.
	states := []string{OutboxQueued, OutboxDelivered, OutboxSent, OutboxFailed, OutboxDelivered, OutboxDelivered}
	for i, s := range states {
		mustPutOutbox(t, db, testOutbox(i+1, s))
	}
	left := func() []int {
		msgs, err := db.ListOutbox()
		if err != nil {
			t.Fatal(err)
		}
		return outboxNumbers(msgs)
	}
	// Finished before T0 + 3 s: message 2.
	if n, err := db.PruneOutbox(outboxT0.Add(3*time.Second), 10); err != nil || n != 1 || !slices.Equal(left(), []int{1, 3, 4, 5, 6}) {
		t.Fatalf("prune by time: %d, %v, left %v", n, err, left())
	}
	// Keep the two newest finished: 5, 6.
	if n, err := db.PruneOutbox(outboxT0, 2); err != nil || n != 1 || !slices.Equal(left(), []int{1, 3, 5, 6}) {
		t.Fatalf("prune by count: %d, %v, left %v", n, err, left())
	}
	if n, err := db.PruneOutbox(outboxT0.Add(time.Hour), 0); err != nil || n != 2 || !slices.Equal(left(), []int{1, 3}) {
		t.Fatalf("prune everything: %d, %v, left %v", n, err, left())
	}
	if p, _, _ := db.OutboxUsage(); p != 2 {
		t.Fatalf("%d pending after pruning", p)
	}
}

// TestOutboxCorruptRecord: a damaged record is an error, never a panic; PruneOutbox removes
// it and counts the pending messages again.
func TestOutboxCorruptRecord(t *testing.T) {
	db, _ := openTest(t)
	mustPutOutbox(t, db, testOutbox(1, OutboxQueued))
	mustPutOutbox(t, db, testOutbox(2, OutboxQueued))
	id := msgID(2)
	v := get(t, db, bucketOutbox, id[:])
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOutbox).Put(id[:], append(v, 0))
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.GetOutbox(id); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("get: %v", err)
	}
	if _, err := db.ListOutbox(OutboxQueued); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("list: %v", err)
	}
	if err := db.UpdateOutbox(id, func(*OutboxMessage) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("update: %v", err)
	}
	if n, err := db.PruneOutbox(outboxT0, 10); err != nil || n != 1 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if p, b, _ := db.OutboxUsage(); p != 1 || b != 6 {
		t.Fatalf("usage after pruning the corrupt record: %d, %d", p, b)
	}
}

// TestUpdateOutboxConcurrent: concurrent read-modify-writes lose no update.
func TestUpdateOutboxConcurrent(t *testing.T) {
	db, _ := openTest(t)
	db.bolt.NoSync = true
	mustPutOutbox(t, db, testOutbox(1, OutboxQueued))
	const workers, each = 4, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if err := db.UpdateOutbox(msgID(1), func(m *OutboxMessage) error { m.Attempts++; return nil }); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := db.GetOutbox(msgID(1)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m, _, _ := db.GetOutbox(msgID(1)); m.Attempts != workers*each {
		t.Fatalf("%d attempts, want %d", m.Attempts, workers*each)
	}
}
