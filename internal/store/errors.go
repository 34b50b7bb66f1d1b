package store

import "errors"

var (
	// ErrLocked means another process holds the store.
	ErrLocked = errors.New("store is in use by another process")
	// ErrNotFound means the key has no value.
	ErrNotFound = errors.New("not found")
)
