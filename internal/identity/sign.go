package identity

import (
	"crypto/sha256"
	"fmt"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// SignMessagePrefix is put before a message the node signs (POST /messages/sign, the admin sign
// command), as the original interface did: the signature is over sha256(SignMessagePrefix +
// message), so it can never pass for a signature of a ticket or a transaction, which are signed
// over keccak256 hashes.
const SignMessagePrefix = "RELAY Signed Message: "

// SignMessage signs message as the original interface did: ECDSA with the node's key over
// sha256(SignMessagePrefix + message), answered as 0x and the 64-byte compact signature r ‖ s
// (s low, no recovery byte). The message is signed as the bytes given, valid UTF-8 or not.
func (id *Identity) SignMessage(message string) (string, error) {
	digest := sha256.Sum256([]byte(SignMessagePrefix + message))
	sig, err := crypto.Sign(digest[:], id.key)
	if err != nil {
		return "", fmt.Errorf("sign message: %w", err)
	}
	return hexutil.Encode(sig[:64]), nil
}
