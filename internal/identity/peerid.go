package identity

import (
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// CompressedPubKeySize is the length of a SEC1 compressed secp256k1 public key.
const CompressedPubKeySize = 33

// PeerIDFromPubKey returns the libp2p PeerId of a 33-byte SEC1 compressed secp256k1
// public key (prefix 0x02 or 0x03). It checks that the point is on the curve.
func PeerIDFromPubKey(compressed []byte) (peer.ID, error) {
	if len(compressed) != CompressedPubKeySize || (compressed[0] != 0x02 && compressed[0] != 0x03) {
		return "", fmt.Errorf("%w: want %d bytes starting 0x02 or 0x03, got %d bytes", ErrInvalidPubKey, CompressedPubKeySize, len(compressed))
	}
	pk, err := crypto.UnmarshalSecp256k1PublicKey(compressed)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidPubKey, err)
	}
	id, err := peer.IDFromPublicKey(pk)
	if err != nil {
		return "", fmt.Errorf("peer id from public key: %w", err)
	}
	return id, nil
}

// PubKeyFromPeerID returns the 33-byte compressed secp256k1 public key embedded in
// id. It fails with ErrInvalidPeerID if id does not embed a secp256k1 key.
func PubKeyFromPeerID(id peer.ID) ([]byte, error) {
	pk, err := secp256k1Key(id)
	if err != nil {
		return nil, err
	}
	raw, err := pk.Raw()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPeerID, err)
	}
	return raw, nil
}

// ParsePeerID decodes a PeerId string (base58 "16Uiu2HA…" or CIDv1 form) with
// peer.Decode and checks that it embeds a secp256k1 public key. Any other input,
// including valid Ed25519 or RSA PeerIds, fails with ErrInvalidPeerID. Use it on all
// user and chain input; do not match on a prefix ("16Uiu2HAk…" and "16Uiu2HAm…" both occur).
func ParsePeerID(s string) (peer.ID, error) {
	id, err := peer.Decode(s)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidPeerID, err)
	}
	if _, err := secp256k1Key(id); err != nil {
		return "", err
	}
	return id, nil
}

// secp256k1Key extracts the embedded public key of id and checks its type.
func secp256k1Key(id peer.ID) (*crypto.Secp256k1PublicKey, error) {
	pk, err := id.ExtractPublicKey()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPeerID, err)
	}
	k, ok := pk.(*crypto.Secp256k1PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: key type %s, want secp256k1", ErrInvalidPeerID, pk.Type())
	}
	return k, nil
}

// AddressOf returns the chain address of the node with PeerId id: both derive from its key.
func AddressOf(id peer.ID) (common.Address, error) {
	raw, err := PubKeyFromPeerID(id)
	if err != nil {
		return common.Address{}, err
	}
	pub, err := ethcrypto.DecompressPubkey(raw)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrInvalidPubKey, err)
	}
	return ethcrypto.PubkeyToAddress(*pub), nil
}
