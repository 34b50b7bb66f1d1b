package relay

import (
	"context"
	"fmt"

	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// The sending stage: this node's own messages, built with their proof-of-relay data and the
// first hop's ticket.

// Send sends text to the last of hops over the others: hops lists the relayers in order, then
// the recipient (1 to packet.MaxHops peers; 1 is a direct message, which carries no ticket).
// It refuses a text over packet.MaxMessageSize bytes (packet.ErrMessageTooLarge) and a bad
// route (ErrBadRoute) before any work, builds the packet with its proof-of-relay data, issues
// the first hop's ticket worth tickets.PaddedAmount(relayers, pad) for a pad it draws from
// Config.Rand (tickets.DrawPad, PROTOCOL.md §4.5; ErrNotEnoughBalance when the channel cannot
// pay that amount, ErrChannelNotOpen, ErrChannelNotFound: nothing is sent) and queues it. It
// returns the ack challenge A_1 that the first hop's acknowledgement opens (WaitAck waits for it)
// and what the first ticket cost.
func (r *Relay) Send(ctx context.Context, hops []peer.ID, text string) (Sent, error) {
	if len(text) > packet.MaxMessageSize {
		return Sent{}, fmt.Errorf("send: %d bytes: %w", len(text), packet.ErrMessageTooLarge)
	}
	return r.send(ctx, hops, packet.Message{Text: []byte(text)})
}

// SendMessage sends msg (a framed text, docs/PROTOCOL.md §8, or a plain one) as Send sends a
// text; the packet layer refuses a text over packet.MaxMessageSize bytes.
func (r *Relay) SendMessage(ctx context.Context, hops []peer.ID, msg packet.Message) (Sent, error) {
	return r.send(ctx, hops, msg)
}

// SendDrop sends drop cover to the last of hops over the others, as Send sends a message: the
// same packet, ticket and acknowledgement, but the recipient discards it (docs/TRAFFIC.md).
func (r *Relay) SendDrop(ctx context.Context, hops []peer.ID) (Sent, error) {
	return r.send(ctx, hops, packet.Message{Drop: true})
}

// send builds msg into a packet over hops and sends it (Send); it stamps msg with the time.
func (r *Relay) send(ctx context.Context, hops []peer.ID, msg packet.Message) (Sent, error) {
	var zero Sent
	if len(hops) == 0 || len(hops) > packet.MaxHops {
		return zero, fmt.Errorf("send: %d hops: %w", len(hops), ErrBadRoute)
	}
	keys := make([]*packet.PublicKey, len(hops))
	var first *peerEntry
	for i, h := range hops {
		// The sender itself may be the recipient behind relayers: loop cover traffic.
		loop := h == r.self && i == len(hops)-1 && i > 0
		if (h == r.self && !loop) || (i > 0 && h == hops[i-1]) {
			return zero, fmt.Errorf("send: hop %d: %w", i, ErrBadRoute)
		}
		e, err := r.peers.byPeer(h)
		if err != nil {
			return zero, fmt.Errorf("send: hop %d: %w: %w", i, ErrBadRoute, err)
		}
		keys[i] = e.key
		if i == 0 {
			first = e
		}
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	n := len(hops)
	route, err := r.ephemerals.NewRoute(r.rand, keys)
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	pd, err := derivePoR(route, true)
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	var c0 por.Challenge
	if r.paid {
		c0 = pd.t0
	}
	now := r.clock.Now()
	msg.Timestamp = uint64(now.UnixMilli())
	pkt, err := route.Seal(msg, pd.fields[:n-1])
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	id := idOf(pkt)
	a0 := pd.a0
	e := newSentEntry(first.id, now.Add(r.cfg.AckTimeout), a0, pd.ack0)
	if err := r.pend.add(id, e); err != nil {
		return zero, fmt.Errorf("send: %w", ErrOverloaded)
	}
	var amount uint256.Int
	if r.paid && n > 1 {
		pad := 0
		if !r.layered() {
			if pad, err = tickets.DrawPad(r.rand); err != nil {
				r.pend.forgetSent(id, e)
				return zero, fmt.Errorf("send: %w", err)
			}
		}
		amount = tickets.PaddedAmount(n-1, pad)
	}
	cost, err := r.sendFirst(ctx, first, pkt, &amount, c0)
	if err != nil {
		r.pend.forgetSent(id, e)
		return zero, fmt.Errorf("send: %w", err)
	}
	r.m.sent.Inc()
	return Sent{Ack: a0, Cost: cost}, nil
}

// porData is a route's proof-of-relay data (PROTOCOL.md §2), from the secrets it shares with
// its hops.
type porData struct {
	// fields are the relayers' PoR fields T_i ‖ H(ack_{i+1}) ‖ T_{i+1}.
	fields [packet.MaxHops - 1][packet.PoRSize]byte
	// t0 is T_0, the challenge of the first hop's ticket (zero for a direct message).
	t0 por.Challenge
	// ack0 is the first hop's ack scalar; a0 = ack0·G when asked for.
	ack0 por.Scalar
	a0   por.AckChallenge
}

// derivePoR computes, per hop i, own_i, ack_i and the response r_i = own_i + ack_{i+1} (end for
// the last hop) whose address(r_i·G) = T_i is the challenge of the ticket to hop i, and from
// them the relayers' PoR fields. With withA0 it also computes A_1 = ack_0·G, which names a
// message's acknowledgement. The points share one field inversion (por.MulBase).
func derivePoR(route *packet.Route, withA0 bool) (porData, error) {
	var d porData
	n := route.Len()
	var own, ack [packet.MaxHops]por.Scalar
	var ks [packet.MaxHops + 1]por.Scalar
	var err error
	for i := range n {
		if own[i], ack[i], err = por.DeriveOwnAck(route.Secret(i)); err != nil {
			return d, err
		}
	}
	end, err := por.DeriveEnd(route.Secret(n - 1))
	if err != nil {
		return d, err
	}
	for i := range n {
		after := end
		if i+1 < n {
			after = ack[i+1]
		}
		if ks[i], err = por.Sum(own[i], after); err != nil {
			return d, err
		}
	}
	first, last := 0, n
	if n == 1 {
		first = 1 // a direct message: no ticket, no T_0
	}
	if withA0 {
		ks[n] = ack[0]
		last = n + 1
	}
	pts, err := por.MulBase(ks[first:last]...)
	if err != nil {
		return d, err
	}
	pts = append(make([]por.Point, first), pts...)
	for i := range n - 1 {
		ti, next := pts[i].Address(), pts[i+1].Address()
		h := por.CommitAck(ack[i+1])
		copy(d.fields[i][:porChallenge], ti[:])
		copy(d.fields[i][porChallenge:porNext], h[:])
		copy(d.fields[i][porNext:], next[:])
	}
	if n > 1 {
		d.t0 = pts[0].Address()
	}
	if withA0 {
		d.a0 = pts[n].Compress()
	}
	d.ack0 = ack[0]
	return d, nil
}

// Sent is what Send did with a message.
type Sent struct {
	// Ack is the ack challenge A_1 that the first hop's acknowledgement opens; WaitAck and
	// Config.OnAck know the message by it. For a reply (SendReply), whose replier cannot
	// compute A_1, it is the reply block's ack commitment H(ack_0) behind a zero byte: no
	// point, a name only.
	Ack por.AckChallenge
	// Cost is the expected value of the first hop's ticket (tickets.Ticket.Value): what the
	// message cost this node. Zero for a direct message or in unpaid mode.
	Cost uint256.Int
}

// sendFirst issues the first hop's ticket worth amount (paid mode, at least one relayer: amount
// is not 0) and queues the packet, in the first hop's line (sendPaid). It returns the ticket's
// expected value.
func (r *Relay) sendFirst(ctx context.Context, first *peerEntry, pkt []byte, amount *uint256.Int, challenge por.Challenge) (uint256.Int, error) {
	var cost uint256.Int
	if !r.paid || amount.IsZero() {
		return cost, r.sendPacket(ctx, first.id, pkt, nil)
	}
	t, issued, err := r.sendPaid(ctx, first, pkt, amount, challenge)
	if !issued {
		return cost, fmt.Errorf("first ticket: %w", err)
	}
	cost = t.Value()
	r.m.spent.Add(token.FromUint256(&cost).Float64()) // signed: paid, whether the packet left or not
	return cost, err
}

// WaitAck waits until the first hop of a message (or reply) this node sent acknowledges it
// (nil), its AckTimeout passes (ErrAckTimeout) or ctx ends. It returns ErrUnknownAck for a
// challenge Send or SendReply did not return or that was forgotten (AckTimeout after sending).
func (r *Relay) WaitAck(ctx context.Context, challenge por.AckChallenge) error {
	e, state, done := r.pend.waitSent(challenge)
	if e == nil {
		return ErrUnknownAck
	}
	if state == sentPending {
		select {
		case <-done:
			state = e.state // written before done was closed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if state == sentAcked {
		return nil
	}
	return ErrAckTimeout
}
