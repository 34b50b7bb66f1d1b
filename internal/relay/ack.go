package relay

import (
	"context"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/health"
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
	// in its routing information (one hash), and so does a replier against the reply block's.
	if e.sent() && !e.opens(ack) || !e.sent() && por.CommitAck(ack) != e.commitment {
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
// one fsynced store transaction. No ticket is reported before it is on disk. run ends when the
// relay stops; the commits outlive it (commit).
func (r *Relay) runCommitter(run context.Context) {
	batch := make([]ledger.AckedTicket, 0, ackBatchMax)
	var giveUp time.Time // when the retries of a refused commit end, once run ended
	for {
		var closed bool
		batch, closed = r.acked.next(batch, ackBatchMax, ackCommitWindow)
		if len(batch) == 0 && closed {
			return
		}
		if len(batch) > 0 {
			r.commit(run, batch, &giveUp)
		}
	}
}

// Retries of a commit the store refused: exponential, from commitRetryMin to commitRetryMax with
// jitter, for as long as the relay runs and commitGrace after it stopped (all batches together).
const (
	commitRetryMin = 10 * time.Millisecond
	commitRetryMax = 5 * time.Second
	commitGrace    = 10 * time.Second
)

// commit records batch with Payments. When the store refuses (a full or failing disk), the
// tickets are kept and the commit retried, and meanwhile the relay refuses new paid packets
// (StoreFailing, Checks): acknowledged tickets are money, and a relayer that cannot record what it
// earns must not go on paying the next hops. Once the relay stopped, commit tries for commitGrace
// more in all (*giveUp), then gives up, saying how many tickets were lost.
func (r *Relay) commit(run context.Context, batch []ledger.AckedTicket, giveUp *time.Time) {
	ctx := context.WithoutCancel(run)
	retry := backoff.ExponentialBackOff{InitialInterval: commitRetryMin, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: commitRetryMax}
	retry.Reset()
	for attempt := 1; ; attempt++ {
		err := r.cfg.Payments.Acknowledge(ctx, batch)
		if err == nil {
			r.m.ticketsAcked.Add(float64(len(batch)))
			if r.storeFailing.CompareAndSwap(true, false) {
				r.log.Info("relay: the store takes acknowledged tickets again; paid packets are accepted again")
			}
			return
		}
		if r.storeFailing.CompareAndSwap(false, true) || attempt%100 == 0 {
			r.log.Error("relay: recording acknowledged tickets failed; keeping them and refusing paid packets until the store takes them",
				slog.Int("tickets", len(batch)), slog.Int("attempt", attempt), slog.Any("err", err))
		}
		now := r.clock.Now()
		if run.Err() != nil {
			if giveUp.IsZero() {
				*giveUp = now.Add(commitGrace)
			}
			if !now.Before(*giveUp) {
				r.log.Error("relay: stopping with acknowledged tickets the store refused: their pay is lost",
					slog.Int("tickets", len(batch)), slog.Any("err", err))
				return
			}
		}
		t := r.clock.NewTimer(retry.NextBackOff())
		<-t.C()
	}
}

// StoreFailing reports whether the store refuses the acknowledged tickets (the relay then refuses
// new paid packets until it takes them).
func (r *Relay) StoreFailing() bool { return r.storeFailing.Load() }

// Checks reports the relay's readiness (health.Checker): not ready while the store refuses
// acknowledged tickets. The detail names no file: /readyz is served without a token.
func (r *Relay) Checks(context.Context) []health.Check {
	if r.storeFailing.Load() {
		return []health.Check{{Name: "relay", Detail: "the store refuses writes (a full or failing disk): acknowledged tickets wait in memory and paid packets are refused"}}
	}
	return []health.Check{{Name: "relay", Ready: true, Detail: "recording acknowledged tickets"}}
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
