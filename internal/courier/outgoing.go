package courier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/fragment"
	"github.com/relayd/relayd/internal/store"
)

// Retries of one packet within a round, when the network refuses it for the moment (a full
// queue, a channel being refreshed).
const (
	frameTries    = 3
	frameRetryMin = 50 * time.Millisecond
)

// deliver runs one outgoing message to its end: delivered, failed, or ctx ended (it resumes at
// the next Run). Every step is written to the outbox before the next one starts.
func (c *Courier) deliver(ctx context.Context, id [16]byte) {
	m, ok, err := c.cfg.Store.GetOutbox(id)
	if err != nil || !ok {
		c.log.Warn("outgoing message unreadable", "err", err)
		return
	}
	if m.State == StateDelivered || m.State == StateFailed {
		return
	}
	recipient, err := peer.Decode(m.Recipient)
	if err != nil {
		c.finish(id, StateFailed, "the recipient is not a valid PeerId")
		return
	}
	acks := make(chan fragment.Ack, 8)
	c.mu.Lock()
	c.waiting[id] = acks
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()

	blocks, err := c.appBlocks(ctx, recipient, &m)
	if err != nil {
		if ctx.Err() == nil {
			c.finish(id, StateFailed, "no reply block could be built: "+reason(err))
		}
		return
	}
	frags, err := fragment.Split(fragment.ID(id), m.Body, blocks, c.cfg.Capacity)
	if err != nil {
		c.finish(id, StateFailed, err.Error())
		return
	}
	// The recipient's newest acknowledgement (the highest round) says what it holds now: it
	// keeps an incomplete message in memory only, so after a restart it may hold less than an
	// older acknowledgement said. What is missing from the newest is sent again, and only a
	// complete acknowledgement (sent once the message is in its inbox) delivers.
	out := &holding{total: len(frags)}
	if len(m.Acked) > 0 { // acknowledged before a restart: a start, corrected by the next ack
		out.latest = &fragment.Ack{ID: fragment.ID(id), Total: uint16(len(frags)), Bitmap: m.Acked}
	}
	wait := backoff.ExponentialBackOff{InitialInterval: 500 * time.Millisecond, RandomizationFactor: 0.3,
		Multiplier: 2, MaxInterval: 30 * time.Second}
	wait.Reset()
	last := "no acknowledgement arrived"
	for round := m.Attempts; round < c.cfg.Rounds; round++ {
		sentAt, err := c.round(ctx, recipient, id, uint16(round), frags, out)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			last = reason(err)
		}
		if err := c.cfg.Store.UpdateOutbox(id, func(o *store.OutboxMessage) error {
			o.Attempts = round + 1
			o.Fragments = len(frags)
			o.Updated = c.cfg.Now()
			if o.State == StateQueued && !sentAt.IsZero() {
				o.State = StateSent
			}
			return nil
		}); err != nil {
			c.log.Warn("outgoing message not updated", "err", err)
		}
		if sentAt.IsZero() { // nothing left: wait and try again
			if !sleep(ctx, wait.NextBackOff()) {
				return
			}
			continue
		}
		timer := time.NewTimer(c.rtt.timeout())
	await:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case ack := <-acks:
				if ack.Round == uint16(round) {
					c.rtt.observe(c.cfg.Now().Sub(sentAt))
				}
				if ack.Total != uint16(len(frags)) {
					continue // not an acknowledgement of this message's fragments
				}
				if out.take(ack) {
					c.saveAcked(id, out)
				}
				if ack.Complete {
					timer.Stop()
					c.finish(id, StateDelivered, "")
					return
				}
				if ack.Round == uint16(round) { // partial: resend what is missing now
					timer.Stop()
					wait.Reset()
					break await
				}
			case <-timer.C:
				c.m.timeouts.Inc()
				if !sleep(ctx, wait.NextBackOff()) {
					return
				}
				break await
			}
		}
	}
	c.finish(id, StateFailed, fmt.Sprintf("%s after %d rounds", last, c.cfg.Rounds))
}

// appBlocks returns the message's reply blocks for the app, building and storing them on the
// first call: a resent fragment must carry the same bytes as the first time.
func (c *Courier) appBlocks(ctx context.Context, recipient peer.ID, m *store.OutboxMessage) ([][]byte, error) {
	if len(m.Blocks) >= m.Replies {
		return m.Blocks, nil
	}
	blocks := m.Blocks
	for len(blocks) < m.Replies {
		b, err := c.cfg.Network.NewReplyBlock(ctx, recipient)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	if err := c.cfg.Store.UpdateOutbox(m.ID, func(o *store.OutboxMessage) error {
		o.Blocks = blocks
		return nil
	}); err != nil {
		return nil, err
	}
	m.Blocks = blocks
	return blocks, nil
}

// round sends one transmission round: a fresh acknowledgement block in parts, then every
// fragment not yet acknowledged, each over its own path. It returns when the last packet left
// (zero when none did) and the last error.
func (c *Courier) round(ctx context.Context, recipient peer.ID, id [16]byte, round uint16, frags [][]byte, out *holding) (time.Time, error) {
	var texts [][]byte
	var last error
	block, err := c.cfg.Network.NewReplyBlock(ctx, recipient)
	if err == nil {
		texts, err = fragment.AckBlockParts(fragment.ID(id), round, block, c.cfg.Capacity)
	}
	if err != nil {
		last = fmt.Errorf("no acknowledgement block: %w", err)
	}
	for _, i := range out.missing() {
		texts = append(texts, frags[i])
	}
	var sentAt time.Time
	for _, t := range texts {
		if err := c.sendFrame(ctx, recipient, t); err != nil {
			last = err
			continue
		}
		sentAt = c.cfg.Now()
		c.m.packets.Inc()
	}
	if round > 0 {
		c.m.resent.Add(float64(len(out.missing())))
	}
	return sentAt, last
}

// sendFrame sends one text, retrying a refusal a few times.
func (c *Courier) sendFrame(ctx context.Context, recipient peer.ID, text []byte) error {
	wait := backoff.ExponentialBackOff{InitialInterval: frameRetryMin, RandomizationFactor: 0.3, Multiplier: 2,
		MaxInterval: time.Second}
	wait.Reset()
	var err error
	for range frameTries {
		if err = c.cfg.Network.SendFrame(ctx, recipient, text); err == nil || ctx.Err() != nil {
			return err
		}
		if !sleep(ctx, wait.NextBackOff()) {
			return ctx.Err()
		}
	}
	return err
}

// holding is what the recipient holds of a message by its newest acknowledgement.
type holding struct {
	total  int
	latest *fragment.Ack
}

// take keeps ack when it is at least as new as the newest so far; it reports whether it did.
func (h *holding) take(ack fragment.Ack) bool {
	if h.latest != nil && ack.Round < h.latest.Round {
		return false // an older round's, arriving late
	}
	h.latest = &ack
	return true
}

// missing lists the fragments the newest acknowledgement does not name (all before any).
func (h *holding) missing() []int {
	var out []int
	for i := range h.total {
		if h.latest == nil || !h.latest.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// bitmap is the newest acknowledgement's bitmap, all ones when it was complete.
func (h *holding) bitmap() []byte {
	b := make([]byte, (h.total+7)/8)
	for i := range h.total {
		if h.latest != nil && h.latest.Has(i) {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// saveAcked writes what the recipient holds to the outbox.
func (c *Courier) saveAcked(id [16]byte, out *holding) {
	bitmap := out.bitmap()
	if err := c.cfg.Store.UpdateOutbox(id, func(o *store.OutboxMessage) error {
		o.Acked = bitmap
		o.Fragments = out.total
		return nil
	}); err != nil {
		c.log.Warn("outgoing message not updated", "err", err)
	}
}

// finish records a message's end and tells the app.
func (c *Courier) finish(id [16]byte, state, why string) {
	if err := c.cfg.Store.UpdateOutbox(id, func(o *store.OutboxMessage) error {
		o.State, o.Reason, o.Updated = state, why, c.cfg.Now()
		return nil
	}); err != nil {
		c.log.Warn("outgoing message not updated", "err", err)
	}
	if state == StateDelivered {
		c.m.delivered.Inc()
	} else {
		c.m.failed.Inc()
		c.log.Info("message failed", "reason", why)
	}
	c.cfg.Events(Event{Kind: state, ID: id, Reason: why})
}

// onAck hands an acknowledgement to the message waiting for it.
func (c *Courier) onAck(a fragment.Ack) {
	c.mu.Lock()
	ch := c.waiting[a.ID]
	c.mu.Unlock()
	if ch == nil {
		c.m.acksUnmatched.Inc()
		return
	}
	select {
	case ch <- a:
	default: // the message has acks enough to read
	}
}

// sleep waits d or until ctx ends; false when it ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d == backoff.Stop {
		d = 30 * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// reason is an error's text for the app: the first sentinel's words, no routes.
func reason(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
