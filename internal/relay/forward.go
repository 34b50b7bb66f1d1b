package relay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/tickets"
)

// The forwarding stage: a peeled packet waits its mixing delay, then the next hop's ticket is
// issued and the packet sent on under that hop's lock.

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

// dispatchForward hands a due packet to the worker of its next hop.
func (r *Relay) dispatchForward(f forward) {
	if err := r.enqueue(f.next.id, job{kind: jobForward, f: f}); err != nil {
		r.dropForward(f, reasonForQueue(err), err)
	}
}

// forward issues the next hop's ticket and sends the packet. Issue and send happen under the
// next hop's lock, so tickets reach it in index order.
func (r *Relay) forward(ctx context.Context, f forward) {
	mu := &r.fwdLocks[r.shard(f.next.id)%fwdStripes]
	mu.Lock()
	defer mu.Unlock()
	var tp *tickets.Ticket
	if r.paid {
		t, err := r.cfg.Payments.IssueTicket(ctx, f.next.addr, &f.amount, f.challenge)
		if err != nil {
			reason := reasonIssue
			if errors.Is(err, ledger.ErrNotEnoughBalance) || errors.Is(err, ledger.ErrChannelNotOpen) || errors.Is(err, ledger.ErrChannelNotFound) {
				reason = reasonNoBalance
			}
			r.dropForward(f, reason, err)
			return
		}
		tp = &t
	}
	if err := r.sendPacket(ctx, f.next.id, f.pkt, tp); err != nil {
		r.dropForward(f, reasonSend, err)
		return
	}
	r.m.forwarded.Inc()
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
