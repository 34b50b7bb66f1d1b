package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/packet"
)

// The reply keyring: the keys of the anonymous reply blocks this node made, one entry per
// block id, kept until the answer arrives (Take) or the block's epoch expires. A reply
// block's packet carries the epoch it was made in, and every hop refuses it once that epoch
// is older than its own minus packet.EpochSkew (docs/PROTOCOL.md §3.8), so its keys are
// useless from then on: entries are keyed epoch first, as the replay tags are, and
// ExpireReplyKeys deletes a range at the start of the bucket. Take finds an entry's epoch
// in an id index, so it never scans, however many epochs are left when expiry lags.
var (
	// epoch (4, big-endian) ‖ id (16) → keys
	bucketReplyKeys = bucket("replykeys.epochs")
	// id (16) → epoch (4, big-endian)
	bucketReplyKeyIDs = bucket("replykeys.ids")
	// counter name → uint64 (8)
	bucketReplyKeyMeta = bucket("replykeys.meta")
)

// counterReplyKeys counts the entries of bucketReplyKeys.
var counterReplyKeys = []byte("count")

// Bounds of the reply keyring.
const (
	// MaxReplyKeys is the most entries the keyring holds (ErrReplyKeysFull beyond): at most
	// a gigabyte with entries of MaxReplyKeyLen.
	MaxReplyKeys = 1_000_000
	// MaxReplyKeyLen is the longest keys value of one entry, in bytes (a reply block's
	// per-hop keys take 4·32).
	MaxReplyKeyLen = 1024
)

const replyKeyLen = 4 + 16

// ReplyKeys is the reply keyring of a store. It is safe for concurrent use, and its method
// set is that of relay.ReplyKeyring.
type ReplyKeys struct{ db *DB }

// ReplyKeys returns the store's reply keyring.
func (db *DB) ReplyKeys() *ReplyKeys { return &ReplyKeys{db: db} }

func replyKey(epoch uint32, id [16]byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, replyKeyLen), epoch), id[:]...)
}

// Put stores the keys of the reply block id, made in epoch, in one transaction synced to
// disk before it returns; an entry with the same id is replaced. It fails with ErrInvalid
// for keys longer than MaxReplyKeyLen and with ErrReplyKeysFull when the keyring holds
// MaxReplyKeys entries.
func (k *ReplyKeys) Put(id [16]byte, epoch uint32, keys []byte) error {
	if len(keys) > MaxReplyKeyLen {
		return fmt.Errorf("store reply keys: %w: %d bytes of keys", ErrInvalid, len(keys))
	}
	err := k.db.update(func(tx *bolt.Tx) error {
		b, ids, meta := tx.Bucket(bucketReplyKeys), tx.Bucket(bucketReplyKeyIDs), tx.Bucket(bucketReplyKeyMeta)
		if old := ids.Get(id[:]); old != nil {
			if len(old) != 4 {
				return fmt.Errorf("reply key %x: %w: epoch of %d bytes", id[:4], ErrCorrupt, len(old))
			}
			if err := b.Delete(replyKey(binary.BigEndian.Uint32(old), id)); err != nil {
				return err
			}
		} else {
			n := getCount(meta, counterReplyKeys)
			if n >= k.db.replyKeysMax {
				return fmt.Errorf("%w: %d keys", ErrReplyKeysFull, n)
			}
			if err := addCount(meta, counterReplyKeys, 1); err != nil {
				return err
			}
		}
		if err := ids.Put(id[:], binary.BigEndian.AppendUint32(nil, epoch)); err != nil {
			return err
		}
		return b.Put(replyKey(epoch, id), bytes.Clone(keys))
	})
	if err != nil {
		return fmt.Errorf("store reply keys: %w", err)
	}
	return nil
}

// Take returns the keys of the reply block id and deletes them in one transaction synced
// to disk before it returns, so a block's keys are handed out once, also across a crash; ok
// is false when there are none (never stored, taken, or expired).
func (k *ReplyKeys) Take(id [16]byte) (keys []byte, ok bool, err error) {
	err = k.db.update(func(tx *bolt.Tx) error {
		b, ids := tx.Bucket(bucketReplyKeys), tx.Bucket(bucketReplyKeyIDs)
		e := ids.Get(id[:])
		if e == nil {
			return nil
		}
		if len(e) != 4 {
			return fmt.Errorf("reply key %x: %w: epoch of %d bytes", id[:4], ErrCorrupt, len(e))
		}
		key := replyKey(binary.BigEndian.Uint32(e), id)
		v := b.Get(key)
		if v == nil {
			return fmt.Errorf("reply key %x: %w: indexed but not stored", id[:4], ErrCorrupt)
		}
		keys, ok = bytes.Clone(v), true
		if keys == nil {
			keys = []byte{}
		}
		if err := b.Delete(key); err != nil {
			return err
		}
		if err := ids.Delete(id[:]); err != nil {
			return err
		}
		return subCount(tx.Bucket(bucketReplyKeyMeta), counterReplyKeys, 1)
	})
	if err != nil {
		return nil, false, fmt.Errorf("take reply keys: %w", err)
	}
	return keys, ok, nil
}

// Len returns the number of entries in the keyring.
func (k *ReplyKeys) Len() (int, error) {
	var n uint64
	err := k.db.bolt.View(func(tx *bolt.Tx) error {
		n = getCount(tx.Bucket(bucketReplyKeyMeta), counterReplyKeys)
		return nil
	})
	return int(n), err
}

// ExpireReplyKeys deletes the reply keys of the epochs every hop refuses at nowEpoch
// (packet.Expired: older than nowEpoch − packet.EpochSkew) in one transaction and returns
// how many it deleted. The node runs it as epochs pass (packet.Epoch of its clock).
func (db *DB) ExpireReplyKeys(nowEpoch uint32) (int, error) {
	n := 0
	err := db.update(func(tx *bolt.Tx) error {
		b, ids := tx.Bucket(bucketReplyKeys), tx.Bucket(bucketReplyKeyIDs)
		var old [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) == replyKeyLen && !packet.Expired(binary.BigEndian.Uint32(k), nowEpoch) {
				break
			}
			old = append(old, bytes.Clone(k))
		}
		for _, k := range old {
			if err := b.Delete(k); err != nil {
				return err
			}
			// The index entry goes with it unless it points at another epoch (a malformed
			// key is deleted alone).
			if len(k) == replyKeyLen && bytes.Equal(ids.Get(k[4:]), k[:4]) {
				if err := ids.Delete(k[4:]); err != nil {
					return err
				}
			}
		}
		n = len(old)
		return subCount(tx.Bucket(bucketReplyKeyMeta), counterReplyKeys, uint64(n))
	})
	if err != nil {
		return 0, fmt.Errorf("expire reply keys: %w", err)
	}
	return n, nil
}
