package fragment

import (
	"fmt"
)

// Outgoing is a sender's record of one message's fragments: which the recipient acknowledged
// and which remain to send. The engine that sends rounds and retries keeps one per message.
// It is not safe for concurrent use.
type Outgoing struct {
	id     ID
	acked  []byte // bit i: fragment i acknowledged
	total  int
	nAcked int
}

// NewOutgoing records message id of fragments fragments (the length of Split's result), none
// acknowledged. A count outside 1 … MaxFragments is ErrTooLarge.
func NewOutgoing(id ID, fragments int) (*Outgoing, error) {
	if fragments < 1 || fragments > MaxFragments {
		return nil, fmt.Errorf("%w: %d fragments", ErrTooLarge, fragments)
	}
	return &Outgoing{id: id, acked: make([]byte, (fragments+7)/8), total: fragments}, nil
}

// ID is the message's ID.
func (o *Outgoing) ID() ID { return o.id }

// Total is the message's number of fragments.
func (o *Outgoing) Total() int { return o.total }

// Apply records ack and returns the fragment indexes it acknowledged for the first time, in
// ascending order. An ack for another message, for another number of fragments or breaking
// the Ack's rules changes nothing and returns nil. Acks only add: one that omits a fragment an
// earlier one acknowledged (an older round arriving late) takes nothing back.
func (o *Outgoing) Apply(ack Ack) []int {
	if ack.ID != o.id || int(ack.Total) != o.total || ack.check() != nil {
		return nil
	}
	var fresh []int
	for i := range o.total {
		if ack.Has(i) && !hasBit(o.acked, i) {
			o.acked[i/8] |= 1 << (i % 8)
			fresh = append(fresh, i)
		}
	}
	o.nAcked += len(fresh)
	return fresh
}

// Acked reports whether fragment i was acknowledged.
func (o *Outgoing) Acked(i int) bool { return i >= 0 && i < o.total && hasBit(o.acked, i) }

// Pending is the fragment indexes not acknowledged yet, ascending: what remains to send.
func (o *Outgoing) Pending() []int {
	out := make([]int, 0, o.total-o.nAcked)
	for i := range o.total {
		if !hasBit(o.acked, i) {
			out = append(out, i)
		}
	}
	return out
}

// Done reports whether every fragment was acknowledged.
func (o *Outgoing) Done() bool { return o.nAcked == o.total }
