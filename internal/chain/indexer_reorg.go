package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/store"
)

// rewind handles a reorganisation that removed indexed blocks (block next-1 has another hash
// now): it looks for the newest checkpoint of the undo journal whose block is still on the
// provider's chain, the common ancestor, restores the states the removed ranges replaced in the
// store (one transaction, with the cursor), then in the Graph (one step), reports them to
// OnEvent, and moves the cursor back, so that the next step indexes the new branch. A reorg that
// removed every journalled checkpoint is deeper than the journal: ErrChainReplaced, or with
// ReindexOnNewChain a re-index from StartBlock.
func (ix *Indexer) rewind(ctx context.Context, next uint64) error {
	journal, err := ix.cfg.Store.ChainJournal()
	if err != nil {
		return &storeError{err}
	}
	for _, cp := range journal { // newest first
		if cp.Block >= next {
			continue // not indexed as far as the cursor says (cannot happen; be safe)
		}
		h, err := ix.cfg.Source.HeaderHash(ctx, cp.Block)
		if err != nil {
			if isNotFound(err) {
				continue // the new branch is shorter so far: an older ancestor
			}
			return err
		}
		if h != cp.Hash {
			continue
		}
		rw, err := ix.cfg.Store.RewindChainState(cp)
		if err != nil {
			return &storeError{err}
		}
		ix.restore(cp, rw)
		ix.log.Warn("chain reorganisation removed indexed blocks; rolled back to the common ancestor",
			"removedFrom", cp.Block+1, "indexedTo", next-1, "channels", len(rw.Channels), "announcements", len(rw.Announcements))
		return nil
	}
	return ix.replaced(fmt.Sprintf("a reorganisation removed indexed block %d and every block of the undo journal (%d blocks deep)", next-1, ix.cfg.ReorgDepth))
}

// restore applies a store rewind to the Graph, moves the cursor back to cp and reports the
// restored states to OnEvent (Event.Reorg).
func (ix *Indexer) restore(cp store.ChainCheckpoint, rw store.ChainRewind) {
	var (
		chans     []channels.Channel
		anns      []channels.Announcement
		goneChans [][32]byte
		goneAnns  []common.Address
		events    []Event
	)
	for _, c := range rw.Channels {
		prev := c.Undone
		ev := Event{Kind: ChannelEvent, Block: cp.Block, Previous: &prev, Reorg: true}
		if c.Restored != nil {
			chans = append(chans, *c.Restored)
			ev.Channel = *c.Restored
		} else {
			goneChans = append(goneChans, c.Undone.ID)
			// What the contract reports for a channel never opened.
			ev.Channel = channels.Channel{ID: c.Undone.ID, Source: c.Undone.Source, Destination: c.Undone.Destination,
				Balance: new(big.Int), Status: channels.Closed}
		}
		events = append(events, ev)
	}
	for _, a := range rw.Announcements {
		ev := Event{Kind: AnnouncementEvent, Block: cp.Block, Reorg: true}
		if a.Restored != nil {
			anns = append(anns, *a.Restored)
			ev.Announcement = *a.Restored
		} else {
			goneAnns = append(goneAnns, a.Undone.Account)
			ev.Announcement = channels.Announcement{Account: a.Undone.Account}
		}
		events = append(events, ev)
	}
	ix.cfg.Graph.Restore(chans, anns, goneChans, goneAnns)
	ix.persisted = cp.Block + 1
	defer ix.setNext(cp.Block+1, cp.Hash)
	if ix.cfg.OnEvent != nil {
		for _, ev := range events {
			ix.cfg.OnEvent(ev)
		}
	}
}
