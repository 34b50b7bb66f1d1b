package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketReplay holds the tags in the batches Flush wrote them in: key = the bucket's next
// sequence number (8 bytes, big-endian), value = the batch's tags, 32 bytes each, back to back.
// Keys only ever grow, so a flush appends at the end of the B+tree instead of touching a random
// page per tag. Stores written before this layout hold one tag per key (key = the tag, 32 bytes);
// they are still read.
var bucketReplay = bucket("replay_tags")

// ReplayTags is the node's persistent set of packet replay tags
// (packet.ReplayChecker). Every tag is kept in memory for a constant-time
// check and written to the store in batches by Run, so a packet replayed
// after a restart is still refused. A crash can lose only the tags of the
// last flush interval.
type ReplayTags struct {
	db *DB

	mu      sync.Mutex
	seen    map[[32]byte]struct{}
	pending [][32]byte
}

// ReplayTags loads the stored tags.
func (db *DB) ReplayTags() (*ReplayTags, error) {
	r := &ReplayTags{db: db, seen: map[[32]byte]struct{}{}}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReplay).ForEach(func(k, v []byte) error {
			switch {
			case len(k) == 32: // the layout of older stores
				r.seen[[32]byte(k)] = struct{}{}
			case len(k) == 8 && len(v)%32 == 0:
				for ; len(v) > 0; v = v[32:] {
					r.seen[[32]byte(v)] = struct{}{}
				}
			default:
				return fmt.Errorf("replay tags: entry %x of %d bytes", k, len(v))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load replay tags: %w", err)
	}
	return r, nil
}

// CheckAndAdd reports whether tag is new and records it.
func (r *ReplayTags) CheckAndAdd(tag [32]byte) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.seen[tag]; dup {
		return false, nil
	}
	r.seen[tag] = struct{}{}
	r.pending = append(r.pending, tag)
	return true, nil
}

// Len is the number of tags known.
func (r *ReplayTags) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// Flush writes the tags recorded since the last flush.
func (r *ReplayTags) Flush() error {
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	v := make([]byte, 0, 32*len(batch))
	for _, t := range batch {
		v = append(v, t[:]...)
	}
	err := r.db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReplay)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
	})
	if err != nil {
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.mu.Unlock()
		return fmt.Errorf("store replay tags: %w", err)
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
