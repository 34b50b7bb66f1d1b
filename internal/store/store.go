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
	"log/slog"
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

	// indexFloor is the outgoing ticket index floor this Open set (IndexFloor).
	indexFloor uint64
}

// Options are Open's optional settings.
type Options struct {
	// Logger receives the migrations Open runs and its warnings (nil: slog.Default()).
	Logger *slog.Logger
	// Now is the clock of the outgoing ticket index floor (nil: time.Now).
	Now func() time.Time
}

// Open opens (creating if needed) the store in dir with the default Options.
func Open(dir string) (*DB, error) { return OpenWith(dir, Options{}) }

// OpenWith opens (creating if needed) the store in dir. Only one process may hold it: a second
// Open waits up to a second, then fails with ErrLocked. A store of an older format version is
// migrated to FormatVersion in the transaction that opens it (logged); one of a later version is
// refused with ErrFutureFormat and left as it was. Every Open of an existing store raises the
// outgoing ticket index floor to the clock (IndexesPerMilli, docs/STORE.md).
func OpenWith(dir string, opt Options) (*DB, error) {
	log, now := opt.Logger, opt.Now
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	path := filepath.Join(dir, FileName)
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// The version is read before anything is written, so that a store of a later format is
	// left exactly as it was.
	var version uint32
	if err := b.View(func(tx *bolt.Tx) error {
		version, err = formatVersion(tx)
		return err
	}); err != nil {
		b.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if version > FormatVersion {
		b.Close()
		return nil, fmt.Errorf("open store %s: format version %d, this relayd reads up to %d: %w", path, version, FormatVersion, ErrFutureFormat)
	}
	db := &DB{bolt: b, seenKept: InboxSeenKept, replyKeysMax: MaxReplyKeys}
	db.SetInboxQuota(0, 0)
	db.SetOutboxQuota(0, 0)
	if err := db.update(func(tx *bolt.Tx) error {
		if db.indexFloor, err = prepare(tx, version, now(), log); err != nil {
			return err
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
