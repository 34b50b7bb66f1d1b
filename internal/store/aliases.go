package store

import (
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

var bucketAliases = bucket("aliases")

// SetAlias names a peer; an existing alias is overwritten.
func (db *DB) SetAlias(alias, peerID string) error {
	return db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAliases).Put([]byte(alias), []byte(peerID))
	})
}

// Alias returns the peer named alias; ok is false when the alias is not set.
func (db *DB) Alias(alias string) (peerID string, ok bool, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketAliases).Get([]byte(alias)); v != nil {
			peerID, ok = string(v), true
		}
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("read alias: %w", err)
	}
	return peerID, ok, nil
}

// DeleteAlias removes an alias; ok is false (and nothing changes) when it is not set.
func (db *DB) DeleteAlias(alias string) (ok bool, err error) {
	err = db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAliases)
		if b.Get([]byte(alias)) == nil {
			return nil
		}
		ok = true
		return b.Delete([]byte(alias))
	})
	if err != nil {
		return false, fmt.Errorf("delete alias: %w", err)
	}
	return ok, nil
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
