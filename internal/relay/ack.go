package relay

import (
	"context"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/por"
)

// The acknowledging stage: the next hop's acknowledgement settles a pending packet; relayers'
// acknowledged tickets are committed to Payments in batches; packets never acknowledged expire.

// settleUnacked ends a pending entry that will not be acknowledged.
func (r *Relay) settleUnacked(e *pendingEntry) {
	switch {
	case e.sent():
		r.pend.settleSent(e, sentExpired)
	case e.paid:
		r.cfg.Payments.Neglect(e.prev, &e.ticket)
		r.m.ticketsNeglected.Inc()
	}
}

// handleAck processes one ack frame: find the pending packet, check the acknowledgement,
// and turn the ticket into an acknowledged one.
func (r *Relay) handleAck(from peer.ID, frame []byte) {
	id, ack, err := decodeAckFrame(frame)
	if err != nil {
		r.dropAck(from, reasonOf(err), err)
		return
	}
	e := r.pend.get(id)
	if e == nil {
		r.dropAck(from, reasonUnknownAck, ErrUnknownAck)
		return
	}
	if e.next != from {
		r.dropAck(from, reasonWrongPeer, ErrBadAck)
		return
	}
	// The sender knows the ack scalar it expects; a relayer checks it against the commitment
	// in its routing information (one hash).
	if e.sent() && !por.EqualScalars(ack, e.ack) || !e.sent() && por.CommitAck(ack) != e.commitment {
		r.dropAck(from, reasonBadAck, ErrBadAck)
		return
	}
	if !r.pend.remove(id, e) {
		r.dropAck(from, reasonUnknownAck, ErrUnknownAck) // expired or acknowledged meanwhile
		return
	}
	r.m.acksReceived.Inc()
	switch {
	case e.sent():
		r.pend.settleSent(e, sentAcked)
		if r.cfg.OnAck != nil {
			r.cfg.OnAck(e.challenge)
		}
	case e.paid:
		// Blocking: acknowledged tickets are money. The committer drains until Run ends.
		r.acked.push(ledger.AckedTicket{Source: e.prev, Ticket: e.ticket, Response: por.Response(e.own, ack)})
	}
}

// runCommitter hands acknowledged tickets to Payments in batches until r.acked is closed and
// drained: group commit. A batch is written ackCommitWindow after its first ticket arrived, and
// no sooner than ackCommitWindow after the previous batch (ackQueue.next), up to ackBatchMax in
// one fsynced store transaction. No ticket is reported before it is on disk.
func (r *Relay) runCommitter(ctx context.Context) {
	batch := make([]ledger.AckedTicket, 0, ackBatchMax)
	for {
		var closed bool
		batch, closed = r.acked.next(batch, ackBatchMax, ackCommitWindow)
		if len(batch) == 0 && closed {
			return
		}
		if len(batch) > 0 {
			r.commit(ctx, batch)
		}
	}
}

func (r *Relay) commit(ctx context.Context, batch []ledger.AckedTicket) {
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := r.cfg.Payments.Acknowledge(ctx, batch)
		if err == nil {
			r.m.ticketsAcked.Add(float64(len(batch)))
			return
		}
		r.log.Error("relay: recording acknowledged tickets failed", slog.Int("tickets", len(batch)),
			slog.Int("attempt", attempt), slog.Any("err", err))
		if attempt == 10 {
			return
		}
		t := r.clock.NewTimer(backoff)
		<-t.C()
		backoff = min(2*backoff, 5*time.Second)
	}
}

// runExpiry neglects pending packets whose acknowledgement did not come in AckTimeout.
func (r *Relay) runExpiry(ctx context.Context) {
	every := max(r.cfg.AckTimeout/8, time.Millisecond)
	t := r.clock.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, e := range r.pend.expire(r.clock.Now()) {
				r.settleUnacked(e)
			}
			t.Reset(every)
		}
	}
}
