package carrier

import (
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
)

// Round trips the entry assumes before it measured one, and the bounds of its measurement; the
// longest wait between blocks it sends while no answer comes.
const (
	initialRTT = 2 * time.Second
	minRTT     = 50 * time.Millisecond
	maxRTT     = 10 * time.Second
	maxProbe   = 30 * time.Second
)

// maxSentTimes bounds the send times an entry link remembers (the blocks on their way).
const maxSentTimes = 4096

// entryLink is the entry's link of one session: its frames go as forward packets to the exit,
// with the reply blocks the exit answers on.
type entryLink struct {
	c  *Carrier
	to peer.ID

	mu sync.Mutex
	// parts is held while a block takes its number and its two parts are sent, so that the
	// parts leave in the numbers' order.
	parts   sync.Mutex
	s       sender
	id      session.ID
	known   bool // id was read from the first frame (the SYN)
	ended   bool
	opening bool // only the SYN's blocks went: the rest of the stock waits for an answer past the SYN|ACK
	queue   []fwdJob
	// blocksBusy is how many blocks are being made and sent; framesRun how many frames went
	// since the last block while a block waited.
	blocksBusy, framesRun int
	number                uint16 // the next block's number, taken when the block is made
	started               time.Time
	rtt                   time.Duration // from the SYN to the first answer; 0: not measured yet
	// answers are the arrival times of the answers of the last round trip, frames the times
	// the entry's frames of the last round trip were queued.
	answers, frames []time.Time
	// stock, received and toCome are what the exit said in its last answer.
	stock, toCome int
	// exitDone says an answer carried the exit's FIN: its direction ended, and it answers no
	// more than acknowledgements, for which it needs no initial stock.
	exitDone bool
	received uint16
	// sent are the last blocks queued, the newest last; total counts them all.
	sent  []*sentBlock
	total uint64
	// probe sends a block when answers stop coming, every probeWait, doubling.
	probe     *time.Timer
	probeWait time.Duration
	// answersReceived counts the answers, lastAnswer is when the last came; lastFailure is the
	// last send the network failed.
	answersReceived uint64
	lastAnswer      time.Time
	lastFailure     failure
	// writtenOff counts the blocks the entry no longer expects an answer on: those it failed to
	// make or send, those through a relayer that went down, and those taken for lost (at most
	// lossAllowance a round trip, the last at writtenAt). total − answersReceived − writtenOff
	// is the entry's own count of the blocks the exit may hold (outstanding).
	writtenOff uint64
	writtenAt  time.Time
	// neverCounted counts the blocks of writtenOff the exit will never count as received:
	// those that failed, and those taken for lost (which may be lost answers instead: then the
	// entry takes fewer blocks for on their way than are, and sends a few more, within its
	// limit).
	neverCounted uint64
}

// fwdJob is a frame to send, or (frame nil) a reply block to make and send.
type fwdJob struct {
	frame []byte
	block *sentBlock // the record of the block, which learns its relayers once it is made
}

// sentBlock is a reply block the entry queued: when, and over which relayers (once made).
type sentBlock struct {
	at       time.Time
	relayers []peer.ID
	dead     bool // through a relayer that went down, or failed: written off
}

var _ session.Ender = (*entryLink)(nil)

func (l *entryLink) MaxFrame() int { return packet.MaxMessageSize }

// Send queues frame. The first frame is the SYN: it names the session, which the link then
// registers, and goes between reply blocks (OpeningBlocks in all), so that the exit can answer
// it and the first frame after it at once; the rest of the initial stock waits for the exit's
// answer past its SYN|ACK (answered), so that its packets do not hold up the SYN's answer and
// the first request's at the relayers.
func (l *entryLink) Send(_ context.Context, frame []byte) error {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended && !l.known {
		return ErrEnded
	}
	if !l.known {
		if len(frame) < 1+session.IDSize {
			return ErrMalformed
		}
		copy(l.id[:], frame[1:])
		l.known, l.started, l.toCome = true, now, maxByteField
		l.c.mu.Lock()
		l.c.entries[l.id] = l
		l.c.mu.Unlock()
		l.addBlocks(1, now)
		l.queue = append(l.queue, fwdJob{frame: frame})
		l.addBlocks(l.c.cfg.OpeningBlocks-1, now)
		l.opening = l.c.cfg.OpeningBlocks < l.c.cfg.InitialBlocks
		l.probeWait = 2 * initialRTT
		l.probe = time.AfterFunc(l.probeWait, l.probed)
		l.s.run(l.c, &l.mu, l.next)
		return nil
	}
	if len(l.queue) >= l.c.cfg.QueueSize {
		l.dropOldest()
	}
	l.frames = trim(append(l.frames, now), now.Add(-l.roundTrip()))
	l.queue = append(l.queue, fwdJob{frame: frame})
	l.s.run(l.c, &l.mu, l.next)
	return nil
}

// probed sends a block when no answer came for probeWait (the exit may have used its last
// one and wait for more), and waits twice as long for the next, up to maxProbe.
func (l *entryLink) probed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	// The blocks the exit holds may have died with a relayer, or been lost: supply replaces
	// those, else one block goes, with which an exit that used its last one can answer.
	if now := time.Now(); l.supply(now, true) == 0 {
		l.addBlocks(1, now)
		l.s.run(l.c, &l.mu, l.next)
	}
	l.probeWait = min(2*l.probeWait, maxProbe)
	l.probe.Reset(l.probeWait)
}

// dropOldest drops the oldest queued frame (not a block: blocks are what lets the exit answer).
// l.mu is held.
func (l *entryLink) dropOldest() {
	for i, j := range l.queue {
		if j.frame != nil {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			l.c.count(func(s *Stats) { s.FramesDropped++ })
			return
		}
	}
}

// addBlocks queues n reply blocks. l.mu is held.
func (l *entryLink) addBlocks(n int, now time.Time) {
	for range n {
		b := &sentBlock{at: now}
		l.queue = append(l.queue, fwdJob{block: b})
		l.sent = append(l.sent, b)
		l.total++
	}
	if len(l.sent) > maxSentTimes {
		l.sent = append(l.sent[:0], l.sent[len(l.sent)-maxSentTimes:]...)
	}
}

// answered takes the exit's report from an answer (its stock, its count of blocks received,
// the frames it has to send), and sends the blocks the answers need: InitialBlocks and twice
// the answers of the last round trip, but no more than the frames to come (at most MaxStock),
// less what the exit holds and what is on its way to it. Blocks the exit has not counted yet are
// on their way unless they left more than four round trips (at least two seconds) ago: those
// are taken for lost.
func (l *entryLink) answered(a answer) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if l.rtt == 0 {
		l.rtt = min(max(now.Sub(l.started), minRTT), maxRTT)
	}
	l.probeWait = max(2*l.rtt, 500*time.Millisecond)
	l.probe.Reset(l.probeWait)
	l.answersReceived++
	l.lastAnswer = now
	l.answers = trim(append(l.answers, now), now.Add(-l.rtt))
	l.stock, l.received, l.toCome = a.stock, a.received, a.toCome
	if f, err := session.Decode(a.segment); err == nil && f.Flags&session.FlagFIN != 0 {
		l.exitDone = true
	}
	if l.opening {
		// The SYN's answer: the rest of the initial stock goes with the next answer (or the
		// probe), so that it does not hold up the first request and its answer, and it does not
		// go at all when that answer ends the exit's direction (exitDone). An exit that holds no
		// block for that answer gets one now (the second opening block had not come).
		l.opening = false
		if a.stock == 0 && l.outstanding() == 0 {
			l.addBlocks(1, now)
			l.s.run(l.c, &l.mu, l.next)
		}
		return
	}
	l.supply(now, false)
}

// supply sends the blocks the exit needs, by its last report within the entry's own count
// (PROTOCOL.md §9.7). By the report: the answers of the last round trip decide how many it
// should hold; it holds what it said, less the blocks through a relayer that is down; blocks
// the exit had not counted are on their way unless they left more than four round trips (at
// least two seconds) ago: those are taken for lost. By the entry's count: every answer used one
// block, so the exit holds at most the blocks sent less the answers and the blocks written off
// (outstanding), whatever it says, and the entry keeps that at most limit; an exit that reports
// a stock of none gets a block an answer, not a stock an answer. Blocks or answers lost leave
// the count above what an honest exit holds: once a round trip in which the limit held back
// blocks the report asks for, a few of them (lossAllowance) are taken for lost. probe says no
// answer came for a while. It returns how many it sent. l.mu is held.
func (l *entryLink) supply(now time.Time, probe bool) int {
	l.answers = trim(l.answers, now.Add(-l.roundTrip())) // a probe comes with no answer
	l.frames = trim(l.frames, now.Add(-l.roundTrip()))
	// The blocks the exit has not counted: those on their way and those lost. Without the ones
	// the entry knows lost, a block lost would be taken for on its way, each time for the
	// newest block sent, as long as the entry sends any.
	uncounted := int(uint16(l.total-l.neverCounted) - l.received)
	if uncounted >= 1<<15 { // the exit counted blocks taken for lost: their answers were
		uncounted = 0
	}
	uncounted = min(uncounted, len(l.sent))
	onTheWay, dead := 0, 0
	lost := now.Add(-max(4*l.roundTrip(), 2*time.Second))
	memo := map[peer.ID]bool{}
	down := func(id peer.ID) bool {
		d, ok := memo[id]
		if !ok {
			d = l.c.cfg.Network.Down(id)
			memo[id] = d
		}
		return d
	}
	// The blocks the exit may still hold are among the last ones sent: at most MaxStock there
	// and as many on their way.
	first := max(len(l.sent)-2*l.c.cfg.MaxStock, 0)
	for i := first; i < len(l.sent); i++ {
		b := l.sent[i]
		switch {
		case l.through(b, down):
			dead++ // useless wherever it is: at the exit (which keeps it), on its way, or used
			l.writeOff(b)
		case i >= len(l.sent)-uncounted && b.at.After(lost):
			onTheWay++
		}
	}
	// The exit answers on its newest blocks first: blocks through a relayer that went down
	// since are its oldest, and count for nothing. It cannot hold more than the entry counts.
	out := l.outstanding()
	stock := min(max(l.stock-dead, 0), out)
	want := l.want()
	need := want - stock - onTheWay
	if limit := l.limit(want); need > limit-out {
		// What the count holds beyond what the exit reports holding, what is on its way and a
		// round trip's answers (on theirs) was lost (blocks, answers), or the exit hoards it: a
		// little of it goes a round trip.
		if missing := out - stock - onTheWay - len(l.answers); missing > 0 && now.Sub(l.writtenAt) >= l.roundTrip() {
			w := uint64(min(missing, l.lossAllowance(probe)))
			l.writtenOff += w
			l.neverCounted += w
			l.writtenAt = now
		}
		need = min(need, limit-l.outstanding())
	}
	need = min(need, l.c.cfg.QueueSize-len(l.queue))
	if need <= 0 {
		return 0
	}
	l.addBlocks(need, now)
	l.s.run(l.c, &l.mu, l.next)
	return need
}

// want is the stock the exit should hold, with the blocks on their way: InitialBlocks, for the
// next answers to start at once, and twice the answers of the last round trip (the answer's
// rate may double in a round trip), but no more of those than the frames the exit said it has
// to send and the frames the entry sent in the last round trip (each may be acknowledged), so
// that the supply ends with the answer, not a round trip of the rate later, and an upload's
// acknowledgements still find blocks. Once the exit's direction ended (exitDone) no answer is
// to start: the rate's share alone, and 2 (for the acknowledgement of the entry's FIN). At most
// MaxStock. l.mu is held.
func (l *entryLink) want() int {
	rate := min(2*len(l.answers), l.toCome+len(l.frames))
	if l.exitDone {
		return min(max(rate, 2), l.c.cfg.MaxStock)
	}
	return min(l.c.cfg.InitialBlocks+rate, l.c.cfg.MaxStock)
}

// outstanding is the entry's own count of the blocks the exit may hold unused: those sent (or
// queued) less the answers, each of which used one, and the blocks written off. It includes the
// blocks on their way, the answers on theirs, and the blocks and answers lost and not written
// off yet. l.mu is held.
func (l *entryLink) outstanding() int {
	return max(int(int64(l.total)-int64(l.answersReceived)-int64(l.writtenOff)), 0)
}

// limit is the most blocks the entry leaves outstanding, for a stock of want at the exit:
// half as many again (for the blocks and answers on their way, and those lost and not written
// off yet), at most MaxStock, and the opening blocks. l.mu is held.
func (l *entryLink) limit(want int) int {
	return min(want+want/2, l.c.cfg.MaxStock) + l.c.cfg.OpeningBlocks
}

// lossAllowance is how many blocks the entry takes for lost in a round trip at most: a quarter
// of the answers of the last round trip (a loss of 5 % each way loses about 15 % of the blocks
// and answers), and when no answer came for a while (probe) the initial stock more, so that a
// session whose blocks were lost gets going again. An exit that hoards blocks gets no more than
// that: a block in four answers, and InitialBlocks a probe, which comes after twice the round
// trip (at least 500 ms) without an answer, and twice as late each time. l.mu is held.
func (l *entryLink) lossAllowance(probe bool) int {
	n := len(l.answers) / 4
	if probe {
		n += l.c.cfg.InitialBlocks
	}
	return n
}

// writeOff takes block b out of the count once: it will carry no answer. l.mu is held.
func (l *entryLink) writeOff(b *sentBlock) {
	if !b.dead {
		b.dead = true
		l.writtenOff++
	}
}

// roundTrip is the measured round trip, or initialRTT before the first answer. l.mu is held.
func (l *entryLink) roundTrip() time.Duration {
	if l.rtt == 0 {
		return initialRTT
	}
	return l.rtt
}

// through reports whether block b goes over a peer that is down. l.mu is held.
func (l *entryLink) through(b *sentBlock, down func(peer.ID) bool) bool {
	for _, r := range b.relayers {
		if down(r) {
			return true
		}
	}
	return false
}

// trim drops the times before since from ts, which is in order.
func trim(ts []time.Time, since time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(since) {
		i++
	}
	return append(ts[:0], ts[i:]...)
}

// next is the sender's next job, in the queue's order but for two rules: a frame goes before
// the blocks queued ahead of it, unless two frames went since the last block (a frame is sent
// at once, a block is made first: a frame waits for no block, and the blocks still flow); and
// at most Parallel − 1 blocks (at least one) are made and sent at once, so that a frame always
// has a slot.
// l.mu is held.
func (l *entryLink) next() func(context.Context) {
	firstFrame, firstBlock := -1, -1
	for k, j := range l.queue {
		switch {
		case j.frame != nil && firstFrame < 0:
			firstFrame = k
		case j.frame == nil && firstBlock < 0:
			firstBlock = k
		}
		if firstFrame >= 0 && firstBlock >= 0 {
			break
		}
	}
	i := firstFrame
	if firstBlock >= 0 && l.blocksBusy < max(l.c.cfg.Parallel-1, 1) && (firstFrame < 0 || l.framesRun >= 2) {
		i = firstBlock
	}
	if i < 0 {
		return nil
	}
	j := l.queue[i]
	l.queue = append(l.queue[:i], l.queue[i+1:]...)
	net, to, id := l.c.cfg.Network, l.to, l.id
	if j.frame != nil {
		if firstBlock >= 0 {
			l.framesRun++
		}
		return func(ctx context.Context) {
			if err := net.SendFrame(ctx, to, j.frame); err != nil {
				l.setFailure(l.c.failed(err, func(s *Stats) { s.FramesDropped++ }))
				return
			}
			l.c.count(func(s *Stats) { s.FramesSent++ })
		}
	}
	l.framesRun = 0
	l.blocksBusy++
	return func(ctx context.Context) {
		defer func() {
			l.mu.Lock()
			l.blocksBusy--
			l.mu.Unlock()
		}()
		block, relayers, err := net.NewSessionReplyBlock(ctx, to)
		if err == nil {
			block, err = carry(block)
		}
		if err != nil {
			l.blockFailed(j.block, l.c.failed(err, func(s *Stats) { s.BlocksFailed++ }))
			return
		}
		// The block takes its number now, not when it was queued, and its parts leave before the
		// next block's: blocks take unequal times to make, and parts sent out of their numbers'
		// order by as many blocks as the others make meanwhile may reach the exit too far behind
		// the newest (it drops them).
		l.parts.Lock()
		defer l.parts.Unlock()
		l.mu.Lock()
		j.block.relayers = relayers
		number := l.number
		l.number = (l.number + 1) % blockNumbers
		l.mu.Unlock()
		for half := range uint8(2) {
			if err := net.SendFrame(ctx, to, encodePart(id, number, half, block[int(half)*partData:][:partData])); err != nil {
				l.blockFailed(j.block, l.c.failed(err, func(s *Stats) { s.BlocksFailed++ }))
				return
			}
		}
		l.c.count(func(s *Stats) { s.BlocksSent++ })
	}
}

// blockFailed records a block the entry failed to make or send: the exit never gets it.
func (l *entryLink) blockFailed(b *sentBlock, f failure) {
	l.mu.Lock()
	l.lastFailure = f
	if !b.dead {
		l.neverCounted++
	}
	l.writeOff(b)
	l.mu.Unlock()
}

// setFailure records the link's last failed send.
func (l *entryLink) setFailure(f failure) {
	l.mu.Lock()
	l.lastFailure = f
	l.mu.Unlock()
}

// linkStats is Carrier.Link for an entry link.
func (l *entryLink) linkStats() LinkStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := LinkStats{Entry: true, Stock: l.stock, AnswersReceived: l.answersReceived, Outstanding: l.outstanding(),
		WrittenOff: l.writtenOff, LastAnswer: l.lastAnswer, LastFailure: l.lastFailure.reason, LastFailureAt: l.lastFailure.at}
	for _, j := range l.queue {
		if j.frame != nil {
			st.Queued++
		} else {
			st.Blocks++
		}
	}
	st.BlocksSent = l.total - uint64(st.Blocks)
	return st
}

// Ended forgets the session: the frames still queued (a UDP flow's FIN, an RST) are sent, the
// blocks not. Frames sent later (the mux's answers to the session's late frames: its RST, its
// last acknowledgement) go without blocks.
func (l *entryLink) Ended(session.Reason) {
	l.mu.Lock()
	l.ended = true
	var frames []fwdJob
	for _, j := range l.queue {
		if j.frame != nil {
			frames = append(frames, j)
		}
	}
	l.queue, l.sent, l.answers, l.frames = frames, nil, nil, nil
	if l.probe != nil {
		l.probe.Stop()
	}
	id, known := l.id, l.known
	l.mu.Unlock()
	if known {
		l.c.mu.Lock()
		if l.c.entries[id] == l {
			delete(l.c.entries, id)
		}
		l.c.mu.Unlock()
	}
}
