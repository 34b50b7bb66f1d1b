package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

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
		return tx.Bucket(bucketReplay).ForEach(func(k, _ []byte) error {
			if len(k) == 32 {
				r.seen[[32]byte(k)] = struct{}{}
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
	err := r.db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReplay)
		for _, t := range batch {
			if err := b.Put(t[:], nil); err != nil {
				return err
			}
		}
		return nil
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
