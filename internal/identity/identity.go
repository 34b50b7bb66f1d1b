// Package identity owns the node's one secp256k1 key and the names every
// node goes by: it creates and loads the Ethereum v3 keystore that holds
// the key and derives from it the libp2p PeerId and the EIP-55 chain
// address; and it converts between PeerIds, public keys and chain addresses
// of any node (peerid.go), so that layers which only name peers (api, relay,
// node) need not import the libp2p transport (internal/p2p) for it. It
// imports libp2p's core crypto and peer packages, never the transport, and
// must not import other relayd packages.
package identity

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Identity is a node's key and the names derived from it.
type Identity struct {
	key     *ecdsa.PrivateKey
	p2pKey  p2pcrypto.PrivKey
	peerID  peer.ID
	address common.Address
}

// Scrypt parameters for new keystores.
type Scrypt struct{ N, P int }

var (
	// StandardScrypt is the go-ethereum default: slow to brute-force, about a
	// second and 256 MiB to open.
	StandardScrypt = Scrypt{keystore.StandardScryptN, keystore.StandardScryptP}
	// LightScrypt opens in milliseconds; for tests and local clusters only.
	LightScrypt = Scrypt{keystore.LightScryptN, keystore.LightScryptP}
)

// FromKey builds an Identity from a private key.
func FromKey(key *ecdsa.PrivateKey) (*Identity, error) {
	p2pKey, err := p2pcrypto.UnmarshalSecp256k1PrivateKey(crypto.FromECDSA(key))
	if err != nil {
		return nil, fmt.Errorf("convert key: %w", err)
	}
	id, err := peer.IDFromPublicKey(p2pKey.GetPublic())
	if err != nil {
		return nil, fmt.Errorf("derive peer id: %w", err)
	}
	return &Identity{key: key, p2pKey: p2pKey, peerID: id, address: crypto.PubkeyToAddress(key.PublicKey)}, nil
}

// Generate creates a new random identity.
func Generate() (*Identity, error) {
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return FromKey(key)
}

// Load decrypts the keystore at path with password. A missing file gives an
// error matching ErrNotFound, a wrong password one matching ErrWrongPassword.
func Load(path, password string) (*Identity, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read keystore: %w", err)
	}
	k, err := decryptKey(data, password)
	if errors.Is(err, keystore.ErrDecrypt) {
		return nil, fmt.Errorf("%s: %w", path, ErrWrongPassword)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrBadKeystore, err)
	}
	return FromKey(k.PrivateKey)
}

// Save writes the identity to path as a v3 keystore encrypted with password,
// with file mode 0600, creating parent directories (0700) as needed. It
// refuses to overwrite an existing file.
func (id *Identity) Save(path, password string, params Scrypt) error {
	k := &keystore.Key{Id: uuid.New(), Address: id.address, PrivateKey: id.key}
	data, err := keystore.EncryptKey(k, password, params.N, params.P)
	if err != nil {
		return fmt.Errorf("encrypt keystore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create keystore directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create keystore: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write keystore: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync keystore: %w", err)
	}
	return f.Close()
}

// LoadOrCreate loads the keystore at path; when it does not exist and create
// is set, it generates a new identity and saves it there first.
func LoadOrCreate(path, password string, create bool, params Scrypt) (id *Identity, created bool, err error) {
	id, err = Load(path, password)
	if !errors.Is(err, ErrNotFound) || !create {
		return id, false, err
	}
	if id, err = Generate(); err != nil {
		return nil, false, err
	}
	if err := id.Save(path, password, params); err != nil {
		return nil, false, err
	}
	return id, true, nil
}

// PrivateKey returns the node's secp256k1 key. Callers must never log it.
func (id *Identity) PrivateKey() *ecdsa.PrivateKey { return id.key }

// P2PKey returns the same key in libp2p's form.
func (id *Identity) P2PKey() p2pcrypto.PrivKey { return id.p2pKey }

// PeerID returns the node's libp2p PeerId.
func (id *Identity) PeerID() peer.ID { return id.peerID }

// Address returns the node's chain address; its String is EIP-55 checksummed.
func (id *Identity) Address() common.Address { return id.address }

// PublicKey returns the 33-byte compressed public key.
func (id *Identity) PublicKey() []byte { return crypto.CompressPubkey(&id.key.PublicKey) }
