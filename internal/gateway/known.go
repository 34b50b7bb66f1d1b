package gateway

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// The SOCKS5 entry's memory of targets that worked (KnownTargets), by default: the last 256
// targets for 10 minutes after their last CONNECT through the same exit.
const (
	DefaultKnownTargets = 256
	DefaultKnownFor     = 10 * time.Minute
)

// KnownTargets remembers the targets a SOCKS5 CONNECT reached lately through each exit: at most
// size of them (the one that worked longest ago goes first), each for ttl after it last worked.
// The SOCKS5 entry answers a CONNECT to a known target before the exit does and sends the
// client's first bytes with the SYN (SOCKSDialer.Early). A target whose dial failed is not
// known again for ttl, whatever works in between, so that the next CONNECTs wait for the exit
// and get its reply code. It keeps targets in memory only and never logs them. Safe for
// concurrent use.
type KnownTargets struct {
	size int
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	m  map[knownKey]*knownTarget
}

type knownKey struct {
	exit   peer.ID
	target string
}

// knownTarget says when a target last worked and last failed (zero: never) through an exit.
type knownTarget struct {
	worked, failed time.Time
}

// NewKnownTargets remembers at most size targets (0: none is ever known) for ttl; now is the
// clock (nil: time.Now).
func NewKnownTargets(size int, ttl time.Duration, now func() time.Time) *KnownTargets {
	if now == nil {
		now = time.Now
	}
	return &KnownTargets{size: max(size, 0), ttl: ttl, now: now, m: map[knownKey]*knownTarget{}}
}

// Known reports whether target worked through exit within ttl and has not failed since ttl
// ago.
func (k *KnownTargets) Known(exit peer.ID, target string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.m[knownKey{exit, target}]
	if t == nil {
		return false
	}
	now := k.now()
	return !t.worked.IsZero() && now.Sub(t.worked) < k.ttl && (t.failed.IsZero() || now.Sub(t.failed) >= k.ttl)
}

// Worked records a CONNECT to target through exit that the exit confirmed.
func (k *KnownTargets) Worked(exit peer.ID, target string) {
	if k.size == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	key := knownKey{exit, target}
	t := k.m[key]
	if t == nil {
		if len(k.m) >= k.size {
			k.evict(now)
		}
		t = &knownTarget{}
		k.m[key] = t
	}
	t.worked = now
}

// Failed records a CONNECT to target through exit that failed: it is not known for ttl. A
// target never known is not recorded.
func (k *KnownTargets) Failed(exit peer.ID, target string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.m[knownKey{exit, target}]; t != nil {
		t.failed = k.now()
	}
}

// Len is how many targets are remembered (known or failed lately).
func (k *KnownTargets) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// evict makes room for one target: it drops those that neither worked nor failed within ttl,
// or else the one that worked longest ago. k.mu is held.
func (k *KnownTargets) evict(now time.Time) {
	var oldest knownKey
	var oldestAt time.Time
	for key, t := range k.m {
		if now.Sub(t.worked) >= k.ttl && (t.failed.IsZero() || now.Sub(t.failed) >= k.ttl) {
			delete(k.m, key)
			continue
		}
		if oldestAt.IsZero() || t.worked.Before(oldestAt) {
			oldest, oldestAt = key, t.worked
		}
	}
	if len(k.m) >= k.size {
		delete(k.m, oldest)
	}
}
