package session

import (
	"slices"
	"time"
)

// maxCwnd caps the congestion window, in segments.
const maxCwnd = 1 << 16

// stepTCP is step for a TCP-mode session: the retransmission timer, segments (lost ones
// first, then new ones within the congestion and the peer's windows), the zero-window probe,
// the keep-alive, the acknowledgement, the end. c.mu is held.
func (c *Conn) stepTCP(now time.Time, emit func(*Frame)) {
	if c.state == statePending {
		return
	}
	if len(c.out) == 0 {
		c.rtoAt = time.Time{}
	} else if !c.rtoAt.IsZero() && !now.Before(c.rtoAt) {
		c.timeout(now)
		if c.state == stateDone {
			return
		}
	}
	if !c.lossAt.IsZero() && !now.Before(c.lossAt) {
		c.detectLoss(now)
	}
	pipe := c.pipe()
	c.cwndLimited = false
	for {
		if pipe >= c.cwnd {
			c.cwndLimited = true
			break
		}
		s := c.nextLost()
		if s == nil {
			s = c.newSegment()
		}
		if s == nil {
			break
		}
		c.transmit(s, now, emit)
		pipe++
	}
	if c.state == stateDone {
		return
	}
	blocked := c.state == stateOpen && len(c.out) == 0 && c.hasData() && uint64(c.sndNxt) >= c.peerEdge
	c.probe(now, blocked, emit)
	if c.state == stateDone {
		return
	}
	c.keepAlive(now, c.state == stateOpen && len(c.out) == 0 && !blocked && c.lingerAt.IsZero(), emit)
	if c.state == stateDone {
		return
	}
	if c.synRecv && (c.ackNow || (!c.ackAt.IsZero() && !now.Before(c.ackAt))) {
		f := Frame{Seq: c.sndNxt}
		c.ackFields(&f)
		emit(&f)
	}
	c.linger(now)
}

// pipe is how many segments are taken to be in flight: sent, neither SACKed nor lost.
func (c *Conn) pipe() int {
	n := 0
	for _, s := range c.out {
		if !s.sacked && !s.lost {
			n++
		}
	}
	return n
}

func (c *Conn) nextLost() *segment {
	for _, s := range c.out {
		if s.lost {
			return s
		}
	}
	return nil
}

func (c *Conn) hasData() bool { return len(c.unsent) > 0 || (c.finQueued && !c.finSent) }

// newSegment cuts the next segment to send, or returns nil: the SYN first, then data and the
// FIN within the peer's window.
func (c *Conn) newSegment() *segment {
	var s *segment
	switch {
	case c.sndNxt == 0:
		s = &segment{flags: FlagSYN}
		if !c.exit {
			s.payload = c.syn
		}
	case c.state != stateOpen || c.finSent || uint64(c.sndNxt) >= c.peerEdge:
		return nil
	case len(c.unsent) > 0:
		k := min(len(c.unsent), c.segCap)
		s = &segment{payload: c.unsent[:k:k]}
		c.unsent = c.unsent[k:]
		if len(c.unsent) == 0 {
			c.unsent = nil
			if c.finQueued {
				s.flags = FlagFIN
				c.finSent = true
			}
		}
	case c.finQueued:
		s = &segment{flags: FlagFIN}
		c.finSent = true
	default:
		return nil
	}
	if c.sndNxt > MaxSeq {
		c.fail(ErrTooLarge, ReasonReset)
		return nil
	}
	s.seq = c.sndNxt
	c.sndNxt++
	c.out = append(c.out, s)
	c.outBytes += len(s.payload)
	return s
}

// transmit sends s (again).
func (c *Conn) transmit(s *segment, now time.Time, emit func(*Frame)) {
	f := Frame{Flags: s.flags, Seq: s.seq, Payload: s.payload}
	c.ackFields(&f)
	if s.sends > 0 {
		c.stats.Retransmits++
	}
	c.xmits++
	s.sends, s.sentAt, s.xmit, s.lost = s.sends+1, now, c.xmits, false
	c.stats.SegmentsSent++
	if c.rtoAt.IsZero() {
		c.rtoAt = now.Add(c.rtt.Timeout())
	}
	emit(&f)
}

// timeout answers the retransmission timer's expiry (RFC 5681, 6298): every segment not
// SACKed is taken as lost, the congestion window drops to 1 and the timeout doubles; after
// MaxRetries expiries in a row the session ends with ErrTimeout.
func (c *Conn) timeout(now time.Time) {
	c.timeouts++
	c.stats.Timeouts++
	if c.timeouts > c.cfg.MaxRetries {
		c.fail(ErrTimeout, ReasonTimeout)
		return
	}
	if c.timeouts == 1 {
		c.ssthresh = max(int(c.sndNxt-c.sndUna)/2, 2)
	}
	c.cwnd, c.caAcc = 1, 0
	for _, s := range c.out {
		if !s.sacked {
			s.lost = true
		}
	}
	c.recovering, c.frozen, c.recoverUntil = true, false, c.sndNxt
	c.rtt.Expired()
	c.rtoAt = now.Add(c.rtt.Timeout())
}

// probe sends window probes (keep-alives, which the peer answers with its window) while the
// peer's window is closed and data waits: after a timeout, then doubling. MaxRetries
// unanswered ones end the session with ErrTimeout.
func (c *Conn) probe(now time.Time, blocked bool, emit func(*Frame)) {
	if !blocked {
		c.probeAt = time.Time{}
		return
	}
	if c.probeAt.IsZero() {
		c.probeAt = now.Add(c.rtt.Timeout())
		return
	}
	if now.Before(c.probeAt) {
		return
	}
	if c.probes >= c.cfg.MaxRetries {
		c.fail(ErrTimeout, ReasonTimeout)
		return
	}
	c.probes++
	c.stats.KeepAlives++
	f := Frame{Flags: FlagKeepAlive, Seq: c.sndNxt}
	c.ackFields(&f)
	emit(&f)
	d := c.rtt.Timeout()
	for range c.probes {
		d = min(2*d, c.cfg.MaxRTO)
	}
	c.probeAt = now.Add(d)
}

// linger ends a session Linger after both directions ended, or after a local Close once its
// FIN was acknowledged (then with an RST when the peer's FIN has not come).
func (c *Conn) linger(now time.Time) {
	if c.lingerAt.IsZero() {
		if c.finAcked && (c.finRecv || c.closed) {
			c.lingerAt = now.Add(c.cfg.Linger)
		}
		return
	}
	if now.Before(c.lingerAt) {
		return
	}
	if c.finRecv {
		c.fail(nil, 0)
	} else {
		c.fail(ErrClosed, ReasonReset)
	}
}

// ackFields makes f acknowledge what arrived (once the peer's SYN did): the cumulative ack,
// the window, and the SACK ranges that fit. An acknowledgement that carried all it wanted to
// ends the wait for one. Before the peer's SYN (the entry's SYN) it carries the window alone,
// from segment 0: the exit may send its answer behind its SYN|ACK without waiting for the
// entry's first acknowledgement (AckDelay), which matters when the answer is to early data or
// the server speaks first.
func (c *Conn) ackFields(f *Frame) {
	if !c.synRecv {
		f.Window = uint16(c.rcvWindow())
		return
	}
	f.Flags |= FlagACK
	f.Ack = c.rcvNxt
	wnd := c.rcvWindow()
	f.Window = uint16(wnd)
	c.advEdge, c.advWnd = uint64(c.rcvNxt)+uint64(wnd), wnd
	complete := true
	if len(c.ooo) > 0 {
		room := (c.link.MaxFrame() - f.Size()) / RangeSize
		ranges := c.sackRanges()
		want := min(len(ranges), MaxSACK)
		if room < want {
			want, complete = room, false
		}
		f.SACK = pickRanges(ranges, want, c.lastSeq)
	}
	if complete {
		c.ackNow, c.ackAt, c.unacked = false, time.Time{}, 0
	}
}

// rcvWindow is how many segments from rcvNxt on the session accepts: Window less the
// segments its application has not read. rcvNxt + rcvWindow never decreases.
func (c *Conn) rcvWindow() int { return max(c.cfg.Window-len(c.ready), 0) }

// sackRanges are the runs of segments held out of order, ascending.
func (c *Conn) sackRanges() []Range {
	seqs := make([]uint32, 0, len(c.ooo))
	for s := range c.ooo {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var rs []Range
	for _, s := range seqs {
		if n := len(rs); n > 0 && rs[n-1].End == s {
			rs[n-1].End++
		} else {
			rs = append(rs, Range{s, s + 1})
		}
	}
	return rs
}

// pickRanges chooses n of the ascending ranges: the one holding the newest arrival (RFC 2018),
// then the lowest ones, which say most about what is missing; in ascending order.
func pickRanges(ranges []Range, n int, newest uint32) []Range {
	if n <= 0 {
		return nil
	}
	if len(ranges) <= n {
		return slices.Clone(ranges)
	}
	first := -1
	for i, r := range ranges {
		if r.Start <= newest && newest < r.End {
			first = i
			break
		}
	}
	var out []Range
	if first >= 0 {
		out = append(out, ranges[first])
	}
	for i := 0; len(out) < n && i < len(ranges); i++ {
		if i != first {
			out = append(out, ranges[i])
		}
	}
	slices.SortFunc(out, func(a, b Range) int { return int(int64(a.Start) - int64(b.Start)) })
	return out
}

// windowUpdate asks for an acknowledgement once reading opened the window far enough (a
// quarter of it, or from closed). c.mu is held.
func (c *Conn) windowUpdate() {
	if !c.synRecv || c.state != stateOpen || c.advWnd < 0 {
		return
	}
	edge := uint64(c.rcvNxt) + uint64(c.rcvWindow())
	if c.advWnd == 0 || edge >= c.advEdge+uint64(max(1, c.cfg.Window/4)) {
		c.ackNow = true
		c.wake()
	}
}

// handleTCP takes a TCP-mode frame that is not an RST.
func (c *Conn) handleTCP(f *Frame, now time.Time) {
	if f.Flags&FlagSYN != 0 && f.Flags&FlagACK == 0 {
		// The entry's SYN again: it has not heard the exit's SYN|ACK.
		if c.exit {
			if c.state == stateOpen && c.sndUna == 0 && len(c.out) > 0 && !c.out[0].sacked {
				c.out[0].lost = true
			}
			c.ackNow = true
		}
		return
	}
	if f.Flags&FlagACK == 0 || (f.Flags&FlagSYN != 0 && c.exit) {
		return // every frame but the entry's SYN acknowledges
	}
	c.onAck(f, now)
	if f.consumes() && c.state != stateDone {
		c.onSegment(f, now)
	}
	if f.Flags&FlagKeepAlive != 0 {
		c.ackNow = true
	}
	if c.state == stateDialing && c.synRecv && c.sndUna > 0 {
		c.state = stateOpen
	}
}

// onAck takes a frame's acknowledgement: the cumulative ack and the SACK ranges retire
// segments and measure the round trip (segments sent once only), the window moves, the
// congestion window grows, and segments with three later-sent ones SACKed are lost.
func (c *Conn) onAck(f *Frame, now time.Time) {
	if f.Ack > c.sndNxt {
		return // acknowledges what was never sent
	}
	c.peerEdge = max(c.peerEdge, uint64(f.Ack)+uint64(f.Window))
	newly := 0
	// The round trip is measured to the latest-sent segment this acknowledgement retires, and
	// only when it retires no segment sent more than once (Karn): an acknowledgement that a
	// retransmission brought would measure the wait for the timeout too. The entry's SYN is
	// not measured: the exit answers it once it reached the destination.
	var latest time.Time
	ambiguous := false
	sample := func(s *segment) {
		if s.flags&FlagSYN != 0 && !c.exit {
			return
		}
		if s.sends > 1 {
			ambiguous = true
		} else if s.sentAt.After(latest) {
			latest = s.sentAt
		}
	}
	advanced := f.Ack > c.sndUna
	if advanced {
		n := int(f.Ack - c.sndUna)
		for i, s := range c.out[:n] {
			if !s.sacked {
				newly++
				sample(s)
			}
			c.outBytes -= len(s.payload)
			if s.flags&FlagFIN != 0 {
				c.finAcked = true
			}
			c.out[i] = nil
		}
		c.out = c.out[n:]
		c.sndUna = f.Ack
		c.timeouts = 0
	}
	for _, r := range f.SACK {
		if r.End > c.sndNxt {
			continue
		}
		for seq := max(r.Start, c.sndUna); seq < r.End; seq++ {
			s := c.out[seq-c.sndUna]
			if s.sacked {
				continue
			}
			s.sacked, s.lost = true, false
			newly++
			sample(s)
		}
	}
	if !latest.IsZero() && !ambiguous {
		c.rtt.Observe(now.Sub(latest))
	}
	if advanced {
		c.rtoAt = time.Time{}
		if len(c.out) > 0 {
			c.rtoAt = now.Add(c.rtt.Timeout())
		}
		if newly > 0 || c.hasData() {
			c.wake()
		}
	}
	if c.recovering && c.sndUna >= c.recoverUntil {
		c.recovering, c.frozen = false, false
	}
	if newly > 0 && !c.frozen && c.cwndLimited {
		if c.cwnd < c.ssthresh {
			c.cwnd += newly
		} else {
			c.caAcc += newly
			for c.caAcc >= c.cwnd {
				c.caAcc -= c.cwnd
				c.cwnd++
			}
		}
		c.cwnd = min(c.cwnd, maxCwnd)
	}
	c.detectLoss(now)
}

// detectLoss marks lost every segment in flight sent before the third-latest transmission
// that was SACKed (three later segments arrived: RFC 6675's DupThresh, counted in sending order
// so that a lost retransmission is found the same way) once it is also a reordering window
// late: outstanding for srtt + max(srtt/4, rttvar), as RACK (RFC 8985) waits, because a
// mixnet's packets take paths of different delays and arrive out of order as a rule. Until
// then lossAt says when to look again. The first loss of a window halves the congestion window
// (fast recovery until everything sent before it is acknowledged).
func (c *Conn) detectLoss(now time.Time) {
	c.lossAt = time.Time{}
	var top [3]uint64 // the three latest transmissions SACKed, latest first
	for _, s := range c.out {
		if !s.sacked || s.xmit <= top[2] {
			continue
		}
		switch {
		case s.xmit > top[0]:
			top = [3]uint64{s.xmit, top[0], top[1]}
		case s.xmit > top[1]:
			top = [3]uint64{top[0], s.xmit, top[1]}
		default:
			top[2] = s.xmit
		}
	}
	if top[2] == 0 {
		return
	}
	var late time.Duration
	if srtt, rttvar, ok := c.rtt.Smoothed(); ok {
		late = srtt + max(srtt/4, rttvar)
	}
	lost := false
	for _, s := range c.out {
		if s.sacked || s.lost || s.xmit >= top[2] {
			continue
		}
		if due := s.sentAt.Add(late); now.Before(due) {
			if c.lossAt.IsZero() || due.Before(c.lossAt) {
				c.lossAt = due
			}
			continue
		}
		s.lost = true
		lost = true
	}
	if !lost {
		return
	}
	c.stats.FastRetransmits++
	if !c.recovering {
		c.ssthresh = max(int(c.sndNxt-c.sndUna)/2, 2)
		c.cwnd, c.caAcc = c.ssthresh, 0
		c.recovering, c.frozen, c.recoverUntil = true, true, c.sndNxt
	}
	c.wake()
}

// onSegment takes a segment (SYN, data, FIN): in order it is delivered with whatever it
// completes, out of order (within the window) it is held; duplicates, segments beyond the
// window and a FIN are acknowledged at once, the others, in order or not, every AckEvery
// segments, or AckDelay after the first unacknowledged one, or with the next frame sent. A
// mixnet reorders its packets as a rule: acknowledging every segment out of order at once
// (RFC 5681) cost about three acknowledgements in four segments, each a packet (forward) or a
// reply and its block (back).
func (c *Conn) onSegment(f *Frame, now time.Time) {
	c.stats.SegmentsReceived++
	s := f.Seq
	if s < c.rcvNxt || c.finRecv {
		c.stats.Duplicates++
		c.ackNow = true
		return
	}
	if uint64(s) >= uint64(c.rcvNxt)+uint64(c.rcvWindow()) {
		c.ackNow = true
		return
	}
	if c.closed && len(f.Payload) > 0 {
		c.fail(ErrClosed, ReasonReset) // data after Close: the application will never read it
		return
	}
	if s > c.rcvNxt {
		if _, ok := c.ooo[s]; ok {
			c.stats.Duplicates++
			c.ackNow = true
			return
		}
		c.ooo[s] = rseg{f.Flags & (FlagSYN | FlagFIN), slices.Clone(f.Payload)}
		c.lastSeq = s
		c.owe(now)
		return
	}
	c.deliver(f.Flags, slices.Clone(f.Payload))
	for !c.finRecv {
		r, ok := c.ooo[c.rcvNxt]
		if !ok {
			break
		}
		delete(c.ooo, c.rcvNxt)
		c.deliver(r.flags, r.payload)
	}
	if c.finRecv {
		c.ackNow = true
		return
	}
	c.owe(now)
}

// owe counts a segment received and not acknowledged yet: the acknowledgement goes at the
// AckEvery-th, or AckDelay after the first.
func (c *Conn) owe(now time.Time) {
	c.unacked++
	if c.unacked >= c.cfg.AckEvery {
		c.ackNow = true
	} else if c.ackAt.IsZero() {
		c.ackAt = now.Add(c.cfg.AckDelay)
	}
}

// deliver takes the next segment in order.
func (c *Conn) deliver(flags Flags, payload []byte) {
	c.rcvNxt++
	if flags&FlagSYN != 0 {
		c.synRecv = true
	} else if len(payload) > 0 && !c.closed {
		c.ready = append(c.ready, payload)
	}
	if flags&FlagFIN != 0 {
		c.finRecv = true
		clear(c.ooo)
	}
}
