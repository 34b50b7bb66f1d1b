package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The node's history (internal/history, docs/COCKPIT.md): the downsampled series the node
// keeps of itself, as records whose keys and bytes the history room chooses and decodes (each
// record carries its own format version). The store keeps them in one bucket, writes a batch in
// one transaction synced to disk (a kill -9 leaves the batch before or the batch after, never a
// part) and bounds the bucket: at most MaxHistoryRecords records of at most MaxHistoryRecordLen
// bytes each. A store without the bucket (written before it existed) gets it at Open; an older
// relayd opening a store with it ignores it, so the bucket needs no format version of its own.
var (
	// a key the history chooses (at most MaxHistoryKeyLen bytes) → its record
	bucketHistory = bucket("history")
)

// Bounds of the history bucket.
const (
	// MaxHistoryRecords is the most records the history bucket holds.
	MaxHistoryRecords = 4096
	// MaxHistoryRecordLen is the longest record, in bytes.
	MaxHistoryRecordLen = 64 << 10
	// MaxHistoryKeyLen is the longest key, in bytes.
	MaxHistoryKeyLen = 64
)

// History is the node's history in a store. It is safe for concurrent use, and its method set
// is that of history.Store.
type History struct{ db *DB }

// History returns the store's history records.
func (db *DB) History() *History { return &History{db: db} }

// PutHistory writes the records (key → bytes; a nil value deletes the key) in one transaction
// synced to disk before it returns: all of them or, on an error, none. It fails with ErrInvalid
// for an empty or too long key, a record longer than MaxHistoryRecordLen, or when the bucket
// would hold more than MaxHistoryRecords records.
func (h *History) PutHistory(records map[string][]byte) error {
	err := h.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		for k, v := range records {
			if len(k) == 0 || len(k) > MaxHistoryKeyLen {
				return fmt.Errorf("%w: history key of %d bytes", ErrInvalid, len(k))
			}
			if v == nil {
				if err := b.Delete([]byte(k)); err != nil {
					return err
				}
				continue
			}
			if len(v) > MaxHistoryRecordLen {
				return fmt.Errorf("%w: history record of %d bytes, at most %d", ErrInvalid, len(v), MaxHistoryRecordLen)
			}
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		n := 0 // a cursor sees this transaction's writes (Stats reads the committed pages)
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		if n > MaxHistoryRecords {
			return fmt.Errorf("%w: %d history records, at most %d", ErrInvalid, n, MaxHistoryRecords)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store history: %w", err)
	}
	return nil
}

// LoadHistory reads every history record (key → a copy of its bytes).
func (h *History) LoadHistory() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := h.db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error {
			out[string(k)] = append([]byte(nil), v...)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load history: %w", err)
	}
	return out, nil
}
