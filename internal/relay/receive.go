package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// The receiving stage: frames from the transport are queued for the worker of their sender, peeled,
// their tickets checked, then acknowledged to the previous hop and handed to the mixing stage,
// or delivered when this node is the recipient.

// onMsg runs on the transport's read loop: it copies the frame and queues it for the sender's
// worker (one peer's frames stay in order).
func (r *Relay) onMsg(from peer.ID, frame []byte) {
	r.m.received.Inc()
	if len(frame) != MsgFrameLen && len(frame) != PaidMsgFrameLen {
		r.dropPacket(from, reasonFrameSize, ErrFrameSize)
		return
	}
	buf := r.bufs.Get().(*[PaidMsgFrameLen]byte)
	n := copy(buf[:], frame)
	if err := r.enqueue(from, job{kind: jobMsg, from: from, buf: buf, n: n}); err != nil {
		r.bufs.Put(buf)
		r.dropPacket(from, reasonForQueue(err), err)
	}
}

// onAck runs on the transport's read loop.
func (r *Relay) onAck(from peer.ID, frame []byte) {
	if len(frame) != AckFrameLen {
		r.dropAck(from, reasonFrameSize, ErrFrameSize)
		return
	}
	j := job{kind: jobAck, from: from}
	copy(j.ack[:], frame)
	if err := r.enqueue(from, j); err != nil {
		r.dropAck(from, reasonForQueue(err), err)
	}
}

func reasonForQueue(err error) string {
	if errors.Is(err, errStopped) {
		return reasonStopped
	}
	return reasonOverload
}

func (r *Relay) dropPacket(from peer.ID, reason string, err error) {
	r.m.dropped.WithLabelValues(reason).Inc()
	r.log.Debug("relay: packet dropped", slog.String("peer_id", from.String()), slog.String("reason", reason), slog.Any("err", err))
}

func (r *Relay) dropAck(from peer.ID, reason string, err error) {
	r.m.acksDropped.WithLabelValues(reason).Inc()
	r.log.Debug("relay: acknowledgement dropped", slog.String("peer_id", from.String()), slog.String("reason", reason), slog.Any("err", err))
}

// handleMsg processes one msg frame (docs/PROTOCOL.md §5.4): peel, check the ticket, then
// deliver, or acknowledge and forward after the mixing delay.
func (r *Relay) handleMsg(ctx context.Context, from peer.ID, frame []byte) {
	pkt, tb, err := decodeMsgFrame(frame)
	if err != nil {
		r.dropPacket(from, reasonOf(err), err)
		return
	}
	if r.paid && r.storeFailing.Load() {
		r.dropPacket(from, reasonStoreFailing, errStoreFailing)
		return
	}
	p, err := packet.Peel(r.key, pkt, r.clock.Now(), r.cfg.Replay)
	var payloadErr error
	if err != nil {
		if !p.Final || !errors.Is(err, packet.ErrPayload) {
			r.dropPacket(from, reasonOf(err), err)
			return
		}
		// For this node, with a valid header, but its payload does not open (altered on the
		// way: relayers do not authenticate it) or decode: acknowledged and paid like any
		// packet, then dropped (receive).
		payloadErr = err
	}
	prev, err := r.peers.byPeer(from)
	if err != nil {
		r.dropPacket(from, reasonBadPeer, err)
		return
	}
	own, ack, err := por.DeriveOwnAck(p.Secret)
	if err != nil {
		r.dropPacket(from, reasonPayload, err)
		return
	}
	id := idOf(pkt)
	if p.Final {
		r.receive(from, prev, id, &p, tb, own, ack, payloadErr)
		return
	}

	next, err := r.peers.byPubKey(p.NextHop)
	if err != nil || next.id == r.self {
		r.dropPacket(from, reasonBadNextHop, err)
		return
	}
	// PoR field (PROTOCOL.md §2): T_i, the challenge this hop's ticket must carry; H(ack_{i+1}),
	// the commitment the next hop's acknowledgement must open; T_{i+1}, the challenge of the
	// ticket this hop issues. Checking them costs two comparisons and, per ack, one hash.
	now := r.clock.Now()
	e := newRelayedEntry(next.id, now.Add(r.cfg.AckTimeout), own, prev.addr)
	var want por.Challenge
	copy(want[:], p.PoR[:porChallenge])
	copy(e.commitment[:], p.PoR[porChallenge:porNext])
	f := forward{id: idOf(p.Next), entry: e, next: next, pkt: p.Next}
	copy(f.challenge[:], p.PoR[porNext:])
	if r.paid {
		if err := r.checkTicket(prev, tb, want, &e.ticket); err != nil {
			r.dropPacket(from, reasonOf(err), err)
			return
		}
		e.paid = true
		v := e.ticket.Value()
		f.amount.Sub(&v, &ledger.PricePerHop) // AcceptTicket checked the value is at least PricePerHop
	}
	if err := r.pend.add(f.id, e); err != nil {
		if e.paid {
			r.cfg.Payments.Neglect(e.prev, &e.ticket)
		}
		reason := reasonOverload
		if errors.Is(err, errDuplicate) {
			reason = reasonDuplicate
		}
		r.dropPacket(from, reason, err)
		return
	}
	// Acknowledge at once, not when forwarding: an acknowledgement sent after the delay would
	// show an observer which outgoing packet belongs to which incoming one.
	r.sendAck(ctx, from, id, ack)
	if d := r.mixDelay(); d > 0 {
		select {
		case r.delayIn <- delayed{due: now.Add(d), f: f}:
		default:
			r.dropForward(f, reasonOverload, ErrOverloaded)
		}
		return
	}
	r.forward(ctx, f)
}

// checkTicket decodes and validates a relayer's incoming ticket into t.
// The challenge must be T_i, which the sender put in this hop's routing information (where the
// previous hop can neither read nor change it): no curve arithmetic.
func (r *Relay) checkTicket(prev *peerEntry, tb []byte, want por.Challenge, t *tickets.Ticket) error {
	if tb == nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketMissing)
	}
	if err := t.UnmarshalBinary(tb); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
	}
	if want != t.Challenge {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketChallenge)
	}
	if err := r.cfg.Payments.AcceptTicket(prev.addr, t, false); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return nil
}

// receive handles a packet for which this node is the recipient. A ticket worth more than 0
// (the sender's padding, PROTOCOL.md §4.5) is acknowledged at once: the recipient knows its
// response own + end. The packet is acknowledged to the previous hop whenever its header and
// ticket are valid, also when its payload is not (payloadErr, or a reply that does not open):
// the relayers did their work, and withholding the acknowledgement would tell the last of
// them that the payload was altered on the way (PROTOCOL.md §3.4). A reply is opened with the
// keys its block left in the keyring, which are taken (a block makes one reply).
func (r *Relay) receive(from peer.ID, prev *peerEntry, id packetID, p *packet.Peeled, tb []byte, own, ack por.Scalar, payloadErr error) {
	if r.paid && tb != nil {
		t, response, err := r.checkFinalTicket(prev, tb, p.Secret, own)
		if err != nil {
			r.dropPacket(from, reasonOf(err), err)
			return
		}
		if !t.Amount.IsZero() {
			// Blocking, as for a relayer's acknowledged ticket: it is money.
			r.acked.push(ledger.AckedTicket{Source: prev.addr, Ticket: t, Response: response, Unverified: true})
		}
	}
	r.sendAck(context.Background(), from, id, ack)
	if payloadErr != nil {
		r.dropPacket(from, reasonPayload, payloadErr)
		return
	}
	msg := p.Message
	if p.Reply {
		m, reason, err := r.openReply(p)
		if err != nil {
			r.dropPacket(from, reason, err)
			return
		}
		msg = m
	}
	if msg.Drop {
		r.m.drops.Inc() // drop cover: its ticket kept, acknowledged like a message, never delivered
		return
	}
	r.m.delivered.Inc()
	if p.Reply {
		r.m.replies.Inc()
	}
	r.cfg.Deliver(Received{
		Text:       string(msg.Text),
		SentAt:     time.UnixMilli(int64(msg.Timestamp)),
		ReceivedAt: r.clock.Now(),
		Relayed:    tb != nil,
		Reply:      p.Reply,
		Framed:     msg.Framed,
	})
}

// checkFinalTicket decodes and validates the recipient's ticket and returns it with the
// response that redeems it, own + end.
func (r *Relay) checkFinalTicket(prev *peerEntry, tb []byte, secret [packet.SecretSize]byte, own por.Scalar) (tickets.Ticket, [32]byte, error) {
	var t tickets.Ticket
	if err := t.UnmarshalBinary(tb); err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
	}
	end, err := por.DeriveEnd(secret)
	if err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	// Whether own + end opens the ticket's challenge is left to the ledger (AckedTicket's
	// Unverified): it costs a scalar multiplication, worth spending only on a ticket the
	// recipient keeps, a winner.
	if err := r.cfg.Payments.AcceptTicket(prev.addr, &t, true); err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return t, por.Response(own, end), nil
}

func (r *Relay) sendAck(ctx context.Context, to peer.ID, id packetID, ack por.Scalar) {
	f := ackFrame(id, ack)
	if err := r.cfg.Transport.Send(ctx, to, p2p.ProtocolAck, f[:]); err != nil {
		r.log.Debug("relay: sending acknowledgement failed", slog.String("peer_id", to.String()), slog.Any("err", err))
		return
	}
	r.m.acksSent.Inc()
}
