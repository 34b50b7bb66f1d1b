package relay

import (
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// pendingEntry is a packet this node sent or forwarded whose next hop has not acknowledged it.
type pendingEntry struct {
	sender  bool    // this node created the packet
	next    peer.ID // the peer whose acknowledgement is expected
	expires time.Time

	// Relayer: what checks the acknowledgement and turns it into a redeemable ticket.
	commitment por.AckCommitment // H(ack_{i+1}): the ack must hash to it
	own        por.Scalar
	prev       common.Address
	paid       bool
	ticket     tickets.Ticket

	// Sender: the ack challenge A_1 that names the message, the ack scalar expected, and done,
	// closed once the entry is acknowledged or expired; acked says which.
	challenge por.AckChallenge
	ack       por.Scalar
	done      chan struct{}
	acked     bool
}

// pendingTable holds pending entries by packet id, bounded in size; sender entries are also
// kept by ack challenge until they expire, so WaitAck works after the acknowledgement came.
type pendingTable struct {
	mu   sync.Mutex
	byID map[packetID]*pendingEntry
	sent map[por.AckChallenge]*pendingEntry
	max  int
}

func newPendingTable(max int) *pendingTable {
	return &pendingTable{byID: make(map[packetID]*pendingEntry), sent: make(map[por.AckChallenge]*pendingEntry), max: max}
}

func (p *pendingTable) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

// add inserts e under id. It fails with ErrOverloaded when the table is full and errDuplicate
// when id is taken.
func (p *pendingTable) add(id packetID, e *pendingEntry) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byID) >= p.max {
		return ErrOverloaded
	}
	if _, dup := p.byID[id]; dup {
		return errDuplicate
	}
	if e.sender {
		if _, dup := p.sent[e.challenge]; dup {
			return errDuplicate
		}
		p.sent[e.challenge] = e
	}
	p.byID[id] = e
	return nil
}

func (p *pendingTable) get(id packetID) *pendingEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[id]
}

// remove removes e from the id index if it is still there and reports whether it was: of two
// concurrent removers exactly one wins. Sender entries stay findable by challenge.
func (p *pendingTable) remove(id packetID, e *pendingEntry) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID[id] != e {
		return false
	}
	delete(p.byID, id)
	return true
}

// forgetSent drops a sender entry that was never sent.
func (p *pendingTable) forgetSent(id packetID, e *pendingEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID[id] == e {
		delete(p.byID, id)
	}
	if p.sent[e.challenge] == e {
		delete(p.sent, e.challenge)
	}
}

func (p *pendingTable) sender(a por.AckChallenge) *pendingEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[a]
}

// expire removes and returns the entries unacknowledged at now, and forgets sender entries
// whose time is over.
func (p *pendingTable) expire(now time.Time) []*pendingEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pendingEntry
	for id, e := range p.byID {
		if !now.Before(e.expires) {
			delete(p.byID, id)
			out = append(out, e)
		}
	}
	for a, e := range p.sent {
		if !now.Before(e.expires) {
			delete(p.sent, a)
		}
	}
	return out
}
