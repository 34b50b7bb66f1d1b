package identity

import "errors"

var (
	// ErrNotFound means the keystore file does not exist.
	ErrNotFound = errors.New("keystore not found")
	// ErrWrongPassword means the password does not decrypt the keystore.
	ErrWrongPassword = errors.New("wrong keystore password")
	// ErrBadKeystore means the file is not a readable v3 keystore.
	ErrBadKeystore = errors.New("not a valid keystore")

	// ErrInvalidPeerID reports a string or ID that is not a secp256k1 libp2p PeerId.
	ErrInvalidPeerID = errors.New("invalid peer id")
	// ErrInvalidPubKey reports bytes that are not a 33-byte compressed secp256k1 public key.
	ErrInvalidPubKey = errors.New("invalid secp256k1 public key")
	// ErrSelf reports a peer that is this node where another node is needed (sending to,
	// pinging or adding this node itself).
	ErrSelf = errors.New("peer is this node")
	// ErrNoAddress reports a peer that is neither connected nor has a known address.
	ErrNoAddress = errors.New("no known address for peer")
)
