package relay

import (
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/packet"
)

// maxCachedPeers bounds the peer cache; it is emptied when full (peers come back on use).
const maxCachedPeers = 1 << 16

// peerEntry is what the relay derives from a peer's key: its parsed key for packets, its
// PeerId for the transport and its chain address for payments.
type peerEntry struct {
	id   peer.ID
	key  *packet.PublicKey
	addr common.Address
}

// peerCache memoises peerEntry by PeerId and by compressed key: deriving one costs two square
// roots, which a hop should not pay per packet.
type peerCache struct {
	mu    sync.RWMutex
	byID  map[peer.ID]*peerEntry
	byKey map[[packet.PublicKeySize]byte]*peerEntry
}

func newPeerCache() *peerCache {
	return &peerCache{byID: make(map[peer.ID]*peerEntry), byKey: make(map[[packet.PublicKeySize]byte]*peerEntry)}
}

func (c *peerCache) byPeer(id peer.ID) (*peerEntry, error) {
	c.mu.RLock()
	e := c.byID[id]
	c.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	b, err := identity.PubKeyFromPeerID(id)
	if err != nil {
		return nil, err
	}
	return c.add(id, [packet.PublicKeySize]byte(b))
}

func (c *peerCache) byPubKey(k [packet.PublicKeySize]byte) (*peerEntry, error) {
	c.mu.RLock()
	e := c.byKey[k]
	c.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	id, err := identity.PeerIDFromPubKey(k[:])
	if err != nil {
		return nil, err
	}
	return c.add(id, k)
}

func (c *peerCache) add(id peer.ID, k [packet.PublicKeySize]byte) (*peerEntry, error) {
	key, err := packet.ParsePublicKey(k[:])
	if err != nil {
		return nil, err
	}
	pub, err := crypto.DecompressPubkey(k[:])
	if err != nil {
		return nil, fmt.Errorf("decompress key: %w", err)
	}
	e := &peerEntry{id: id, key: key, addr: crypto.PubkeyToAddress(*pub)}
	c.mu.Lock()
	if len(c.byID) >= maxCachedPeers {
		clear(c.byID)
		clear(c.byKey)
	}
	c.byID[id] = e
	c.byKey[k] = e
	c.mu.Unlock()
	return e, nil
}
