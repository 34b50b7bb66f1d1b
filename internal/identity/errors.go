package identity

import "errors"

var (
	// ErrNotFound means the keystore file does not exist.
	ErrNotFound = errors.New("keystore not found")
	// ErrWrongPassword means the password does not decrypt the keystore.
	ErrWrongPassword = errors.New("wrong keystore password")
	// ErrBadKeystore means the file is not a readable v3 keystore.
	ErrBadKeystore = errors.New("not a valid keystore")
)
