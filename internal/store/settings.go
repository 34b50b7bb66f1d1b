package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketSettings holds the node's settings: setting name → its value as the node encodes it.
var bucketSettings = bucket("settings")

// Settings returns every stored setting, by name.
func (db *DB) Settings() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSettings).ForEach(func(k, v []byte) error {
			out[string(k)] = append([]byte(nil), v...)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load settings: %w", err)
	}
	return out, nil
}

// PutSettings stores the given settings (name → value) in one transaction; settings not named
// keep their value.
func (db *DB) PutSettings(values map[string][]byte) error {
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSettings)
		for k, v := range values {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store settings: %w", err)
	}
	return nil
}
