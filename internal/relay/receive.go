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

// The receiving stage: frames from the transport are queued for the workers, peeled, their
// tickets checked (accepted in the order they came from their sender: turns.go), then
// acknowledged to the previous hop and handed to the mixing stage, or delivered when this node
// is the recipient.

// onMsg runs on the transport's read loop: it copies the frame and queues it for the workers
// with its place in its sender's line.
func (r *Relay) onMsg(from peer.ID, frame []byte) {
	r.m.received.Inc()
	if len(frame) != MsgFrameLen && len(frame) != PaidMsgFrameLen {
		r.dropPacket(from, reasonFrameSize, ErrFrameSize)
		return
	}
	buf := r.bufs.Get().(*[PaidMsgFrameLen]byte)
	n := copy(buf[:], frame)
	// The place is taken and the job queued under the line's lock, so that the shared queue
	// holds each line's places in order: a worker waiting for its turn waits only for packets
	// other workers already took.
	lane := r.inLane(from)
	lane.mu.Lock()
	err := r.enqueue(job{kind: jobMsg, from: from, buf: buf, n: n, place: lane.next})
	if err == nil {
		lane.next++
	}
	lane.mu.Unlock()
	if err != nil {
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
	if err := r.enqueue(j); err != nil {
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

// handleMsg processes one msg frame from a caller other than the workers (tests): it takes the
// frame's place in its sender's line at once.
func (r *Relay) handleMsg(ctx context.Context, from peer.ID, frame []byte) {
	lane := r.inLane(from)
	lane.mu.Lock()
	place := lane.next
	lane.next++
	lane.mu.Unlock()
	r.handleMsgAt(ctx, from, frame, place)
}

// inbound is a msg frame between the stages of handleMsgAt.
type inbound struct {
	from       peer.ID
	tb         []byte // the ticket's bytes, nil without one
	p          packet.Peeled
	payloadErr error
	prev       *peerEntry
	own, ack   por.Scalar
	id         packetID
	final      bool
	// ticket is tb decoded and its signature verified, when verified (split payments only).
	ticket   tickets.Ticket
	verified bool
	// relayed packets
	next *peerEntry
	want por.Challenge
}

// handleMsgAt processes one msg frame (docs/PROTOCOL.md §5.4) that holds place in its sender's
// line: peel and verify the ticket's signature in parallel with other workers, accept the
// ticket in the line's order, then deliver, or acknowledge and forward after the mixing delay.
func (r *Relay) handleMsgAt(ctx context.Context, from peer.ID, frame []byte, place uint64) {
	var in inbound
	ok := r.peelMsg(from, frame, &in)
	lane := r.inLane(from)
	lane.wait(place)
	var e *pendingEntry
	var f forward
	var t tickets.Ticket
	var response [32]byte
	if ok {
		if in.final {
			t, response, ok = r.acceptFinal(&in)
		} else {
			e, f, ok = r.acceptRelayed(&in)
		}
	}
	lane.done(place)
	switch {
	case !ok:
	case in.final:
		r.receive(&in, t, response)
	default:
		r.relayOn(ctx, &in, e, f)
	}
}

// peelMsg decodes and peels frame, and, for split payments, verifies its ticket's signature:
// what needs no order. It drops the packet and returns false when it cannot go on.
func (r *Relay) peelMsg(from peer.ID, frame []byte, in *inbound) bool {
	in.from = from
	pkt, tb, err := decodeMsgFrame(frame)
	if err != nil {
		r.dropPacket(from, reasonOf(err), err)
		return false
	}
	in.tb = tb
	if r.paid && r.storeFailing.Load() {
		r.dropPacket(from, reasonStoreFailing, errStoreFailing)
		return false
	}
	p, err := packet.Peel(r.key, pkt, r.clock.Now(), r.cfg.Replay)
	if err != nil {
		if !p.Final || !errors.Is(err, packet.ErrPayload) {
			r.dropPacket(from, reasonOf(err), err)
			return false
		}
		// For this node, with a valid header, but its payload does not open (altered on the
		// way: relayers do not authenticate it) or decode: acknowledged and paid like any
		// packet, then dropped (receive).
		in.payloadErr = err
	}
	in.p = p
	if in.prev, err = r.peers.byPeer(from); err != nil {
		r.dropPacket(from, reasonBadPeer, err)
		return false
	}
	if in.own, in.ack, err = por.DeriveOwnAck(p.Secret); err != nil {
		r.dropPacket(from, reasonPayload, err)
		return false
	}
	in.id = idOf(pkt)
	in.final = p.Final
	if !p.Final {
		next, err := r.peers.byPubKey(p.NextHop)
		if err != nil || next.id == r.self {
			r.dropPacket(from, reasonBadNextHop, err)
			return false
		}
		in.next = next
		// PoR field (PROTOCOL.md §2): T_i, the challenge this hop's ticket must carry.
		copy(in.want[:], p.PoR[:porChallenge])
	}
	if !r.paid || tb == nil || r.split == nil {
		return true
	}
	if err := in.ticket.UnmarshalBinary(tb); err != nil {
		err = fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
		r.dropPacket(from, reasonOf(err), err)
		return false
	}
	if !in.final && in.want != in.ticket.Challenge {
		err := fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketChallenge)
		r.dropPacket(from, reasonOf(err), err)
		return false
	}
	if err := r.split.VerifyTicket(in.prev.addr, &in.ticket); err != nil {
		err = fmt.Errorf("%w: %w", ErrInvalidTicket, err)
		r.dropPacket(from, reasonOf(err), err)
		return false
	}
	in.verified = true
	return true
}

// acceptRelayed accepts the ticket of a packet to relay, in its line's order, and prepares its
// pending entry and forward.
func (r *Relay) acceptRelayed(in *inbound) (*pendingEntry, forward, bool) {
	p := &in.p
	// PoR field (PROTOCOL.md §2): T_i, the challenge this hop's ticket must carry; H(ack_{i+1}),
	// the commitment the next hop's acknowledgement must open; T_{i+1}, the challenge of the
	// ticket this hop issues. Checking them costs two comparisons and, per ack, one hash.
	now := r.clock.Now()
	e := newRelayedEntry(in.next.id, now.Add(r.cfg.AckTimeout), in.own, in.prev.addr)
	copy(e.commitment[:], p.PoR[porChallenge:porNext])
	f := forward{id: idOf(p.Next), entry: e, next: in.next, pkt: p.Next}
	copy(f.challenge[:], p.PoR[porNext:])
	if r.paid {
		if err := r.checkTicket(in, &e.ticket); err != nil {
			r.dropPacket(in.from, reasonOf(err), err)
			return nil, f, false
		}
		e.paid = true
		v := e.ticket.Value()
		f.amount.Sub(&v, &ledger.PricePerHop) // AcceptTicket checked the value is at least PricePerHop
	}
	return e, f, true
}

// relayOn acknowledges an accepted packet to its previous hop and forwards it, after the mixing
// delay.
func (r *Relay) relayOn(ctx context.Context, in *inbound, e *pendingEntry, f forward) {
	if err := r.pend.add(f.id, e); err != nil {
		if e.paid {
			r.cfg.Payments.Neglect(e.prev, &e.ticket)
		}
		reason := reasonOverload
		if errors.Is(err, errDuplicate) {
			reason = reasonDuplicate
		}
		r.dropPacket(in.from, reason, err)
		return
	}
	// Acknowledge at once, not when forwarding: an acknowledgement sent after the delay would
	// show an observer which outgoing packet belongs to which incoming one.
	r.sendAck(ctx, in.from, in.id, in.ack)
	if d := r.mixDelay(); d > 0 {
		select {
		case r.delayIn <- delayed{due: r.clock.Now().Add(d), f: f}:
		default:
			r.dropForward(f, reasonOverload, ErrOverloaded)
		}
		return
	}
	r.forward(ctx, f)
}

// checkTicket decodes and validates a relayer's incoming ticket into t (or takes the one
// peelMsg decoded and verified).
// The challenge must be T_i, which the sender put in this hop's routing information (where the
// previous hop can neither read nor change it): no curve arithmetic.
func (r *Relay) checkTicket(in *inbound, t *tickets.Ticket) error {
	if in.tb == nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketMissing)
	}
	if in.verified {
		*t = in.ticket
		if err := r.split.AcceptVerified(in.prev.addr, t, false); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidTicket, err)
		}
		return nil
	}
	if err := t.UnmarshalBinary(in.tb); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
	}
	if in.want != t.Challenge {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketChallenge)
	}
	if err := r.cfg.Payments.AcceptTicket(in.prev.addr, t, false); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return nil
}

// acceptFinal accepts the ticket of a packet for this node, if it has one, in its line's order.
func (r *Relay) acceptFinal(in *inbound) (tickets.Ticket, [32]byte, bool) {
	if !r.paid || in.tb == nil {
		return tickets.Ticket{}, [32]byte{}, true
	}
	t, response, err := r.checkFinalTicket(in)
	if err != nil {
		r.dropPacket(in.from, reasonOf(err), err)
		return t, response, false
	}
	return t, response, true
}

// receive handles a packet for which this node is the recipient. A ticket worth more than 0
// (the sender's padding, PROTOCOL.md §4.5) is acknowledged at once: the recipient knows its
// response own + end. The packet is acknowledged to the previous hop whenever its header and
// ticket are valid, also when its payload is not (payloadErr, or a reply that does not open):
// the relayers did their work, and withholding the acknowledgement would tell the last of
// them that the payload was altered on the way (PROTOCOL.md §3.4). A reply is opened with the
// keys its block left in the keyring, which are taken (a block makes one reply).
// Its ticket t (with its response), if it has one, was accepted (acceptFinal).
func (r *Relay) receive(in *inbound, t tickets.Ticket, response [32]byte) {
	from, p, tb, payloadErr := in.from, &in.p, in.tb, in.payloadErr
	if r.paid && tb != nil && !t.Amount.IsZero() {
		// Blocking, as for a relayer's acknowledged ticket: it is money.
		r.acked.push(ledger.AckedTicket{Source: in.prev.addr, Ticket: t, Response: response, Unverified: true})
	}
	r.sendAck(context.Background(), from, in.id, in.ack)
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
		Relayed:    tb != nil || r.layered(),
		Reply:      p.Reply,
		Framed:     msg.Framed,
	})
}

// checkFinalTicket decodes and validates the recipient's ticket and returns it with the
// response that redeems it, own + end.
func (r *Relay) checkFinalTicket(in *inbound) (tickets.Ticket, [32]byte, error) {
	t := in.ticket
	if !in.verified {
		if err := t.UnmarshalBinary(in.tb); err != nil {
			return t, [32]byte{}, fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
		}
	}
	end, err := por.DeriveEnd(in.p.Secret)
	if err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	// Whether own + end opens the ticket's challenge is left to the ledger (AckedTicket's
	// Unverified): it costs a scalar multiplication, worth spending only on a ticket the
	// recipient keeps, a winner.
	accept := r.cfg.Payments.AcceptTicket
	if in.verified {
		accept = r.split.AcceptVerified
	}
	if err := accept(in.prev.addr, &t, true); err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return t, por.Response(in.own, end), nil
}

func (r *Relay) sendAck(ctx context.Context, to peer.ID, id packetID, ack por.Scalar) {
	f := ackFrame(id, ack)
	if err := r.cfg.Transport.Send(ctx, to, p2p.ProtocolAck, f[:]); err != nil {
		r.log.Debug("relay: sending acknowledgement failed", slog.String("peer_id", to.String()), slog.Any("err", err))
		return
	}
	r.m.acksSent.Inc()
}
