package channels

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
)

// Graph is the channel graph and peer list the node has indexed. It is safe for concurrent use.
// It only stores what it is given: callers (the chain indexer) apply states the chain reported,
// in chain order, and use ApplyAll to make a block's changes visible at once. Values passed in and
// returned are copies; mutating them does not change the Graph.
type Graph struct {
	mu   sync.RWMutex
	snap *Snapshot // copy-on-write: replaced, never mutated, once published
}

// NewGraph returns an empty Graph.
func NewGraph() *Graph {
	return &Graph{snap: newSnapshot()}
}

// Apply records c as the current state of channel c.ID. c.ID must be IDOf(c.Source,
// c.Destination); the caller (the indexer) takes it from the contract's event.
func (g *Graph) Apply(c Channel) { g.ApplyAll([]Channel{c}, nil) }

// Announce records a as the latest announcement of a.Account, replacing any earlier one.
func (g *Graph) Announce(a Announcement) { g.ApplyAll(nil, []Announcement{a}) }

// ApplyAll applies chans then anns in order, atomically: a concurrent reader sees either none or
// all of them. The indexer calls it once per indexed block range so that a Snapshot never mixes
// states of different blocks.
func (g *Graph) ApplyAll(chans []Channel, anns []Announcement) {
	if len(chans) == 0 && len(anns) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.snap.clone()
	for _, c := range chans {
		next.put(c.Clone())
	}
	for _, a := range anns {
		next.announced[a.Account] = a.Clone()
	}
	g.snap = next
}

// Restore is ApplyAll that first forgets the channels with the ids in goneChans and the
// announcements of the accounts in goneAnns, all in one step: the chain indexer's rollback after
// a reorganisation removed the blocks that opened or announced them.
func (g *Graph) Restore(chans []Channel, anns []Announcement, goneChans [][32]byte, goneAnns []common.Address) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.snap.clone()
	for _, id := range goneChans {
		c, ok := next.byID[id]
		if !ok {
			continue
		}
		delete(next.byID, id)
		next.out[c.Source] = slices.DeleteFunc(slices.Clone(next.out[c.Source]), func(x [32]byte) bool { return x == id })
		next.in[c.Destination] = slices.DeleteFunc(slices.Clone(next.in[c.Destination]), func(x [32]byte) bool { return x == id })
	}
	for _, a := range goneAnns {
		delete(next.announced, a)
	}
	for _, c := range chans {
		next.put(c.Clone())
	}
	for _, a := range anns {
		next.announced[a.Account] = a.Clone()
	}
	g.snap = next
}

// Reset empties the graph (the indexer does it before re-indexing a different chain).
func (g *Graph) Reset() {
	g.mu.Lock()
	g.snap = newSnapshot()
	g.mu.Unlock()
}

// Snapshot returns an immutable view of the graph as it is now. It is cheap: the Graph copies on
// write, so the snapshot shares nothing that will change.
func (g *Graph) Snapshot() *Snapshot {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.snap
}

// Channel returns the channel from src to dst and whether the graph knows it.
func (g *Graph) Channel(src, dst common.Address) (Channel, bool) {
	return g.Snapshot().Channel(src, dst)
}

// ByID returns the channel with the given id and whether the graph knows it.
func (g *Graph) ByID(id [32]byte) (Channel, bool) { return g.Snapshot().ByID(id) }

// Outgoing returns the channels whose source is addr, in any status, sorted by destination.
func (g *Graph) Outgoing(addr common.Address) []Channel { return g.Snapshot().Outgoing(addr) }

// Incoming returns the channels whose destination is addr, in any status, sorted by source.
func (g *Graph) Incoming(addr common.Address) []Channel { return g.Snapshot().Incoming(addr) }

// Announced returns the latest announcement of addr and whether there is one.
func (g *Graph) Announced(addr common.Address) (Announcement, bool) {
	return g.Snapshot().Announced(addr)
}

// Peers returns every announcement, sorted by account.
func (g *Graph) Peers() []Announcement { return g.Snapshot().Peers() }

// Snapshot is an immutable view of a Graph, for path selection and listings. Its methods are
// safe for concurrent use and return copies.
type Snapshot struct {
	byID      map[[32]byte]Channel
	out       map[common.Address][][32]byte // source → channel ids
	in        map[common.Address][][32]byte // destination → channel ids
	announced map[common.Address]Announcement
}

func newSnapshot() *Snapshot {
	return &Snapshot{
		byID:      map[[32]byte]Channel{},
		out:       map[common.Address][][32]byte{},
		in:        map[common.Address][][32]byte{},
		announced: map[common.Address]Announcement{},
	}
}

// clone copies the maps; Channel and Announcement values are never mutated in place, so they are
// shared. The id slices are copied on append by put.
func (s *Snapshot) clone() *Snapshot {
	n := &Snapshot{
		byID:      make(map[[32]byte]Channel, len(s.byID)+1),
		out:       make(map[common.Address][][32]byte, len(s.out)+1),
		in:        make(map[common.Address][][32]byte, len(s.in)+1),
		announced: make(map[common.Address]Announcement, len(s.announced)+1),
	}
	for k, v := range s.byID {
		n.byID[k] = v
	}
	for k, v := range s.out {
		n.out[k] = v
	}
	for k, v := range s.in {
		n.in[k] = v
	}
	for k, v := range s.announced {
		n.announced[k] = v
	}
	return n
}

func (s *Snapshot) put(c Channel) {
	if _, known := s.byID[c.ID]; !known {
		s.out[c.Source] = append(slices.Clip(s.out[c.Source]), c.ID)
		s.in[c.Destination] = append(slices.Clip(s.in[c.Destination]), c.ID)
	}
	s.byID[c.ID] = c
}

// Channel returns the channel from src to dst and whether the snapshot has it.
func (s *Snapshot) Channel(src, dst common.Address) (Channel, bool) { return s.ByID(IDOf(src, dst)) }

// ByID returns the channel with the given id and whether the snapshot has it.
func (s *Snapshot) ByID(id [32]byte) (Channel, bool) {
	c, ok := s.byID[id]
	if !ok {
		return Channel{}, false
	}
	return c.Clone(), true
}

// Outgoing returns the channels whose source is addr, sorted by destination.
func (s *Snapshot) Outgoing(addr common.Address) []Channel {
	return s.list(s.out[addr], func(c Channel) common.Address { return c.Destination })
}

// Incoming returns the channels whose destination is addr, sorted by source.
func (s *Snapshot) Incoming(addr common.Address) []Channel {
	return s.list(s.in[addr], func(c Channel) common.Address { return c.Source })
}

// Channels returns every channel, sorted by source then destination.
func (s *Snapshot) Channels() []Channel {
	out := make([]Channel, 0, len(s.byID))
	for _, c := range s.byID {
		out = append(out, c.Clone())
	}
	slices.SortFunc(out, func(a, b Channel) int {
		if c := bytes.Compare(a.Source[:], b.Source[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.Destination[:], b.Destination[:])
	})
	return out
}

func (s *Snapshot) list(ids [][32]byte, key func(Channel) common.Address) []Channel {
	out := make([]Channel, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.byID[id].Clone())
	}
	slices.SortFunc(out, func(a, b Channel) int {
		ka, kb := key(a), key(b)
		return bytes.Compare(ka[:], kb[:])
	})
	return out
}

// Announced returns the latest announcement of addr and whether there is one.
func (s *Snapshot) Announced(addr common.Address) (Announcement, bool) {
	a, ok := s.announced[addr]
	if !ok {
		return Announcement{}, false
	}
	return a.Clone(), true
}

// Peers returns every announcement, sorted by account.
func (s *Snapshot) Peers() []Announcement {
	out := make([]Announcement, 0, len(s.announced))
	for _, a := range s.announced {
		out = append(out, a.Clone())
	}
	slices.SortFunc(out, func(a, b Announcement) int { return bytes.Compare(a.Account[:], b.Account[:]) })
	return out
}

// EncodeMultiaddrs is the announcement's multiaddr field as relayd writes it: the text forms
// joined by single spaces (a multiaddr's text form has no whitespace).
func EncodeMultiaddrs(addrs []string) []byte { return []byte(strings.Join(addrs, " ")) }

// DecodeMultiaddrs reads an announcement's multiaddr field: UTF-8 text holding one or more
// whitespace-separated multiaddrs, each starting with '/'. Anything else (binary multiaddrs,
// garbage) yields nil; the caller treats the peer as having no usable address.
func DecodeMultiaddrs(b []byte) []string {
	if !utf8.Valid(b) {
		return nil
	}
	fields := strings.Fields(string(b))
	for _, f := range fields {
		if !strings.HasPrefix(f, "/") {
			return nil
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return fields
}
