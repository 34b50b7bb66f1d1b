package store

import (
	"errors"
	"fmt"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

var (
	// ErrLocked means another process holds the store.
	ErrLocked = errors.New("store is in use by another process")
	// ErrFutureFormat means the store was written by a later relayd, in a format version this
	// build does not know (FormatVersion): it was left untouched; run that relayd or a later one.
	ErrFutureFormat = errors.New("store: written in a newer format than this relayd reads")
	// ErrNotFound means the key has no value.
	ErrNotFound = errors.New("not found")
	// ErrFull means a write failed because the file system is full (or the user's quota used up):
	// nothing of the transaction was written, and the same write can succeed once space is freed.
	ErrFull = errors.New("store: the disk is full")
	// ErrCorrupt means a stored record does not decode: the disk, a crash or a hand edit
	// damaged it.
	ErrCorrupt = errors.New("store: corrupt record")
	// ErrInvalid means a value the store was asked to write breaks the record's rules (an
	// unknown outbox state, a negative count, reply keys too long).
	ErrInvalid = errors.New("store: invalid value")
	// ErrExists means a record with that id is already stored (PutOutbox).
	ErrExists = errors.New("store: already stored")
	// ErrInboxFull means storing the message would exceed the inbox quota (messages or
	// bytes): nothing was stored; the message fits once the app has read some.
	ErrInboxFull = errors.New("store: the inbox is full")
	// ErrNoReplyBlock means the inbox message has no reply block left (TakeReplyBlock).
	ErrNoReplyBlock = errors.New("store: no reply block left")
	// ErrOutboxFull means the message would exceed the outbox quota of pending messages
	// (queued or sent, by count or bytes): nothing was stored.
	ErrOutboxFull = errors.New("store: the outbox is full")
	// ErrReplyKeysFull means the reply keyring holds MaxReplyKeys keys: nothing was stored;
	// keys leave as they are taken or expire (ExpireReplyKeys).
	ErrReplyKeysFull = errors.New("store: the reply keyring is full")
)

// update runs fn in a read-write transaction, as bolt's Update does; a write the file system
// refused for want of space is ErrFull.
func (db *DB) update(fn func(tx *bolt.Tx) error) error {
	err := db.bolt.Update(fn)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}
