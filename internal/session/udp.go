package session

import (
	"slices"
	"time"
)

// stepUDP is step for a UDP-mode session: the SYN until it is answered, then the SYN|ACK and
// keep-alive answers owed, the queued datagrams, the keep-alive, the FIN of a Close. c.mu is
// held.
func (c *Conn) stepUDP(now time.Time, emit func(*Frame)) {
	switch c.state {
	case statePending:
		return
	case stateDialing:
		if c.sndNxt == 0 {
			c.out = []*segment{{flags: FlagSYN, payload: c.syn}}
			c.sndNxt = 1
		}
		s := c.out[0]
		if !c.rtoAt.IsZero() && !now.Before(c.rtoAt) {
			c.timeouts++
			c.stats.Timeouts++
			if c.timeouts > c.cfg.MaxRetries {
				c.fail(ErrTimeout, ReasonTimeout)
				return
			}
			c.rtt.Expired()
			s.lost = true
		}
		if s.sends == 0 || s.lost {
			if s.sends > 0 {
				c.stats.Retransmits++
			}
			s.sends, s.sentAt, s.lost = s.sends+1, now, false
			c.stats.SegmentsSent++
			c.rtoAt = now.Add(c.rtt.Timeout())
			emit(&Frame{Flags: FlagSYN, Payload: s.payload})
		}
		return
	}
	if c.synAckOut {
		c.synAckOut = false
		emit(&Frame{Flags: FlagSYN | FlagACK, Ack: 1})
	}
	if c.answerOut {
		c.answerOut = false
		emit(&Frame{Flags: FlagACK, Seq: c.dgSeq + 1})
	}
	for i, p := range c.dgOut {
		c.dgSeq++
		emit(&Frame{Seq: c.dgSeq, Payload: p})
		c.stats.DatagramsSent++
		c.dgOut[i] = nil
	}
	c.dgOut = c.dgOut[:0]
	if c.finOut {
		emit(&Frame{Flags: FlagFIN, Seq: c.dgSeq + 1})
		c.fail(nil, 0)
		return
	}
	c.keepAlive(now, true, emit)
}

// handleUDP takes a UDP-mode frame that is not an RST.
func (c *Conn) handleUDP(f *Frame) {
	switch {
	case f.Flags&FlagSYN != 0 && f.Flags&FlagACK == 0:
		// The entry's SYN again: it has not heard the exit's SYN|ACK.
		if c.exit && c.state == stateOpen {
			c.synAckOut = true
		}
	case f.Flags&FlagSYN != 0:
		if c.exit || c.state != stateDialing || f.Ack != 1 || len(c.out) == 0 {
			return
		}
		// Not a round trip to measure: the exit answers once it reached the destination.
		c.out, c.sndUna, c.rtoAt, c.timeouts = nil, 1, time.Time{}, 0
		c.synRecv = true
		c.state = stateOpen
	case f.Flags&FlagFIN != 0:
		c.finRecv = true
		c.fail(nil, 0)
	case f.Flags&FlagKeepAlive != 0:
		c.answerOut = true
	case f.Flags&FlagACK != 0:
		// A keep-alive's answer: that it arrived was the point.
	default:
		if c.closed {
			return
		}
		c.dgIn = pushDropOldest(c.dgIn, slices.Clone(f.Payload), c.cfg.DatagramQueue, &c.stats.DatagramsDropped)
	}
}

// writeDatagram is Write in UDP mode. c.mu is held.
func (c *Conn) writeDatagram(p []byte) (int, error) {
	switch {
	case c.closed:
		return 0, ErrClosed
	case c.state == stateDone:
		return 0, c.endErr()
	case len(p) > c.segCap:
		return 0, ErrTooLarge
	}
	if c.state == statePending {
		_ = c.confirm()
	}
	c.dgOut = pushDropOldest(c.dgOut, slices.Clone(p), c.cfg.DatagramQueue, &c.stats.DatagramsDropped)
	c.wake()
	return len(p), nil
}

// pushDropOldest appends p to q and drops the oldest beyond limit, counting them.
func pushDropOldest(q [][]byte, p []byte, limit int, dropped *uint64) [][]byte {
	q = append(q, p)
	for len(q) > max(limit, 1) {
		q[0] = nil
		q = q[1:]
		*dropped++
	}
	return q
}
