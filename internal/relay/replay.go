package relay

import (
	"sync"

	"github.com/relayd/relayd/internal/packet"
)

// MemoryReplay is an in-memory packet.ReplayChecker. It keeps every tag it has seen, as
// docs/PROTOCOL.md §3.8 requires for as long as the node key lives (32 bytes a packet), and
// forgets them all when the process ends: a node that restarts must use a persistent checker
// to keep refusing packets replayed across the restart.
type MemoryReplay struct {
	mu   sync.Mutex
	seen map[[packet.TagSize]byte]struct{}
}

// NewMemoryReplay returns an empty MemoryReplay.
func NewMemoryReplay() *MemoryReplay {
	return &MemoryReplay{seen: make(map[[packet.TagSize]byte]struct{})}
}

// CheckAndAdd implements packet.ReplayChecker.
func (m *MemoryReplay) CheckAndAdd(tag [packet.TagSize]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[tag]; ok {
		return false, nil
	}
	m.seen[tag] = struct{}{}
	return true, nil
}
