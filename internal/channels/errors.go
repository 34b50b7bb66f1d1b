package channels

import "errors"

// ErrBadPublicKey means announced key bytes are not a secp256k1 public key of the expected form.
var ErrBadPublicKey = errors.New("bad public key")
