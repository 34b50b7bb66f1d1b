package ledger

import (
	"context"
	"log/slog"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// closingQueue bounds the closing incoming channels waiting for AutoRedeem.
const closingQueue = 256

// OnEvent follows what the indexer reports (chain.IndexerConfig.OnEvent) for the tickets: the
// network's minimum win probability; this node's channel changes, which it logs; tickets whose
// redemption a reorganisation undid, which it puts back; and incoming channels that start
// closing, which it hands to AutoRedeem (Closing). It must not block: it is called from the
// indexer's goroutine.
func (l *Ledger) OnEvent(ev chain.Event) {
	switch ev.Kind {
	case chain.MinWinProbEvent:
		l.SetMinWinProb(ev.MinWinProb)
		l.log.Info("network minimum win probability changed", "minWinProb", tickets.FormatWinProb(ev.MinWinProb))
	case chain.ChannelEvent:
		l.onChannel(ev)
	}
}

func (l *Ledger) onChannel(ev chain.Event) {
	c := ev.Channel
	if c.Source != l.self && c.Destination != l.self {
		return
	}
	incoming := c.Destination == l.self
	if ev.Reorg && incoming && ev.Previous != nil && ev.Previous.TicketIndex > c.TicketIndex {
		// Redemptions of ours may have been in the blocks the reorganisation dropped.
		if _, err := l.RolledBack(c); err != nil {
			l.log.Error("reorganisation: putting back unpaid tickets failed", "err", err)
		}
	}
	dir, other := "outgoing", c.Destination
	if incoming {
		dir, other = "incoming", c.Source
	}
	// A status change is news; a balance change within a state (every redeemed ticket makes one)
	// is detail, or a redemption of 150 tickets would log 150 lines.
	level := slog.LevelInfo
	if ev.Previous != nil && ev.Previous.Status == c.Status && ev.Previous.Epoch == c.Epoch {
		level = slog.LevelDebug
	}
	l.log.Log(context.Background(), level, "channel updated", "direction", dir, "counterparty", other,
		"status", c.Status.String(), "balance", token.Of(c.Balance).String(), "epoch", c.Epoch)
	if incoming && c.Status == channels.PendingToClose && (ev.Previous == nil || ev.Previous.Status != channels.PendingToClose) {
		select {
		case l.closing <- c.Source: // its tickets are void once it is closed
		default:
			l.log.Warn("auto-redeem: too many channels closing at once; this one's tickets wait for the next check", "counterparty", other)
		}
	}
}

// Closing receives the source of every incoming channel that starts closing (OnEvent), for
// AutoRedeem.
func (l *Ledger) Closing() <-chan common.Address { return l.closing }
