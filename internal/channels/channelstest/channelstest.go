// Package channelstest gives tests a channel view to set up by hand: a real channels.Graph with
// helpers to open and edit channels, as the chain indexer would report them. It imports only
// internal/channels, go-ethereum's common and uint256, and only tests import it.
package channelstest

import (
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
)

// Map is a channel view shared by the test nodes (their common view of the chain). Its Channel
// method makes it a ledger.ChannelLookup.
type Map struct {
	mu sync.Mutex // serialises read-modify-write edits
	g  *channels.Graph
}

// New returns an empty Map.
func New() *Map { return &Map{g: channels.NewGraph()} }

// Channel returns the channel from src to dst.
func (m *Map) Channel(src, dst common.Address) (channels.Channel, bool) { return m.g.Channel(src, dst) }

// Open opens (or updates) the channel src → dst with balance, epoch at least 1.
func (m *Map) Open(src, dst common.Address, balance uint256.Int) {
	m.Set(src, dst, func(c *channels.Channel) {
		c.Balance = balance.ToBig()
		c.Status = channels.Open
		c.Epoch = max(c.Epoch, 1)
	})
}

// Set edits the channel src → dst (a new one starts closed, epoch 0, balance 0).
func (m *Map) Set(src, dst common.Address, edit func(*channels.Channel)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.g.Channel(src, dst)
	if !ok {
		c = channels.Channel{ID: channels.IDOf(src, dst), Source: src, Destination: dst}
	}
	c = c.Clone()
	edit(&c)
	m.g.Apply(c)
}
