package store

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketStakes holds, per epoch of a layered network, the candidates' stakes as they were at the
// epoch's first block (internal/layers encodes them): key the block, big-endian.
var bucketStakes = bucket("epoch_stakes")

// keptStakes is how many epochs' stakes PutEpochStakes keeps: the current epoch's and the one
// before it are drawn at a restart, one more for an epoch whose first block is being indexed.
const keptStakes = 3

// PutEpochStakes stores the stakes of the epoch starting at block first (overwriting what was
// stored for it) and deletes all but the keptStakes newest epochs.
func (db *DB) PutEpochStakes(first uint64, data []byte) error {
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketStakes)
		if err := b.Put(binary.BigEndian.AppendUint64(nil, first), data); err != nil {
			return err
		}
		var keys [][]byte
		if err := b.ForEach(func(k, _ []byte) error { keys = append(keys, k); return nil }); err != nil {
			return err
		}
		for _, k := range keys[:max(len(keys)-keptStakes, 0)] { // in key order: the oldest first
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store the stakes of epoch block %d: %w", first, err)
	}
	return nil
}

// EpochStakes returns what PutEpochStakes stored for the epoch starting at block first; ok is
// false when nothing is.
func (db *DB) EpochStakes(first uint64) (data []byte, ok bool, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketStakes).Get(binary.BigEndian.AppendUint64(nil, first)); v != nil {
			data, ok = append([]byte(nil), v...), true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read the stakes of epoch block %d: %w", first, err)
	}
	return data, ok, nil
}
