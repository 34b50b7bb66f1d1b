package relay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// The forwarding stage: a peeled packet waits its mixing delay, then the next hop's ticket is
// issued and the packet sent on in that hop's line (turns.go).

// mixDelay draws a packet's mixing delay: Min plus an exponential draw of mean Mean capped at
// Max, or, without a mean, uniform in [Min, Max] (Mixing).
func (r *Relay) mixDelay() time.Duration {
	m := r.currentMixing()
	lo, hi := m.Min, m.Max
	if hi <= lo {
		return lo
	}
	var b [8]byte
	if _, err := io.ReadFull(r.rand, b[:]); err != nil {
		return hi
	}
	x := binary.LittleEndian.Uint64(b[:])
	if mean := m.Mean; mean > 0 {
		u := (float64(x>>11) + 1) / (1 << 53) // uniform in (0, 1]
		d := lo + time.Duration(-math.Log(u)*float64(mean))
		return min(d, hi)
	}
	return lo + time.Duration(x%uint64(hi-lo+1))
}

// dispatchForward hands a due packet to the workers.
func (r *Relay) dispatchForward(f forward) {
	if err := r.enqueue(job{kind: jobForward, f: f}); err != nil {
		r.dropForward(f, reasonForQueue(err), err)
	}
}

// forward issues the next hop's ticket and sends the packet (sendPaid), or, unpaid, sends it.
func (r *Relay) forward(ctx context.Context, f forward) {
	var err error
	if r.paid {
		var issued bool
		_, issued, err = r.sendPaid(ctx, f.next, f.pkt, &f.amount, f.challenge)
		noChannel := errors.Is(err, ledger.ErrChannelNotOpen) || errors.Is(err, ledger.ErrChannelNotFound)
		switch {
		case !issued && noChannel && f.amount.IsZero() && r.layered():
			// The last layer to a recipient: a ticket worth 0 needs no channel (Config.Layered).
			err = r.sendPacket(ctx, f.next.id, f.pkt, nil)
		case !issued:
			reason := reasonIssue
			if noChannel || errors.Is(err, ledger.ErrNotEnoughBalance) {
				reason = reasonNoBalance
			}
			r.dropForward(f, reason, err)
			return
		}
	} else {
		err = r.sendPacket(ctx, f.next.id, f.pkt, nil)
	}
	if err != nil {
		r.dropForward(f, reasonSend, err)
		return
	}
	r.m.forwarded.Inc()
}

// sendPaid issues a ticket of expected value amount with challenge to hop to and sends pkt with
// it. Tickets reach a hop in index order, the only order it accepts: the index is taken with a
// place in the hop's line, the ticket signed outside it (in parallel with other workers' when
// Payments is split), and the frame sent in its turn. issued reports whether the ticket was
// issued: err is then the send's.
func (r *Relay) sendPaid(ctx context.Context, to *peerEntry, pkt []byte, amount *uint256.Int, challenge por.Challenge) (t tickets.Ticket, issued bool, err error) {
	lane := r.outLane(to.id)
	lane.mu.Lock()
	if r.split != nil {
		t, err = r.split.ReserveTicket(ctx, to.addr, amount, challenge)
	} else {
		t, err = r.cfg.Payments.IssueTicket(ctx, to.addr, amount, challenge)
	}
	if err != nil {
		lane.mu.Unlock()
		return t, false, err
	}
	place := lane.next
	lane.next++
	lane.mu.Unlock()
	if r.split != nil {
		err = r.split.SignTicket(&t)
	}
	lane.wait(place)
	if err == nil {
		err = r.sendPacket(ctx, to.id, pkt, &t)
	}
	lane.done(place)
	return t, true, err
}

func (r *Relay) sendPacket(ctx context.Context, to peer.ID, pkt []byte, t *tickets.Ticket) error {
	buf := r.bufs.Get().(*[PaidMsgFrameLen]byte)
	defer r.bufs.Put(buf)
	frame, err := appendMsgFrame(buf[:0], pkt, t)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	return r.cfg.Transport.Send(ctx, to, p2p.ProtocolMsg, frame)
}

// dropForward gives up a packet that was accepted but cannot be forwarded.
func (r *Relay) dropForward(f forward, reason string, err error) {
	r.dropPacket(f.next.id, reason, err)
	if f.entry != nil && r.pend.remove(f.id, f.entry) {
		r.settleUnacked(f.entry)
	}
}
