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
// A sender keeps its entries for AckTimeout (a minute by default), at a thousand messages a
// second tens of thousands of them, so each kind carries only its own data: the fields of
// relayedPacket or of sentPacket, promoted from the one pointer that is set.
type pendingEntry struct {
	next    peer.ID // the peer whose acknowledgement is expected
	expires time.Time
	*relayedPacket
	*sentPacket
}

// sent reports whether this node created the packet (sentPacket is set, relayedPacket nil).
func (e *pendingEntry) sent() bool { return e.sentPacket != nil }

// relayedPacket is what a relayer needs to check the acknowledgement of a packet it forwarded
// and to turn the packet's ticket into a redeemable one.
type relayedPacket struct {
	commitment por.AckCommitment // H(ack_{i+1}): the ack must hash to it
	own        por.Scalar
	prev       common.Address
	paid       bool
	ticket     tickets.Ticket
}

// sentPacket is a sender's: the ack challenge A_1 that names the message and the ack scalar
// expected, or for a reply (SendReply), whose replier does not know ack_0, the commitment
// H(ack_0) from the reply block, which the challenge is then made of (replyAck). state and done
// are guarded by the table's mutex: done exists only once somebody waits (WaitAck) and is closed
// when the entry is settled.
type sentPacket struct {
	challenge       por.AckChallenge
	ack             por.Scalar
	reply           bool
	replyCommitment por.AckCommitment
	state           sentState
	done            chan struct{}
}

// opens reports whether ack is the acknowledgement of the sent packet: the scalar the sender
// derived, or for a reply the one that hashes to the block's commitment.
func (s *sentPacket) opens(ack por.Scalar) bool {
	if s.reply {
		return por.CommitAck(ack) == s.replyCommitment
	}
	return por.EqualScalars(ack, s.ack)
}

type sentState uint8

const (
	sentPending sentState = iota
	sentAcked
	sentExpired
)

// newRelayedEntry returns a relayer's entry, its data in the same allocation.
func newRelayedEntry(next peer.ID, expires time.Time, own por.Scalar, prev common.Address) *pendingEntry {
	e := &struct {
		pendingEntry
		data relayedPacket
	}{}
	e.data = relayedPacket{own: own, prev: prev}
	e.pendingEntry = pendingEntry{next: next, expires: expires, relayedPacket: &e.data}
	return &e.pendingEntry
}

// newSentEntry returns a sender's entry, its data in the same allocation.
func newSentEntry(next peer.ID, expires time.Time, challenge por.AckChallenge, ack por.Scalar) *pendingEntry {
	e := &struct {
		pendingEntry
		data sentPacket
	}{}
	e.data = sentPacket{challenge: challenge, ack: ack}
	e.pendingEntry = pendingEntry{next: next, expires: expires, sentPacket: &e.data}
	return &e.pendingEntry
}

// newReplyEntry returns a replier's entry: its first hop's acknowledgement must hash to
// commitment.
func newReplyEntry(next peer.ID, expires time.Time, commitment por.AckCommitment) *pendingEntry {
	e := newSentEntry(next, expires, replyAck(commitment), por.Scalar{})
	e.reply, e.replyCommitment = true, commitment
	return e
}

// replyAck is the name a reply's pending entry goes by (Sent.Ack): its commitment H(ack_0)
// behind a zero byte, which no compressed point starts with.
func replyAck(commitment por.AckCommitment) por.AckChallenge {
	var a por.AckChallenge
	copy(a[1:], commitment[:])
	return a
}

// pendingTable holds pending entries by packet id, bounded in size; sender entries are also
// kept by ack challenge until they expire, so WaitAck works after the acknowledgement came.
// The packets of one previous hop take at most half of it (perPrev): a peer that floods this
// relayer with packets whose next hops do not acknowledge them (each stays AckTimeout) cannot
// fill the table and have every other peer's packets dropped.
type pendingTable struct {
	mu      sync.Mutex
	byID    map[packetID]*pendingEntry
	sent    map[por.AckChallenge]*pendingEntry
	byPrev  map[common.Address]int // relayed entries in byID by previous hop
	max     int
	perPrev int
}

func newPendingTable(size int) *pendingTable {
	return &pendingTable{byID: make(map[packetID]*pendingEntry), sent: make(map[por.AckChallenge]*pendingEntry),
		byPrev: make(map[common.Address]int), max: size, perPrev: max(size/2, 1)}
}

// drop removes the entry under id from byID (it is there) and from its previous hop's count.
func (p *pendingTable) drop(id packetID, e *pendingEntry) {
	delete(p.byID, id)
	if e.relayedPacket == nil {
		return
	}
	if n := p.byPrev[e.prev] - 1; n > 0 {
		p.byPrev[e.prev] = n
	} else {
		delete(p.byPrev, e.prev)
	}
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
	if len(p.byID) >= p.max || e.relayedPacket != nil && p.byPrev[e.prev] >= p.perPrev {
		return ErrOverloaded
	}
	if _, dup := p.byID[id]; dup {
		return errDuplicate
	}
	if e.sent() {
		if _, dup := p.sent[e.challenge]; dup {
			return errDuplicate
		}
		p.sent[e.challenge] = e
	}
	p.byID[id] = e
	if e.relayedPacket != nil {
		p.byPrev[e.prev]++
	}
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
	p.drop(id, e)
	return true
}

// forgetSent drops a sender entry that was never sent.
func (p *pendingTable) forgetSent(id packetID, e *pendingEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID[id] == e {
		p.drop(id, e)
	}
	if p.sent[e.challenge] == e {
		delete(p.sent, e.challenge)
	}
}

// settleSent records how a sender entry ended and wakes its waiters.
func (p *pendingTable) settleSent(e *pendingEntry, state sentState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.state = state
	if e.done != nil {
		close(e.done)
	}
}

// waitSent returns the sender entry named a (nil if none is known), its state, and while it
// is pending a channel closed when it is settled; after that e.state is final.
func (p *pendingTable) waitSent(a por.AckChallenge) (e *pendingEntry, state sentState, done <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e = p.sent[a]; e == nil {
		return nil, 0, nil
	}
	if e.state == sentPending && e.done == nil {
		e.done = make(chan struct{})
	}
	return e, e.state, e.done
}

// expire removes and returns the entries unacknowledged at now, and forgets sender entries
// whose time is over.
func (p *pendingTable) expire(now time.Time) []*pendingEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pendingEntry
	for id, e := range p.byID {
		if !now.Before(e.expires) {
			p.drop(id, e)
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
