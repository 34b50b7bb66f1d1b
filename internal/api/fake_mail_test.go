package api

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/store"
)

// The courier implements the API's Mail.
var _ Mail = (*courier.Courier)(nil)

// fakeReplyCapacity is the text one reply packet carries, as the courier counts it.
const fakeReplyCapacity = 460

// fakeMail plays the courier: Send keeps the message in an outbox as queued (ids 0x5e, then a
// counter), refusing what the courier refuses; the inbox holds what reset put there, and Reply
// takes one reply block per fakeReplyCapacity bytes of the answer.
type fakeMail struct {
	mu       sync.Mutex
	maxBody  int
	count    byte
	outbox   map[[16]byte]store.OutboxMessage
	inbox    []store.InboxMessage
	sent     []courier.Request
	replies  []string
	replyErr error // Reply fails with it, once it took the blocks, when set
}

func newFakeMail() *fakeMail {
	return &fakeMail{maxBody: courier.DefaultMaxBody, outbox: map[[16]byte]store.OutboxMessage{}}
}

// fakeReceived is when the fake's inbox messages arrived.
var fakeReceived = time.Date(2026, 11, 24, 8, 0, 0, 123e6, time.UTC)

// fakeDelivered is the id of the delivered message of reset's outbox.
var fakeDelivered = [16]byte{0xde, 0x11, 0x7e, 0xed}

// reset empties the fake and puts back: in the outbox one message delivered in 3 packets; in the
// inbox message 1 with 2 reply blocks, message 2 a reply to fakeDelivered, message 3 without reply
// blocks.
func (m *fakeMail) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count, m.sent, m.replies, m.replyErr = 0, nil, nil, nil
	m.outbox = map[[16]byte]store.OutboxMessage{fakeDelivered: {ID: fakeDelivered, Recipient: "16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT",
		Body: []byte("secret"), Replies: 2, Created: fakeReceived, Updated: fakeReceived.Add(2 * time.Second),
		State: courier.StateDelivered, Attempts: 1, Fragments: 3, Acked: []byte{0xff}}}
	m.inbox = []store.InboxMessage{
		{Seq: 1, ID: [16]byte{0x01}, Received: fakeReceived, SentAt: uint64(fakeReceived.UnixMilli() - 40), Body: []byte("hello <b>\x1b[31m"),
			ReplyBlocks: [][]byte{{0xb1}, {0xb2}}},
		{Seq: 2, ID: [16]byte{0x02}, Received: fakeReceived, Body: []byte("an answer"), Reply: true, InReplyTo: fakeDelivered},
		{Seq: 3, ID: [16]byte{0x03}, Received: fakeReceived, SentAt: uint64(fakeReceived.UnixMilli()), Body: []byte("no way back")},
	}
}

func (m *fakeMail) Send(req courier.Request) ([16]byte, error) {
	var id [16]byte
	switch {
	case len(req.Body) == 0:
		return id, courier.ErrEmpty
	case len(req.Body) > m.maxBody:
		return id, fmt.Errorf("%w: %d bytes, at most %d", courier.ErrTooLarge, len(req.Body), m.maxBody)
	case req.Replies < 0 || req.Replies > courier.MaxReplies:
		return id, fmt.Errorf("%w: %d reply blocks, at most %d", courier.ErrInvalid, req.Replies, courier.MaxReplies)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	id[0], id[15] = 0x5e, m.count
	m.outbox[id] = store.OutboxMessage{ID: id, Recipient: req.Recipient.String(), Body: req.Body, Replies: req.Replies,
		Created: fakeReceived, Updated: fakeReceived, State: courier.StateQueued}
	m.sent = append(m.sent, req)
	return id, nil
}

func (m *fakeMail) Status(id [16]byte) (store.OutboxMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.outbox[id]
	if !ok {
		return o, fmt.Errorf("%w: %w", courier.ErrNotFound, store.ErrNotFound)
	}
	return o, nil
}

func (m *fakeMail) Reply(_ context.Context, seq uint64, body []byte) ([16]byte, int, error) {
	var id [16]byte
	if len(body) == 0 {
		return id, 0, courier.ErrEmpty
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.inbox, func(x store.InboxMessage) bool { return x.Seq == seq })
	if i < 0 {
		return id, 0, fmt.Errorf("%w: %w", courier.ErrNotFound, store.ErrNotFound)
	}
	left := len(m.inbox[i].ReplyBlocks)
	need := (len(body) + fakeReplyCapacity - 1) / fakeReplyCapacity
	switch {
	case left == 0:
		return id, 0, courier.ErrNoReplyBlock
	case need > left:
		return id, left, fmt.Errorf("%w: the answer needs %d packets, %d reply blocks are left", courier.ErrReplyTooLarge, need, left)
	}
	m.inbox[i].ReplyBlocks = m.inbox[i].ReplyBlocks[need:]
	if m.replyErr != nil {
		return id, left - need, m.replyErr
	}
	m.count++
	id[0], id[15] = 0x7e, m.count
	m.replies = append(m.replies, string(body))
	return id, left - need, nil
}

func (m *fakeMail) Inbox(since uint64, limit int) ([]store.InboxMessage, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.InboxMessage
	for _, x := range m.inbox {
		if x.Seq > since && len(out) < limit {
			out = append(out, x)
		}
	}
	return out, len(m.inbox), nil
}

func (m *fakeMail) Pop() (store.InboxMessage, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.inbox) == 0 {
		return store.InboxMessage{}, false, nil
	}
	x := m.inbox[0]
	m.inbox = m.inbox[1:]
	return x, true, nil
}

func (m *fakeMail) Delete(seq uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.inbox)
	m.inbox = slices.DeleteFunc(m.inbox, func(x store.InboxMessage) bool { return x.Seq == seq })
	return len(m.inbox) < n, nil
}

// faultyMail fails every call with err.
type faultyMail struct{ err error }

func (m faultyMail) Send(courier.Request) ([16]byte, error) { return [16]byte{}, m.err }
func (m faultyMail) Status([16]byte) (store.OutboxMessage, error) {
	return store.OutboxMessage{}, m.err
}
func (m faultyMail) Reply(context.Context, uint64, []byte) ([16]byte, int, error) {
	return [16]byte{}, 0, m.err
}
func (m faultyMail) Inbox(uint64, int) ([]store.InboxMessage, int, error) { return nil, 0, m.err }
func (m faultyMail) Pop() (store.InboxMessage, bool, error) {
	return store.InboxMessage{}, false, m.err
}
func (m faultyMail) Delete(uint64) (bool, error) { return false, m.err }
