package carrier

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// exitLink is the exit's link of one session: its frames go back to the entry on the reply
// blocks the entry sent, one per frame.
type exitLink struct {
	c    *Carrier
	id   session.ID
	made time.Time // when a pending link was made for blocks before the SYN

	accepted bool // the session's SYN came (AcceptLink); l.mu, or the carrier's lock before it

	mu     sync.Mutex
	s      sender
	ended  bool
	gone   bool // an ended link that let go of everything: it takes no block any more
	frames [][]byte
	stock  []stocked
	parts  map[uint16]*[2][]byte // halves of blocks by number
	// head is the newest block number a part came with (once heads is set): parts further
	// behind it than partWindow are dropped.
	head  uint16
	heads bool
	// received counts the blocks assembled for the session, modulo 2¹⁶ (the answers say it).
	received uint16
	// backlog is what the session said it has to send beyond the frames it handed the link
	// (session.Backlogger).
	backlog int
	// blocksReceived and answersSent count the session's; lastFailure is the last send the
	// network failed.
	blocksReceived, answersSent uint64
	lastFailure                 failure
}

// stocked is a reply block the exit holds.
type stocked struct {
	raw   []byte
	block packet.ReplyBlock
}

var (
	_ session.Ender      = (*exitLink)(nil)
	_ session.Backlogger = (*exitLink)(nil)
)

func (l *exitLink) MaxFrame() int { return maxAnswerSize }

// Backlog takes what the session has to send beyond the frames it hands the link: the answers
// say it with the frames queued, so that the entry sends blocks for those.
func (l *exitLink) Backlog(frames int) {
	l.mu.Lock()
	l.backlog = frames
	l.mu.Unlock()
}

// Send queues frame until a block can carry it; beyond QueueSize the oldest waiting frame is
// dropped.
func (l *exitLink) Send(_ context.Context, frame []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.frames) >= l.c.cfg.QueueSize {
		l.frames = l.frames[1:]
		l.c.count(func(s *Stats) { s.FramesDropped++ })
	}
	l.frames = append(l.frames, frame)
	l.s.run(l.c, &l.mu, l.next)
	return nil
}

// addPart takes half a block; a block whose halves are both in joins the stock when it is a
// reply block in its time window and the stock has room.
func (l *exitLink) addPart(p part) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// An ended session keeps at most endedStock blocks, for what its mux answers late frames
	// with (its RST, its last acknowledgement), and the halves of at most two blocks: a half of
	// a third number makes it let go of the others (a half whose other half was lost must not
	// keep the next blocks out).
	if l.gone || (l.ended && len(l.stock) >= endedStock) {
		l.c.count(func(s *Stats) { s.BlocksDropped++ })
		return
	}
	if l.ended && len(l.parts) >= 2 && l.parts[p.number] == nil {
		clear(l.parts)
	}
	if l.parts == nil {
		l.parts = map[uint16]*[2][]byte{}
	}
	// The entry numbers its blocks in turn, modulo blockNumbers, as it makes them. The newest
	// number seen is the head: a part less than half the circle ahead of it moves it. A half more
	// than partWindow behind the head is dropped, whether it comes now or waits for its other
	// half: its other half is most likely lost, and the halves that wait are bounded.
	if !l.heads {
		l.head, l.heads = p.number, true
	}
	if ahead := (p.number - l.head) % blockNumbers; ahead > 0 && ahead < blockNumbers/2 {
		l.head = p.number
		for n := range l.parts {
			if (l.head-n)%blockNumbers > partWindow {
				delete(l.parts, n)
				l.c.count(func(s *Stats) { s.HalvesDropped++ })
			}
		}
	}
	if (l.head-p.number)%blockNumbers > partWindow {
		l.c.count(func(s *Stats) { s.HalvesDropped++ })
		return
	}
	halves := l.parts[p.number]
	if halves == nil {
		// Before its SYN a session gets its opening blocks: a few halves wait, not partWindow's,
		// so that parts of made-up sessions (MaxPending of them) hold little.
		if !l.accepted && len(l.parts) >= pendingHalves {
			l.c.count(func(s *Stats) { s.HalvesDropped++ })
			return
		}
		halves = &[2][]byte{}
		l.parts[p.number] = halves
	}
	halves[p.half] = append([]byte(nil), p.data...) // a half again replaces the one of a lost block
	if halves[0] == nil || halves[1] == nil {
		return
	}
	delete(l.parts, p.number)
	l.received++
	raw := uncarry(halves[0], halves[1])
	var b packet.ReplyBlock
	if err := b.UnmarshalBinary(raw); err != nil || !b.InWindow(time.Now()) {
		l.c.count(func(s *Stats) { s.BlocksDropped++ })
		return
	}
	if len(l.stock) >= l.c.cfg.MaxStock || (l.ended && len(l.stock) >= endedStock) { // the oldest goes: the entry sends more only when the old are useless
		l.stock = l.stock[1:]
		l.c.count(func(s *Stats) { s.BlocksDropped++ })
	}
	l.stock = append(l.stock, stocked{raw: raw, block: b})
	l.blocksReceived++
	l.c.count(func(s *Stats) { s.BlocksReceived++ })
	l.s.run(l.c, &l.mu, l.next)
}

// next is the sender's next job: the oldest frame on the newest block. The newest blocks went
// over the paths the entry's router chose last: when a relayer dies, the blocks through it are
// the older ones, which the entry no longer counts (and replaces), and which wait at the bottom
// of the stock until they expire. Blocks out of their window are dropped, the oldest first.
// l.mu is held.
func (l *exitLink) next() func(context.Context) {
	if len(l.frames) == 0 {
		return nil
	}
	now := time.Now()
	for len(l.stock) > 0 && !l.stock[0].block.InWindow(now) {
		l.stock = l.stock[1:]
		l.c.count(func(s *Stats) { s.BlocksDropped++ })
	}
	if len(l.stock) == 0 {
		return nil
	}
	frame, block := l.frames[0], l.stock[len(l.stock)-1].raw
	l.frames, l.stock = l.frames[1:], l.stock[:len(l.stock)-1]
	text := encodeAnswer(answer{stock: len(l.stock), received: l.received, toCome: len(l.frames) + l.backlog, segment: frame})
	net, last := l.c.cfg.Network, l.ended && len(l.frames) == 0
	return func(ctx context.Context) {
		if last { // the last frame of an ended session: the link can go
			defer l.c.forgetExit(l)
		}
		if err := net.SendReply(ctx, block, text); err != nil {
			// The block's first hop is unreachable, or the block is bad: the frame waits for
			// the next block (at the front: it is the oldest), as a network that lost it would
			// have it sent again, only sooner.
			f := l.c.failed(err, func(s *Stats) { s.FramesDropped++; s.BlocksUsed++ })
			l.mu.Lock()
			l.lastFailure = f
			if !l.ended && len(l.frames) < l.c.cfg.QueueSize {
				l.frames = append([][]byte{frame}, l.frames...)
			}
			l.mu.Unlock()
			return
		}
		l.mu.Lock()
		l.answersSent++
		l.mu.Unlock()
		l.c.count(func(s *Stats) { s.FramesSent++; s.BlocksUsed++; s.AnswersSent++ })
	}
}

// Ended lets go of the session's blocks but the newest endedStock (one) and of its halves: the
// mux answers the session's late frames, with the RST again when it was reset, with its last
// acknowledgement when it ended cleanly (the entry's FIN sent again after the exit's
// acknowledgement was lost), and a block the entry sends again takes the used one's place. The
// link keeps that block until the carrier forgets the session (it remembers the last maxEnded
// ones: at most that many blocks a node). Frames still waiting for a block (the RST of a
// session refused before its first block came) keep the link among the carrier's sessions
// until they are sent or PendingFor passed.
func (l *exitLink) Ended(session.Reason) {
	l.mu.Lock()
	l.ended = true
	waiting := len(l.frames) > 0
	l.frames = slices.Clone(l.frames[max(len(l.frames)-maxEndedFrames, 0):])
	n := max(len(l.stock)-len(l.frames)-endedStock, 0)
	// New slices: the mux keeps the link of an ended session a while (to answer its late frames),
	// and the dropped blocks must not stay reachable through the old arrays. The newest stay: the
	// link answers on the newest first.
	l.stock = slices.Clone(l.stock[n:])
	if len(l.parts) > 2 || !waiting {
		l.parts = nil // the halves that came before the SYN are kept for a waiting RST
	}
	l.mu.Unlock()
	l.c.count(func(s *Stats) { s.BlocksDropped += uint64(n) })
	if waiting {
		time.AfterFunc(l.c.cfg.PendingFor, func() { l.c.forgetExit(l) })
		return
	}
	l.c.forgetExit(l)
}

// linkStats is Carrier.Link for an exit link.
func (l *exitLink) linkStats() LinkStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LinkStats{Queued: len(l.frames), Blocks: len(l.stock), BlocksReceived: l.blocksReceived,
		AnswersSent: l.answersSent, LastFailure: l.lastFailure.reason, LastFailureAt: l.lastFailure.at}
}

// letGo drops everything an ended link holds, once the carrier forgot its session: the mux may
// still hold the link, and answers nothing on it any more. The carrier's lock may be held.
func (l *exitLink) letGo() {
	l.mu.Lock()
	n := len(l.stock)
	l.gone, l.stock, l.frames, l.parts = true, nil, nil, nil
	l.mu.Unlock()
	l.c.count(func(s *Stats) { s.BlocksDropped += uint64(n) })
}

// partWindow is how far behind the newest block number a half may come and wait for its other
// half: reordering by as many blocks loses none, and a session's halves waiting for theirs take
// at most partWindow + 1 parts' data (about 124 KB).
const partWindow = 256

// pendingHalves is the most halves a session's link keeps waiting for their other half before
// the session's SYN came.
const pendingHalves = 32

// maxEndedFrames is the most frames a link keeps waiting for a block after its session ended;
// endedStock the most blocks it keeps for the late answers.
const (
	maxEndedFrames = 4
	endedStock     = 1
)

// endPending drops every block of a pending link the carrier let go of: blocks that still
// come for the session make a new one. The carrier's lock is held (it is taken before a link's).
func (l *exitLink) endPending() {
	l.mu.Lock()
	l.ended = true
	l.mu.Unlock()
	l.letGo()
}
