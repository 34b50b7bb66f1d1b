package relay

import (
	"sync"

	"github.com/relayd/relayd/internal/packet"
)

// MemoryReplay is an in-memory packet.ReplayChecker. It keeps the tags of the epochs
// packet.Peel still accepts (docs/PROTOCOL.md §3.8) and forgets them all when the process
// ends: a node that restarts must use a persistent checker to keep refusing packets
// replayed across the restart. It reads no clock: it forgets an epoch once it has been given
// a packet of an epoch that is 2·packet.EpochSkew later, by then past Peel's window (Peel
// accepts no epoch after its current one plus packet.EpochSkew).
type MemoryReplay struct {
	mu     sync.Mutex
	newest uint32
	epochs map[uint32]map[[packet.TagSize]byte]struct{}
}

var _ packet.ReplayChecker = (*MemoryReplay)(nil)

// NewMemoryReplay returns an empty MemoryReplay.
func NewMemoryReplay() *MemoryReplay {
	return &MemoryReplay{epochs: make(map[uint32]map[[packet.TagSize]byte]struct{})}
}

// CheckAndAdd implements packet.ReplayChecker. A tag of an epoch already forgotten counts
// as seen.
func (m *MemoryReplay) CheckAndAdd(epoch uint32, tag [packet.TagSize]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if epoch > m.newest {
		m.newest = epoch
		for e := range m.epochs {
			if packet.Expired(e, m.newest-packet.EpochSkew) {
				delete(m.epochs, e)
			}
		}
	}
	if uint64(epoch)+2*packet.EpochSkew < uint64(m.newest) {
		return false, nil
	}
	set := m.epochs[epoch]
	if set == nil {
		set = make(map[[packet.TagSize]byte]struct{})
		m.epochs[epoch] = set
	}
	if _, ok := set[tag]; ok {
		return false, nil
	}
	set[tag] = struct{}{}
	return true, nil
}
