package courier

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/relayd/relayd/internal/fragment"
	"github.com/relayd/relayd/internal/store"
)

// Bounds of the receiving side.
const (
	// rxQueue bounds the framed packets waiting to be read; beyond it one is dropped and counted
	// (the sender resends it).
	rxQueue = 4096
	// maxAckSends bounds the acknowledgements under way at once.
	maxAckSends = 16
	// reassembly limits: messages in progress, bytes buffered, completed ids remembered.
	maxInProgress  = 1024
	maxBuffered    = 64 << 20
	rememberFor    = 30 * time.Minute
	maxRemembered  = 100_000
	expireInterval = 5 * time.Second
)

// Received is a framed packet delivered to this node.
type Received struct {
	Text       []byte
	SentAt     time.Time
	ReceivedAt time.Time
	// Reply: it came on a reply block this node made.
	Reply bool
	// Plain: a one-packet message of today's kind, not a frame: kept in the inbox as it is.
	Plain bool
}

// Receive takes a framed packet the relay delivered to this node (a fragment, an acknowledgement
// block's part, an acknowledgement, an answer). It never blocks: beyond its queue it drops.
func (c *Courier) Receive(r Received) {
	select {
	case c.rx.in <- r:
	default:
		c.m.rxDropped.Inc()
	}
}

// receiver reassembles incoming messages and acknowledges them, on one goroutine.
type receiver struct {
	c     *Courier
	in    chan Received
	reasm *fragment.Reassembler
	// quiet: when each incomplete message is due a partial acknowledgement.
	quiet map[fragment.ID]time.Time
	// kept: fragment counts of messages kept in the inbox before this run (or read since),
	// whose sender still asks for an acknowledgement.
	kept  map[fragment.ID]int
	sends chan struct{}
	ctx   context.Context
}

func newReceiver(c *Courier) (*receiver, error) {
	reasm, err := fragment.NewReassembler(fragment.Limits{MaxMessages: maxInProgress, MaxBytes: maxBuffered,
		Timeout: c.cfg.IncompleteAfter, RememberFor: rememberFor, MaxRemembered: maxRemembered, MaxAckBlocks: 2})
	if err != nil {
		return nil, fmt.Errorf("courier: %w", err)
	}
	return &receiver{c: c, in: make(chan Received, rxQueue), reasm: reasm, quiet: map[fragment.ID]time.Time{},
		kept: map[fragment.ID]int{}, sends: make(chan struct{}, maxAckSends)}, nil
}

func (rx *receiver) run(ctx context.Context) {
	rx.ctx = ctx
	tick := time.NewTicker(rx.c.cfg.Quiet / 2)
	defer tick.Stop()
	lastExpire := rx.c.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-rx.in:
			rx.handleQueued(r)
		case <-tick.C:
			now := rx.c.cfg.Now()
			for id, due := range rx.quiet {
				if !now.Before(due) {
					delete(rx.quiet, id)
					rx.acknowledge(id)
				}
			}
			if now.Sub(lastExpire) >= expireInterval {
				lastExpire = now
				rx.incomplete(rx.reasm.Expire(now))
				rx.c.expire(now)
			}
		}
	}
}

// incomplete tells the app of messages given up before they were whole.
func (rx *receiver) incomplete(list []fragment.Incomplete) {
	for _, inc := range list {
		delete(rx.quiet, inc.ID)
		if inc.Reply {
			continue
		}
		rx.c.m.incomplete.Inc()
		rx.c.cfg.Events(Event{Kind: "incomplete", ID: inc.ID,
			Reason: "arrived incomplete: " + strconv.Itoa(inc.Received) + " of " + strconv.Itoa(inc.Total) + " fragments"})
	}
}

// maxBatch bounds the one-packet messages kept in one store transaction.
const maxBatch = 256

// handleQueued reads r and whatever else waits, in order, keeping the one-packet messages
// among them in one transaction per run of them (an fsync per message would bound a
// recipient to about a hundred messages a second).
func (rx *receiver) handleQueued(r Received) {
	var plain []store.InboxMessage
	flush := func() {
		if len(plain) > 0 {
			rx.storeBatch(plain)
			plain = plain[:0]
		}
	}
	for n := 0; ; n++ {
		if r.Plain {
			var id [16]byte
			if _, err := rand.Read(id[:]); err != nil {
				rx.c.log.Warn("message not kept", "err", err)
			} else {
				plain = append(plain, store.InboxMessage{ID: id, Received: r.ReceivedAt, SentAt: uint64(r.SentAt.UnixMilli()), Body: r.Text})
			}
			if len(plain) == maxBatch {
				flush()
			}
		} else {
			flush()
			rx.handle(r)
		}
		if n == maxBatch {
			break
		}
		select {
		case r = <-rx.in:
			continue
		default:
		}
		break
	}
	flush()
}

// handle reads one frame.
func (rx *receiver) handle(r Received) {
	c := rx.c
	f, err := fragment.Decode(r.Text)
	if err != nil {
		c.m.rxMalformed.Inc()
		return
	}
	// Acknowledgements and answers come on reply blocks this node made; fragments and
	// acknowledgement blocks as messages. Anything else is refused.
	_, isAck := f.(fragment.Ack)
	_, isReply := f.(fragment.Reply)
	if r.Reply != (isAck || isReply) {
		c.m.rxMalformed.Inc()
		return
	}
	if isAck {
		c.onAck(f.(fragment.Ack))
		return
	}
	if isReply {
		rx.answer(r, f.(fragment.Reply))
		return
	}
	id := f.MessageID()
	if frag, ok := f.(fragment.Fragment); ok {
		_, inKept := rx.kept[id]
		if _, known := rx.reasm.Status(id); !known && !inKept && rx.seen(id) {
			if len(rx.kept) >= maxRemembered {
				clear(rx.kept)
			}
			rx.kept[id] = int(frag.Count)
		}
	}
	now := c.cfg.Now()
	res, err := rx.reasm.Add(now, f)
	rx.incomplete(res.Evicted)
	if err != nil {
		c.m.rxRefused.Inc()
		return
	}
	if total, ok := rx.kept[id]; ok {
		// Kept before: the sender has not heard our acknowledgement.
		rx.acknowledgeKept(id, total)
		return
	}
	switch res.Kind {
	case fragment.Complete:
		delete(rx.quiet, id)
		if rx.store(store.InboxMessage{ID: id, Received: arrived(r, now), SentAt: uint64(r.SentAt.UnixMilli()),
			Body: res.Body, ReplyBlocks: res.Blocks}) {
			rx.acknowledge(id)
		}
	case fragment.Duplicate, fragment.AckBlock:
		if ack, ok := rx.reasm.Status(id); ok && ack.Complete {
			if rx.seen(id) { // kept: our acknowledgement was lost, the sender asks again
				rx.acknowledge(id)
			}
			return
		}
		if res.Kind == fragment.AckBlock {
			rx.quiet[id] = now.Add(c.cfg.Quiet)
		}
	default:
		rx.quiet[id] = now.Add(c.cfg.Quiet)
	}
}

// answer takes a chunk of an answer to one of this node's messages.
func (rx *receiver) answer(r Received, f fragment.Reply) {
	c := rx.c
	if _, ok, err := c.cfg.Store.GetOutbox(f.ID); err != nil || !ok {
		c.m.rxMalformed.Inc() // not an answer to a message of ours
		return
	}
	now := c.cfg.Now()
	res, err := rx.reasm.Add(now, f)
	if err != nil || res.Kind != fragment.Complete {
		return
	}
	rx.store(store.InboxMessage{ID: answerID(f.ID, f.Seq), Received: arrived(r, now), SentAt: uint64(r.SentAt.UnixMilli()),
		Body: res.Body, Reply: true, InReplyTo: f.ID})
}

// answerID names answer seq to message id in the inbox.
func answerID(id fragment.ID, seq uint8) [16]byte {
	h := sha256.Sum256(append(append([]byte("relayd answer"), id[:]...), seq))
	return [16]byte(h[:16])
}

// seen tells whether a message of this id was already stored (before a restart, or read by the
// app since).
func (rx *receiver) seen(id fragment.ID) bool {
	ok, err := rx.c.cfg.Store.SeenInbox(id)
	return err == nil && ok
}

// store keeps a whole message in the inbox and tells the app; false when the inbox refused it.
func (rx *receiver) store(m store.InboxMessage) bool {
	return rx.storeBatch([]store.InboxMessage{m})[0]
}

// storeBatch keeps messages in the inbox in one transaction and tells the app of each; it
// reports which the inbox took (stored now or before).
func (rx *receiver) storeBatch(ms []store.InboxMessage) []bool {
	kept := make([]bool, len(ms))
	res, err := rx.c.cfg.Store.PutInboxBatch(ms)
	for i, m := range ms {
		var r store.InboxPut
		if err == nil {
			r = res[i]
		} else {
			r.Err = err
		}
		kept[i] = rx.stored(m, r.Seq, r.Dup, r.Err)
	}
	return kept
}

// stored counts and reports one message's put.
func (rx *receiver) stored(m store.InboxMessage, seq uint64, dup bool, err error) bool {
	c := rx.c
	if err != nil {
		c.m.inboxRefused.Inc()
		if errors.Is(err, store.ErrInboxFull) {
			c.log.Warn("inbox full: a message was refused; the app should read or delete messages")
		} else {
			c.log.Warn("inbox write failed", "err", err)
		}
		return false
	}
	if dup {
		c.m.duplicates.Inc()
		return true
	}
	m.Seq = seq
	c.m.received.Inc()
	c.cfg.Events(Event{Kind: "received", ID: m.ID, Message: m})
	return true
}

// acknowledgeKept answers the sender of a message kept before: complete.
func (rx *receiver) acknowledgeKept(id fragment.ID, total int) {
	block, round, ok := rx.reasm.TakeAckBlock(id)
	if !ok {
		return
	}
	rx.sendAck(block, fragment.Ack{ID: id, Round: round, Total: uint16(total), Complete: true})
}

// acknowledge answers the sender of message id with what this node holds of it, on one of the
// acknowledgement blocks it sent; without a block it waits for the next.
func (rx *receiver) acknowledge(id fragment.ID) {
	block, round, ok := rx.reasm.TakeAckBlock(id)
	if !ok {
		return
	}
	ack, ok := rx.reasm.Status(id)
	if !ok {
		return
	}
	ack.Round = round
	rx.sendAck(block, ack)
}

// sendAck sends ack on block, in the background.
func (rx *receiver) sendAck(block []byte, ack fragment.Ack) {
	text, err := ack.Encode()
	if err == nil && len(text) > rx.c.cfg.ReplyCapacity {
		err = fmt.Errorf("%d bytes do not fit a reply", len(text))
	}
	if err != nil {
		rx.c.log.Warn("acknowledgement not encoded", "err", err)
		return
	}
	select {
	case rx.sends <- struct{}{}:
	default:
		rx.c.m.acksSkipped.Inc()
		return
	}
	go func() {
		defer func() { <-rx.sends }()
		ctx, cancel := context.WithTimeout(rx.ctx, 30*time.Second)
		defer cancel()
		if err := rx.c.cfg.Network.SendReply(ctx, block, text); err != nil {
			rx.c.m.acksFailed.Inc()
			return
		}
		rx.c.m.acksSent.Inc()
	}()
}

// Keep stores a one-packet message of today's kind (not framed) in the inbox and tells the app
// (a "received" event), in delivery order with the framed ones. It never blocks.
func (c *Courier) Keep(body []byte, sentAt, receivedAt time.Time) {
	c.Receive(Received{Text: body, SentAt: sentAt, ReceivedAt: receivedAt, Plain: true})
}

// arrived is when the packet that completed a message was peeled (the relay's clock), or now
// when the caller did not say.
func arrived(r Received, now time.Time) time.Time {
	if r.ReceivedAt.IsZero() {
		return now
	}
	return r.ReceivedAt
}
