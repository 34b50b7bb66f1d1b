package store

import (
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

var bucketAliases = bucket("aliases")

// SetAlias names a peer; an existing alias is overwritten.
func (db *DB) SetAlias(alias, peerID string) error {
	return db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAliases).Put([]byte(alias), []byte(peerID))
	})
}

// Alias returns the peer named alias, or ErrNotFound.
func (db *DB) Alias(alias string) (string, error) {
	var out string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAliases).Get([]byte(alias))
		if v == nil {
			return fmt.Errorf("alias %q: %w", alias, ErrNotFound)
		}
		out = string(v)
		return nil
	})
	return out, err
}

// DeleteAlias removes an alias, or returns ErrNotFound when it is not set
// (and changes nothing).
func (db *DB) DeleteAlias(alias string) error {
	return db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAliases)
		if b.Get([]byte(alias)) == nil {
			return fmt.Errorf("alias %q: %w", alias, ErrNotFound)
		}
		return b.Delete([]byte(alias))
	})
}

// Aliases returns every alias and its peer, sorted by alias.
func (db *DB) Aliases() ([][2]string, error) {
	var out [][2]string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAliases).ForEach(func(k, v []byte) error {
			out = append(out, [2]string{string(k), string(v)})
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, err
}
