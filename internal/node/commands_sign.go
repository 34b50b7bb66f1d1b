package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"fmt"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/ws"
)

// signMessage signs message as the original interface did (POST
// /messages/sign, the admin sign command): ECDSA with key over
// sha256(api.SignMessagePrefix + message), answered as 0x and the 64-byte
// compact signature r ‖ s (s low, no recovery byte). The prefix keeps the
// signature from passing for a ticket's or a transaction's, which are
// signed over keccak256 hashes.
func signMessage(key *ecdsa.PrivateKey, message string) (string, error) {
	digest := sha256.Sum256([]byte(api.SignMessagePrefix + message))
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return "", fmt.Errorf("sign message: %w", err)
	}
	return hexutil.Encode(sig[:64]), nil
}

// SignMessage implements api.Node.
func (a apiNode) SignMessage(message string) (string, error) {
	return signMessage(a.n.id.PrivateKey(), message)
}

// signCommand is the admin `sign <message>`: "Signed message: 0x…", as the
// original printed it.
func (n *Node) signCommand() ws.Command {
	return ws.Command{Name: "sign", Usage: "sign <message>",
		Help: "Sign a message with this node's key (as POST /api/v2/messages/sign).",
		Run: func(_ context.Context, args string) ([]string, error) {
			if args == "" {
				return nil, &ws.UsageError{Reason: "sign needs a message"}
			}
			sig, err := signMessage(n.id.PrivateKey(), args)
			if err != nil {
				return nil, err
			}
			return []string{"Signed message: " + sig}, nil
		}}
}
