package courier

import (
	"context"
	"errors"
	"fmt"

	"github.com/relayd/relayd/internal/fragment"
	"github.com/relayd/relayd/internal/store"
)

// Reply answers the inbox message seq anonymously, on the reply blocks that came with it: one
// block a packet, each used once (taken from the store before it is used, so a block is never
// used twice, also across a crash). The answer is sent best effort: a reply block cannot carry
// an acknowledgement back. It returns the answer's id and how many blocks are left.
func (c *Courier) Reply(ctx context.Context, seq uint64, body []byte) ([16]byte, int, error) {
	var id [16]byte
	if len(body) == 0 {
		return id, 0, ErrEmpty
	}
	m, ok, err := c.cfg.Store.GetInbox(seq)
	if err != nil {
		return id, 0, storeError(err)
	}
	if !ok {
		return id, 0, ErrNotFound
	}
	left := len(m.ReplyBlocks)
	if left == 0 {
		return id, 0, ErrNoReplyBlock
	}
	// The answer's number: unique among this message's answers, as every answer takes blocks.
	number := uint8(fragment.MaxReplyBlocks - left)
	texts, err := fragment.SplitReply(fragment.ID(m.ID), number, body, c.cfg.ReplyCapacity)
	if err != nil {
		return id, 0, fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	id = answerID(fragment.ID(m.ID), number)
	if len(texts) > left {
		return id, left, fmt.Errorf("%w: the answer needs %d packets, %d reply blocks are left", ErrReplyTooLarge, len(texts), left)
	}
	for _, t := range texts {
		block, n, err := c.cfg.Store.TakeReplyBlock(seq)
		if errors.Is(err, store.ErrNoReplyBlock) {
			return id, 0, ErrNoReplyBlock // another answer took them meanwhile
		}
		if err != nil {
			return id, left, storeError(err)
		}
		left = n
		if err := c.cfg.Network.SendReply(ctx, block, t); err != nil {
			return id, left, err
		}
		c.m.repliesSent.Inc()
	}
	return id, left, nil
}
