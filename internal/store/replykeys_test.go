package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// replyKeyring is relay.ReplyKeyring, which this package must not import: ReplyKeys has its
// method set.
type replyKeyring interface {
	Put(id [16]byte, epoch uint32, keys []byte) error
	Take(id [16]byte) (keys []byte, ok bool, err error)
}

var _ replyKeyring = (*ReplyKeys)(nil)

const keyEpoch = 2_945_376 // an epoch in 2026

func TestReplyKeysPutTake(t *testing.T) {
	db, dir := openTest(t)
	k := db.ReplyKeys()
	a, b, c := msgID(1), msgID(2), msgID(3)
	for _, e := range []struct {
		id   [16]byte
		keys string
	}{{a, "keys of a"}, {b, "keys of b"}, {c, ""}} {
		if err := k.Put(e.id, keyEpoch, []byte(e.keys)); err != nil {
			t.Fatal(err)
		}
	}
	// The same id again replaces its entry, here under another epoch.
	if err := k.Put(b, keyEpoch+1, []byte("new keys of b")); err != nil {
		t.Fatal(err)
	}
	if n, err := k.Len(); n != 3 || err != nil {
		t.Fatalf("len %d, %v", n, err)
	}
	db = reopen(t, db, dir)
	k = db.ReplyKeys()
	for _, want := range []struct {
		id   [16]byte
		keys string
	}{{a, "keys of a"}, {b, "new keys of b"}, {c, ""}} {
		got, ok, err := k.Take(want.id)
		if err != nil || !ok || string(got) != want.keys || got == nil {
			t.Fatalf("take %x: %q, %v, %v; want %q", want.id[:4], got, ok, err, want.keys)
		}
		if got, ok, err := k.Take(want.id); ok || err != nil || got != nil {
			t.Fatalf("second take %x: %q, %v, %v", want.id[:4], got, ok, err)
		}
	}
	if _, ok, err := k.Take(msgID(4)); ok || err != nil {
		t.Fatalf("take of keys never stored: %v, %v", ok, err)
	}
	if n, _ := k.Len(); n != 0 || entries(t, db, bucketReplyKeys) != 0 || entries(t, db, bucketReplyKeyIDs) != 0 {
		t.Fatalf("after taking every key: len %d, %d entries, %d ids", n, entries(t, db, bucketReplyKeys), entries(t, db, bucketReplyKeyIDs))
	}
	db = reopen(t, db, dir)
	if _, ok, _ := db.ReplyKeys().Take(a); ok {
		t.Fatal("taken keys are back after reopening")
	}
}

func TestReplyKeysBounds(t *testing.T) {
	db, _ := openTest(t)
	k := db.ReplyKeys()
	if err := k.Put(msgID(1), keyEpoch, make([]byte, MaxReplyKeyLen+1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("keys of %d bytes: %v", MaxReplyKeyLen+1, err)
	}
	if err := k.Put(msgID(1), keyEpoch, make([]byte, MaxReplyKeyLen)); err != nil {
		t.Fatalf("keys of %d bytes: %v", MaxReplyKeyLen, err)
	}
	if db.replyKeysMax != MaxReplyKeys {
		t.Fatalf("bound %d", db.replyKeysMax)
	}
	db.replyKeysMax = 3
	for i := 2; i <= 3; i++ {
		if err := k.Put(msgID(i), keyEpoch, []byte("k")); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Put(msgID(4), keyEpoch, []byte("k")); !errors.Is(err, ErrReplyKeysFull) {
		t.Fatalf("a fourth key in a keyring of 3: %v", err)
	}
	if err := k.Put(msgID(3), keyEpoch+1, []byte("k2")); err != nil {
		t.Fatalf("replacing a key in a full keyring: %v", err)
	}
	if _, ok, _ := k.Take(msgID(2)); !ok {
		t.Fatal("key 2 missing")
	}
	if err := k.Put(msgID(4), keyEpoch, []byte("k")); err != nil {
		t.Fatalf("a key in the place a take freed: %v", err)
	}
	if _, ok, _ := k.Take(msgID(4)); !ok {
		t.Fatal("key 4 missing")
	}
	if n, err := db.ExpireReplyKeys(keyEpoch + 3); n != 2 || err != nil {
		t.Fatalf("expire: %d, %v", n, err)
	}
	if err := k.Put(msgID(5), keyEpoch, []byte("k")); err != nil {
		t.Fatalf("a key in a keyring emptied by expiry: %v", err)
	}
}

func TestExpireReplyKeys(t *testing.T) {
	db, dir := openTest(t)
	k := db.ReplyKeys()
	const now = keyEpoch
	epochs := []uint32{0, now - 3, now - 2, now - 1, now, now + 1, now + 50}
	for i, e := range epochs {
		if err := k.Put(msgID(i), e, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A key moved from an expired epoch to a live one stays.
	if err := k.Put(msgID(1), now, []byte{1}); err != nil {
		t.Fatal(err)
	}
	n, err := db.ExpireReplyKeys(now)
	if err != nil || n != 2 { // epochs 0 and now−2
		t.Fatalf("expire: %d, %v", n, err)
	}
	db = reopen(t, db, dir)
	k = db.ReplyKeys()
	if l, _ := k.Len(); l != len(epochs)-2 {
		t.Fatalf("%d keys left", l)
	}
	for i, e := range epochs {
		keys, ok, err := k.Take(msgID(i))
		want := i == 1 || e >= now-1
		if err != nil || ok != want || (ok && !bytes.Equal(keys, []byte{byte(i)})) {
			t.Fatalf("key of epoch %d: %x, %v, %v; want kept %v", e, keys, ok, err, want)
		}
	}
	if n, err := db.ExpireReplyKeys(now + 100); n != 0 || err != nil {
		t.Fatalf("expire of an empty keyring: %d, %v", n, err)
	}
}

// TestReplyKeysConcurrent: keys put and taken from several goroutines are each taken
// exactly once.
func TestReplyKeysConcurrent(t *testing.T) {
	db, _ := openTest(t)
	db.bolt.NoSync = true
	k := db.ReplyKeys()
	const workers, each = 4, 30
	var mu sync.Mutex
	taken := map[[16]byte]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := k.Put(msgID(w*each+i), keyEpoch, fmt.Appendf(nil, "keys %d", w*each+i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() { // takes the keys of the next worker, racing with its Puts
			for i := range each {
				id := msgID((w+1)%workers*each + i)
				for deadline := time.Now().Add(10 * time.Second); ; {
					keys, ok, err := k.Take(id)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						if string(keys) != fmt.Sprintf("keys %d", (w+1)%workers*each+i) {
							t.Errorf("took %q", keys)
						}
						mu.Lock()
						taken[id]++
						mu.Unlock()
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("key %x never came", id[:4])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if len(taken) != workers*each {
		t.Fatalf("%d keys taken, want %d", len(taken), workers*each)
	}
	for id, n := range taken {
		if n != 1 {
			t.Fatalf("%x taken %d times", id[:4], n)
		}
	}
	if n, _ := k.Len(); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}
