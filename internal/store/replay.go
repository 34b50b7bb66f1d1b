package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/relayd/relayd/internal/packet"
)

// bucketReplay holds the tags in the batches Flush wrote them in, one entry per epoch and
// flush: key = the packets' creation epoch (4 bytes, big-endian) ‖ the bucket's next sequence
// number (8 bytes, big-endian), value = the tags, 32 bytes each, back to back. Keys sort by
// epoch, so dropping the epochs the window has passed deletes a range at the start of the
// B+tree, and a flush appends near its end.
var bucketReplay = bucket("replay.epochs")

// legacyReplay is the bucket of relayd versions whose packets carried no epoch. Their tags
// belong to packets of another size, which Peel refuses before any replay check, so
// ReplayTags drops the bucket.
var legacyReplay = []byte("replay_tags")

const replayKeyLen = 4 + 8

var _ packet.ReplayChecker = (*ReplayTags)(nil)

// ReplayTags is the node's persistent set of packet replay tags (packet.ReplayChecker),
// grouped by the packets' creation epoch. A tag is kept only while packets of its epoch are
// accepted (packet.Expired), so the set holds the tags of at most 2·packet.EpochSkew+1 epochs
// however long the node runs. Tags are kept in memory for a constant-time check and written
// to the store in batches by Run, so a packet replayed after a restart is still refused. A
// crash can lose only the tags of the last flush interval.
type ReplayTags struct {
	db  *DB
	now func() time.Time

	mu       sync.Mutex
	cur      uint32 // the newest epoch of the clock seen; never decreases
	epochs   map[uint32]map[[32]byte]struct{}
	n        int // tags in epochs
	pending  []replayEntry
	prunedAt uint32 // cur when the stored epochs were last pruned
}

type replayEntry struct {
	epoch uint32
	tag   [32]byte
}

// ReplayTags loads the stored tags of the epochs still accepted at now() and deletes the
// others. now is the node's clock (nil: time.Now); tests inject their own.
func (db *DB) ReplayTags(now func() time.Time) (*ReplayTags, error) {
	if now == nil {
		now = time.Now
	}
	r := &ReplayTags{db: db, now: now, epochs: map[uint32]map[[32]byte]struct{}{}}
	r.cur = packet.Epoch(now())
	err := db.update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(legacyReplay); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
			return err
		}
		if err := pruneReplay(tx, r.cur); err != nil {
			return err
		}
		return tx.Bucket(bucketReplay).ForEach(func(k, v []byte) error {
			if len(k) != replayKeyLen || len(v)%32 != 0 {
				return fmt.Errorf("replay tags: entry %x of %d bytes", k, len(v))
			}
			set := r.epoch(binary.BigEndian.Uint32(k))
			for ; len(v) > 0; v = v[32:] {
				if _, dup := set[[32]byte(v)]; !dup {
					set[[32]byte(v)] = struct{}{}
					r.n++
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load replay tags: %w", err)
	}
	r.prunedAt = r.cur
	return r, nil
}

// epoch returns the tag set of epoch e, creating it. Callers hold mu or own r.
func (r *ReplayTags) epoch(e uint32) map[[32]byte]struct{} {
	set := r.epochs[e]
	if set == nil {
		set = map[[32]byte]struct{}{}
		r.epochs[e] = set
	}
	return set
}

// CheckAndAdd reports whether tag, of a packet created in epoch, is new and records it
// (packet.ReplayChecker). An epoch outside the window at the store's clock counts as seen:
// its tags may already be forgotten. Peel checks the window first, so that happens only
// for a packet peeled as the epoch turns.
func (r *ReplayTags) CheckAndAdd(epoch uint32, tag [32]byte) (bool, error) {
	now := packet.Epoch(r.now())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(now)
	if packet.Expired(epoch, r.cur) || uint64(epoch) > uint64(r.cur)+packet.EpochSkew {
		return false, nil
	}
	set := r.epoch(epoch)
	if _, dup := set[tag]; dup {
		return false, nil
	}
	set[tag] = struct{}{}
	r.n++
	r.pending = append(r.pending, replayEntry{epoch, tag})
	return true, nil
}

// advance moves the current epoch to now if that is later and forgets the epochs it leaves
// behind the window. Callers hold mu.
func (r *ReplayTags) advance(now uint32) {
	if now <= r.cur {
		return
	}
	r.cur = now
	for e, set := range r.epochs {
		if packet.Expired(e, now) {
			r.n -= len(set)
			delete(r.epochs, e)
		}
	}
}

// Len is the number of tags held in memory: those of the epochs still accepted.
func (r *ReplayTags) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Flush writes the tags recorded since the last flush and deletes the stored epochs the
// window has passed.
func (r *ReplayTags) Flush() error {
	now := packet.Epoch(r.now())
	r.mu.Lock()
	r.advance(now)
	cur := r.cur
	batch := r.pending
	r.pending = nil
	prune := r.prunedAt != cur
	r.mu.Unlock()
	if len(batch) == 0 && !prune {
		return nil
	}
	byEpoch := map[uint32][]byte{}
	for _, t := range batch {
		if !packet.Expired(t.epoch, cur) {
			byEpoch[t.epoch] = append(byEpoch[t.epoch], t.tag[:]...)
		}
	}
	err := r.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReplay)
		for e, v := range byEpoch {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			k := binary.BigEndian.AppendUint32(make([]byte, 0, replayKeyLen), e)
			if err := b.Put(binary.BigEndian.AppendUint64(k, seq), v); err != nil {
				return err
			}
		}
		return pruneReplay(tx, cur)
	})
	if err != nil {
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.mu.Unlock()
		return fmt.Errorf("store replay tags: %w", err)
	}
	r.mu.Lock()
	r.prunedAt = cur
	r.mu.Unlock()
	return nil
}

// pruneReplay deletes the stored batches of the epochs expired at cur: a range at the start
// of the bucket.
func pruneReplay(tx *bolt.Tx, cur uint32) error {
	b := tx.Bucket(bucketReplay)
	var old [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) == replayKeyLen && !packet.Expired(binary.BigEndian.Uint32(k), cur) {
			break
		}
		old = append(old, bytes.Clone(k))
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Run flushes every interval until ctx ends, then flushes once more.
func (r *ReplayTags) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return r.Flush()
		case <-t.C:
			if err := r.Flush(); err != nil {
				return err
			}
		}
	}
}
