// Package store is the node's transactional embedded store: one bbolt file
// in the data directory. It keeps aliases, settings, the chain indexer's
// cursor and channel cache, tickets and their indexes, replay tags, and the
// node's messages: the inbox (messages delivered to this node, until the app
// reads them; inbox.go), the outbox (messages the node accepted to send, with
// their delivery state; outbox.go) and the reply keyring (the keys of the
// anonymous reply blocks this node made; replykeys.go). Each write method is
// one transaction synced to disk before it returns (ReplayTags alone writes in
// batches), so what it reported done survives kill -9. Each concern has its
// own file and buckets; this package must not import other relayd packages
// except pure ones.
package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FileName is the store's file inside the data directory.
const FileName = "relayd.db"

// DB is an open store. It is safe for concurrent use.
type DB struct {
	bolt *bolt.DB

	// The bounds of the message collections: quotas the node sets (SetInboxQuota,
	// SetOutboxQuota) and fixed ones tests lower.
	inboxMessages, inboxBytes  atomic.Int64
	outboxPending, outboxBytes atomic.Int64
	seenKept                   uint64 // InboxSeenKept
	replyKeysMax               uint64 // MaxReplyKeys
}

// Open opens (creating if needed) the store in dir. Only one process may
// hold it: a second Open waits up to a second, then fails with ErrLocked.
func Open(dir string) (*DB, error) {
	b, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db := &DB{bolt: b, seenKept: InboxSeenKept, replyKeysMax: MaxReplyKeys}
	db.SetInboxQuota(0, 0)
	db.SetOutboxQuota(0, 0)
	if err := b.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := countUnredeemed(tx); err != nil {
			return err
		}
		return countWon(tx)
	}); err != nil {
		b.Close()
		return nil, fmt.Errorf("prepare store: %w", err)
	}
	return db, nil
}

// Close closes the store.
func (db *DB) Close() error { return db.bolt.Close() }

// allBuckets lists every top-level bucket; each file adds its own in init.
var allBuckets [][]byte

func bucket(name string) []byte {
	b := []byte(name)
	allBuckets = append(allBuckets, b)
	return b
}
