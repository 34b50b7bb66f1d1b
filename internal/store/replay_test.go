package store

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/packet"
)

// testClock is a settable clock for ReplayTags.
type testClock struct{ ns atomic.Int64 }

func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.Set(t)
	return c
}

func (c *testClock) Now() time.Time  { return time.Unix(0, c.ns.Load()) }
func (c *testClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// epochStart is the start of epoch e.
func epochStart(e uint32) time.Time {
	return time.Unix(0, 0).Add(time.Duration(e) * packet.EpochLength)
}

func openReplay(t *testing.T, dir string, clock *testClock) (*DB, *ReplayTags) {
	t.Helper()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.ReplayTags(clock.Now)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, r
}

// storedEpochs lists the epoch of every stored batch and counts the stored tags.
func storedEpochs(t *testing.T, db *DB) (epochs map[uint32]int, tags int) {
	t.Helper()
	epochs = map[uint32]int{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReplay).ForEach(func(k, v []byte) error {
			if len(k) != replayKeyLen || len(v)%32 != 0 {
				t.Errorf("stored entry %x of %d bytes", k, len(v))
			}
			epochs[binary.BigEndian.Uint32(k)]++
			tags += len(v) / 32
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return epochs, tags
}

func TestReplayTagsPersist(t *testing.T) {
	dir := t.TempDir()
	const e = 2_945_376
	clock := newTestClock(epochStart(e).Add(time.Minute))
	db, r := openReplay(t, dir, clock)
	a, b := [32]byte{1}, [32]byte{2}
	if fresh, _ := r.CheckAndAdd(e, a); !fresh {
		t.Fatal("first tag not fresh")
	}
	if fresh, _ := r.CheckAndAdd(e, a); fresh {
		t.Fatal("repeated tag accepted")
	}
	if fresh, _ := r.CheckAndAdd(e+1, a); !fresh {
		t.Fatal("the same tag under another epoch is another packet's")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, time.Hour) }()
	r.CheckAndAdd(e-1, b)
	cancel() // Run flushes on the way out
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	db.Close()

	clock.Set(epochStart(e + 1)) // e-1 is now outside the window
	db, r = openReplay(t, dir, clock)
	defer db.Close()
	if r.Len() != 2 {
		t.Fatalf("%d tags after reopen, want 2 (e's and e+1's)", r.Len())
	}
	if got, _ := storedEpochs(t, db); len(got) != 2 || got[e] == 0 || got[e+1] == 0 {
		t.Errorf("stored epochs after reopen %v, want %d and %d only", got, e, e+1)
	}
	for _, ep := range []uint32{e, e + 1} {
		if fresh, _ := r.CheckAndAdd(ep, a); fresh {
			t.Fatalf("tag of epoch %d accepted again after restart", ep)
		}
	}
	if fresh, _ := r.CheckAndAdd(e-1, b); fresh {
		t.Fatal("tag of an expired epoch accepted: it must count as seen")
	}
}

// TestReplayTagsDropLegacyLayout: the bucket of stores written before packets carried an
// epoch holds tags of packets of another size; it is deleted.
func TestReplayTagsDropLegacyLayout(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(legacyReplay)
		if err != nil {
			return err
		}
		old := [32]byte{0xee, 1}
		if err := b.Put(old[:], nil); err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, 1), make([]byte, 64))
	}); err != nil {
		t.Fatal(err)
	}
	r, err := db.ReplayTags(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 0 {
		t.Errorf("%d tags loaded from the legacy bucket", r.Len())
	}
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		if tx.Bucket(legacyReplay) != nil {
			return errors.New("legacy bucket still there")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	db.Close()
}

// replayPacket is a one-hop packet sent at sent and the key that peels it.
func replayPacket(t *testing.T, sent time.Time) (*packet.PrivateKey, []byte) {
	t.Helper()
	scalar := make([]byte, 32)
	scalar[31] = 7
	key, err := packet.NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	route, err := packet.NewRoute(rand.NewChaCha8([32]byte{1}), []*packet.PublicKey{key.PublicKey()})
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := route.Seal(packet.Message{Text: []byte("once"), Timestamp: uint64(sent.UnixMilli())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return key, pkt
}

// TestReplayTagsWithPeel replays a real packet: inside its window it is refused as a
// replay, also after the store is reopened; once the window has passed its tag is dropped
// from memory and from the store, and the packet is refused as expired, also after a
// reopen.
func TestReplayTagsWithPeel(t *testing.T) {
	dir := t.TempDir()
	sent := epochStart(2_945_376).Add(9 * time.Minute)
	clock := newTestClock(sent)
	key, pkt := replayPacket(t, sent)
	db, r := openReplay(t, dir, clock)
	if _, err := packet.Peel(key, pkt, clock.Now(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := packet.Peel(key, pkt, clock.Now(), r); !errors.Is(err, packet.ErrReplay) {
		t.Fatalf("replay: err = %v, want ErrReplay", err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Restarted in the next epoch, still inside the window.
	clock.Set(sent.Add(packet.EpochLength))
	db, r = openReplay(t, dir, clock)
	if _, err := packet.Peel(key, pkt, clock.Now(), r); !errors.Is(err, packet.ErrReplay) {
		t.Fatalf("replay after reopen: err = %v, want ErrReplay", err)
	}

	// Two epochs after the packet's: past the window.
	clock.Set(sent.Add(2 * packet.EpochLength))
	if _, err := packet.Peel(key, pkt, clock.Now(), r); !errors.Is(err, packet.ErrExpired) {
		t.Fatalf("old packet: err = %v, want ErrExpired", err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if r.Len() != 0 {
		t.Errorf("%d tags in memory after the window, want 0", r.Len())
	}
	if epochs, n := storedEpochs(t, db); n != 0 {
		t.Errorf("stored epochs %v (%d tags) after the window, want none", epochs, n)
	}
	db.Close()
	db, r = openReplay(t, dir, clock)
	defer db.Close()
	if _, err := packet.Peel(key, pkt, clock.Now(), r); !errors.Is(err, packet.ErrExpired) {
		t.Fatalf("old packet after reopen: err = %v, want ErrExpired", err)
	}
}

// TestReplayTagsBounded feeds a store 5 million tags over 500 epochs of an injected clock,
// each tagged with an epoch the window accepts (the clock's, one before or one after), as
// a relayer that has peeled 5 million packets would: memory holds the tags of the last
// 2·EpochSkew+1 clock epochs only, the store's bucket holds only the epochs still accepted,
// and every recent tag is still refused as a replay, also after a reopen.
func TestReplayTagsBounded(t *testing.T) {
	const (
		epochs   = 500
		perEpoch = 10_000
		window   = 2*packet.EpochSkew + 1
		bound    = window * perEpoch // tags added while the clock was in the last window epochs
		samples  = 3_000
	)
	dir := t.TempDir()
	const first = 2_945_376
	clock := newTestClock(epochStart(first))
	db, r := openReplay(t, dir, clock)
	rng := rand.New(rand.NewPCG(1, 2))
	type entry struct {
		epoch uint32
		tag   [32]byte
	}
	recent := make([]entry, 0, 2*perEpoch) // the tags of the last two clock epochs
	for c := uint32(first); c < first+epochs; c++ {
		clock.Set(epochStart(c).Add(time.Duration(rng.Int64N(int64(packet.EpochLength)))))
		if len(recent) == cap(recent) {
			recent = append(recent[:0], recent[perEpoch:]...)
		}
		for range perEpoch {
			e := entry{epoch: c - packet.EpochSkew + uint32(rng.IntN(window))}
			for i := 0; i < 32; i += 8 {
				binary.LittleEndian.PutUint64(e.tag[i:], rng.Uint64())
			}
			if fresh, err := r.CheckAndAdd(e.epoch, e.tag); !fresh || err != nil {
				t.Fatalf("clock epoch %d: a new tag refused: %v", c, err)
			}
			recent = append(recent, e)
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := r.Len(); n > bound || n < perEpoch {
			t.Fatalf("clock epoch %d: %d tags in memory, want %d..%d", c, n, perEpoch, bound)
		}
	}
	last := uint32(first + epochs - 1)
	stored, n := storedEpochs(t, db)
	for e := range stored {
		if packet.Expired(e, last) {
			t.Errorf("stored batches of epoch %d, expired at %d", e, last)
		}
	}
	if n != r.Len() {
		t.Errorf("%d tags stored, %d in memory; want the same", n, r.Len())
	}

	var live []entry
	for _, e := range recent {
		if !packet.Expired(e.epoch, last) {
			live = append(live, e)
		}
	}
	check := func(when string) {
		for range samples {
			e := live[rng.IntN(len(live))]
			if fresh, err := r.CheckAndAdd(e.epoch, e.tag); fresh || err != nil {
				t.Fatalf("%s: a replayed tag of epoch %d accepted (%v)", when, e.epoch, err)
			}
		}
	}
	check("after 5M tags")
	db.Close()
	db, r = openReplay(t, dir, clock)
	defer db.Close()
	if r.Len() != n {
		t.Errorf("%d tags after reopen, want %d", r.Len(), n)
	}
	check("after reopen")
}
