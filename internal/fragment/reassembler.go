package fragment

import (
	"container/list"
	"fmt"
	"slices"
	"time"
)

// Limits bound a Reassembler. Every field but BlockSize is required (positive).
type Limits struct {
	// MaxMessages is how many incomplete messages and replies (and ids of which only ack
	// block parts arrived) are held at once. A new one beyond it evicts the least recently
	// active.
	MaxMessages int
	// MaxBytes bounds the bytes held: every fragment chunk, ack block part and whole ack block,
	// each counted as its length plus PieceOverhead. A piece that would pass it evicts (see
	// Reassembler). A message whose content plus PieceOverhead per fragment passes it alone
	// is refused (ErrTooLarge).
	MaxBytes int
	// Timeout is how long an incomplete message is kept without a new piece.
	Timeout time.Duration
	// RememberFor is how long a completed message's id is remembered after it completed:
	// its fragments are then duplicates, its Status is complete and ack blocks arriving for
	// it are kept.
	RememberFor time.Duration
	// MaxRemembered is how many completed ids are remembered at most; beyond it the one
	// completed first is forgotten.
	MaxRemembered int
	// MaxAckBlocks is how many whole, unused ack blocks are kept per message (those of the
	// highest rounds), and how many rounds' blocks are assembled from parts at once.
	MaxAckBlocks int
	// BlockSize, when not 0, is the only size of reply block accepted, both the application's
	// (Fragment.BlockSize) and ack blocks; other sizes are ErrMalformed.
	BlockSize int
}

// DefaultLimits are a starting point for a node receiving messages of up to 64 KiB: 64
// messages in progress within 16 MiB, a 5-minute timeout, completed ids remembered 30 minutes
// (4,096 at most), 2 ack blocks kept per message.
func DefaultLimits() Limits {
	return Limits{
		MaxMessages:   64,
		MaxBytes:      16 << 20,
		Timeout:       5 * time.Minute,
		RememberFor:   30 * time.Minute,
		MaxRemembered: 4096,
		MaxAckBlocks:  2,
	}
}

// PieceOverhead is what a Reassembler counts against Limits.MaxBytes for each piece it holds
// (fragment chunk, ack block part, ack block) besides the piece's bytes: its bookkeeping, so
// that tiny pieces cannot hold more memory than the budget says.
const PieceOverhead = 64

// recentRounds is how many rounds whose ack block became whole a message remembers, so that
// their parts arriving again are duplicates instead of a block assembled twice.
const recentRounds = 16

// ResultKind says what Reassembler.Add did with a frame.
type ResultKind uint8

// Result kinds.
const (
	// Stored: a new fragment, reply chunk or ack block part was stored; nothing is whole yet.
	Stored ResultKind = iota + 1
	// Duplicate: the piece was held already, or its message (or ack block round) is already
	// complete; nothing changed. For a fragment of a completed message the sender has not
	// heard the acknowledgement: Status and TakeAckBlock answer it.
	Duplicate
	// Complete: the frame was its message's (or reply's) last missing piece; Body and Blocks
	// hold it. Reported once per id while the id is remembered.
	Complete
	// AckBlock: the frame was the last missing part of the ack block of (ID, Round), now held
	// for TakeAckBlock (if it is among the MaxAckBlocks newest).
	AckBlock
)

// String names the kind.
func (k ResultKind) String() string {
	switch k {
	case Stored:
		return "stored"
	case Duplicate:
		return "duplicate"
	case Complete:
		return "complete"
	case AckBlock:
		return "ack block"
	}
	return fmt.Sprintf("result %d", uint8(k))
}

// Result is what Reassembler.Add did with a frame.
type Result struct {
	Kind ResultKind
	// ID is the frame's message ID; Reply and Seq say it was a Reply (an answer to message
	// ID, number Seq).
	ID    ID
	Reply bool
	Seq   uint8
	// Round is an ack block part's round.
	Round uint16
	// Received and Total are the message's fragments held and expected after a fragment or
	// reply chunk (Total is 0 while only ack block parts arrived).
	Received, Total int
	// Body and Blocks are a Complete message's body and the application's reply blocks (none
	// for a reply). They share one new array, not the frames' memory.
	Body   []byte
	Blocks [][]byte
	// Evicted lists the incomplete messages dropped to make room for this frame, whatever the
	// result, so the application can be told they arrived incomplete.
	Evicted []Incomplete
}

// Incomplete is a message (or reply) dropped before it was whole: its fragments received and
// expected.
type Incomplete struct {
	ID              ID
	Reply           bool
	Seq             uint8
	Received, Total int
}

// Reassembler collects the frames arriving at a recipient (Fragment, Reply, AckBlockPart) and
// reports each message once, when its last fragment arrives. It keeps, per message ID, the
// fragments received (Status), the whole ack blocks not yet used (TakeAckBlock) and, once a
// message is complete, its id for RememberFor so that fragments sent again are duplicates and
// the sender can still be acknowledged.
//
// Memory is bounded by the Limits. A new incomplete message beyond MaxMessages evicts the
// least recently active incomplete one (the one whose last new piece is oldest). A piece that
// would pass MaxBytes first drops the ack blocks held for completed messages (completed first,
// first), then evicts least recently active incomplete messages, never the piece's own
// message; every evicted message with a fragment is reported in Result.Evicted. When the
// piece's own message holds too much for it, its own ack blocks of the lowest rounds go first
// (whole, then partial); ErrFull is left for an ack block part of a message whose fragments
// fill MaxBytes. A flood of made-up ids so costs the oldest incomplete messages, not memory. Evicting the oldest rather than refusing the new
// keeps a node that was flooded once receiving as soon as the flood stops, without waiting for
// Timeout.
//
// There is no clock inside: Add and Expire take the time, which should not go backwards. A
// Reassembler is not safe for concurrent use.
type Reassembler struct {
	lim        Limits
	entries    map[key]*entry
	incomplete *list.List // of *entry, least recently active first
	completed  *list.List // of *entry, completed first first
	bytes      int        // charged against MaxBytes
	doneBytes  int        // of bytes, those of completed entries (ack data)
}

type key struct {
	id    ID
	reply bool
	seq   uint8
}

// entry is one message's (or reply's) state.
type entry struct {
	key    key
	elem   *list.Element
	done   bool
	active time.Time // last new piece, while incomplete
	doneAt time.Time
	bytes  int // charged, all pieces

	// Fragments; total is 0 until the first arrives.
	total, bodyLen, blocks, blockSize int
	chunk                             int // 0 until a fragment implies it
	got                               []byte
	received                          int
	chunks                            map[uint16][]byte
	chunkBytes                        int // of bytes, the fragments'

	// Ack blocks (messages only).
	partials []*partial
	whole    []ackBlock // ascending rounds
	recent   []uint16
}

// partial is an ack block being assembled from its parts.
type partial struct {
	round uint16
	parts [][]byte
	have  int
	chunk int // a non-last part's length, 0 until one arrives
	bytes int
}

type ackBlock struct {
	round uint16
	data  []byte
}

// NewReassembler returns an empty Reassembler bounded by lim (ErrLimits if a required field is
// not positive).
func NewReassembler(lim Limits) (*Reassembler, error) {
	if lim.MaxMessages <= 0 || lim.MaxBytes <= 0 || lim.Timeout <= 0 || lim.RememberFor <= 0 ||
		lim.MaxRemembered <= 0 || lim.MaxAckBlocks <= 0 || lim.BlockSize < 0 || lim.BlockSize > MaxBlockSize {
		return nil, fmt.Errorf("%w: %+v", ErrLimits, lim)
	}
	return &Reassembler{lim: lim, entries: map[key]*entry{}, incomplete: list.New(), completed: list.New()}, nil
}

// piece is a Fragment's or Reply's fields.
type piece struct {
	index, count, bodyLen, blocks, blockSize, chunk int
	data                                            []byte
}

// Add takes a frame that arrived at time now (a Fragment, Reply or AckBlockPart; an Ack is
// ErrKind) and says what it did (Result). A frame breaking its own rules, or contradicting
// what is held for its message, is ErrMalformed and stored nothing; see Limits for ErrTooLarge
// and ErrFull. The frame's data is copied.
func (r *Reassembler) Add(now time.Time, f Frame) (Result, error) {
	if f == nil {
		return Result{}, fmt.Errorf("%w: no frame", ErrMalformed)
	}
	switch f := f.(type) {
	case Fragment:
		if err := f.check(); err != nil {
			return Result{}, err
		}
		return r.addPiece(now, key{id: f.ID}, piece{index: int(f.Index), count: int(f.Count), bodyLen: int(f.BodyLen),
			blocks: int(f.Blocks), blockSize: int(f.BlockSize), chunk: f.Chunk(), data: f.Data})
	case Reply:
		if err := f.check(); err != nil {
			return Result{}, err
		}
		chunk, _ := chunkOf(int(f.Index), int(f.Count), int(f.BodyLen), len(f.Data))
		return r.addPiece(now, key{id: f.ID, reply: true, seq: f.Seq}, piece{index: int(f.Index), count: int(f.Count),
			bodyLen: int(f.BodyLen), chunk: chunk, data: f.Data})
	case AckBlockPart:
		if err := f.check(); err != nil {
			return Result{}, err
		}
		return r.addPart(now, f)
	}
	return Result{}, fmt.Errorf("%w: %T", ErrKind, f)
}

func (r *Reassembler) addPiece(now time.Time, k key, p piece) (Result, error) {
	res := Result{ID: k.id, Reply: k.reply, Seq: k.seq}
	e := r.entries[k]
	if e != nil && e.done {
		res.Kind, res.Received, res.Total = Duplicate, e.total, e.total
		return res, nil
	}
	content := p.blocks*p.blockSize + p.bodyLen
	if p.count > MaxFragments || content+p.count*PieceOverhead > r.lim.MaxBytes {
		return res, fmt.Errorf("%w: %d bytes in %d fragments", ErrTooLarge, content, p.count)
	}
	if r.lim.BlockSize > 0 && p.blocks > 0 && p.blockSize != r.lim.BlockSize {
		return res, fmt.Errorf("%w: reply blocks of %d bytes, want %d", ErrMalformed, p.blockSize, r.lim.BlockSize)
	}
	if e != nil && e.total > 0 {
		if p.count != e.total || p.bodyLen != e.bodyLen || p.blocks != e.blocks || p.blockSize != e.blockSize ||
			p.chunk != 0 && e.chunk != 0 && p.chunk != e.chunk {
			return res, fmt.Errorf("%w: fragment %d of %d disagrees with its message's", ErrMalformed, p.index, p.count)
		}
		if hasBit(e.got, p.index) {
			res.Kind, res.Received, res.Total = Duplicate, e.received, e.total
			return res, nil
		}
	}
	cost := len(p.data) + PieceOverhead
	e, evicted, err := r.admit(k, e, cost)
	res.Evicted = evicted
	if err != nil {
		return res, err
	}
	if e.total == 0 {
		e.total, e.bodyLen, e.blocks, e.blockSize = p.count, p.bodyLen, p.blocks, p.blockSize
		e.got = make([]byte, (p.count+7)/8)
		e.chunks = make(map[uint16][]byte)
	}
	if e.chunk == 0 {
		e.chunk = p.chunk
	}
	e.got[p.index/8] |= 1 << (p.index % 8)
	e.chunks[uint16(p.index)] = slices.Clone(p.data)
	e.received++
	e.chunkBytes += cost
	r.charge(e, cost)
	r.touch(now, e)
	res.Received, res.Total = e.received, e.total
	if e.received < e.total {
		res.Kind = Stored
		return res, nil
	}
	r.complete(now, e, &res)
	return res, nil
}

// admit returns the entry for k (e, or a new one when e is nil) with room for cost more bytes,
// and the incomplete messages evicted for it.
func (r *Reassembler) admit(k key, e *entry, cost int) (*entry, []Incomplete, error) {
	held := 0
	if e != nil {
		held = e.chunkBytes // its ack data can give way
	}
	if held+cost > r.lim.MaxBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes of fragments held for this message, %d more", ErrFull, held, cost)
	}
	for e != nil && e.bytes+cost > r.lim.MaxBytes {
		r.dropOldestAckData(e)
	}
	var evicted []Incomplete
	if e == nil {
		for r.incomplete.Len() >= r.lim.MaxMessages {
			v := r.incomplete.Front().Value.(*entry)
			evicted = report(evicted, v)
			r.remove(v)
		}
		e = &entry{key: k}
		r.entries[k] = e
		e.elem = r.incomplete.PushBack(e)
	}
	for r.bytes+cost > r.lim.MaxBytes {
		if r.doneBytes > 0 {
			if v := r.oldestDoneWithBytes(e); v != nil {
				r.dropAckData(v)
				continue
			}
		}
		v := r.incomplete.Front().Value.(*entry)
		if v == e {
			v = r.incomplete.Front().Next().Value.(*entry) // others hold bytes: another exists
		}
		evicted = report(evicted, v)
		r.remove(v)
	}
	return e, evicted, nil
}

func (r *Reassembler) oldestDoneWithBytes(skip *entry) *entry {
	for el := r.completed.Front(); el != nil; el = el.Next() {
		if v := el.Value.(*entry); v != skip && v.bytes > 0 {
			return v
		}
	}
	return nil
}

// dropOldestAckData forgets e's ack block of the lowest round, or else its partial block of
// the lowest round.
func (r *Reassembler) dropOldestAckData(e *entry) {
	if len(e.whole) > 0 {
		r.charge(e, -(len(e.whole[0].data) + PieceOverhead))
		e.whole = slices.Delete(e.whole, 0, 1)
		return
	}
	i := lowestRound(e.partials)
	r.charge(e, -e.partials[i].bytes)
	e.partials = slices.Delete(e.partials, i, i+1)
}

// dropAckData forgets a completed entry's ack block parts and blocks.
func (r *Reassembler) dropAckData(e *entry) {
	r.charge(e, -e.bytes)
	e.partials, e.whole = nil, nil
}

func (r *Reassembler) charge(e *entry, n int) {
	e.bytes += n
	r.bytes += n
	if e.done {
		r.doneBytes += n
	}
}

// touch records a new piece for e: while incomplete, it becomes the most recently active.
func (r *Reassembler) touch(now time.Time, e *entry) {
	if !e.done {
		e.active = now
		r.incomplete.MoveToBack(e.elem)
	}
}

func (r *Reassembler) remove(e *entry) {
	delete(r.entries, e.key)
	if e.done {
		r.completed.Remove(e.elem)
	} else {
		r.incomplete.Remove(e.elem)
	}
	r.charge(e, -e.bytes)
}

// report adds e to list if a fragment of it arrived.
func report(list []Incomplete, e *entry) []Incomplete {
	if e.total == 0 {
		return list
	}
	return append(list, Incomplete{ID: e.key.id, Reply: e.key.reply, Seq: e.key.seq, Received: e.received, Total: e.total})
}

// complete turns e, all of whose fragments are in, into a remembered id and fills res.
func (r *Reassembler) complete(now time.Time, e *entry, res *Result) {
	content := make([]byte, 0, e.blocks*e.blockSize+e.bodyLen)
	for i := range e.total {
		content = append(content, e.chunks[uint16(i)]...)
	}
	r.charge(e, -e.chunkBytes)
	e.chunkBytes, e.chunks, e.got = 0, nil, nil
	r.incomplete.Remove(e.elem)
	e.done, e.doneAt = true, now
	e.elem = r.completed.PushBack(e)
	r.doneBytes += e.bytes
	res.Kind = Complete
	for i := range e.blocks {
		res.Blocks = append(res.Blocks, content[i*e.blockSize:(i+1)*e.blockSize:(i+1)*e.blockSize])
	}
	res.Body = content[e.blocks*e.blockSize:]
	for r.completed.Len() > r.lim.MaxRemembered {
		r.remove(r.completed.Front().Value.(*entry))
	}
}

func (r *Reassembler) addPart(now time.Time, p AckBlockPart) (Result, error) {
	k := key{id: p.ID}
	res := Result{ID: p.ID, Round: p.Round}
	e := r.entries[k]
	var pa *partial
	if e != nil {
		res.Received, res.Total = e.received, e.total
		if slices.Contains(e.recent, p.Round) {
			res.Kind = Duplicate
			return res, nil
		}
		if i := slices.IndexFunc(e.partials, func(pa *partial) bool { return pa.round == p.Round }); i >= 0 {
			pa = e.partials[i]
		}
	}
	if pa != nil {
		if int(p.Count) != len(pa.parts) {
			return res, fmt.Errorf("%w: ack block part of %d, round has %d", ErrMalformed, p.Count, len(pa.parts))
		}
		if pa.parts[p.Index] != nil {
			res.Kind = Duplicate
			return res, nil
		}
		if !pa.fits(int(p.Index), len(p.Data)) {
			return res, fmt.Errorf("%w: ack block part %d of %d bytes does not fit the others", ErrMalformed, p.Index, len(p.Data))
		}
	}
	if r.lim.BlockSize > 0 && len(p.Data) > r.lim.BlockSize {
		return res, fmt.Errorf("%w: ack block part of %d bytes, blocks are %d", ErrMalformed, len(p.Data), r.lim.BlockSize)
	}
	cost := len(p.Data) + PieceOverhead
	e, evicted, err := r.admit(k, e, cost)
	res.Evicted = evicted
	if err != nil {
		return res, err
	}
	if pa != nil && !slices.Contains(e.partials, pa) {
		pa = nil // admit dropped it to make room: start the round again
	}
	if pa == nil {
		if len(e.partials) >= r.lim.MaxAckBlocks {
			i := lowestRound(e.partials)
			r.charge(e, -e.partials[i].bytes)
			e.partials = slices.Delete(e.partials, i, i+1)
		}
		pa = &partial{round: p.Round, parts: make([][]byte, p.Count)}
		e.partials = append(e.partials, pa)
	}
	pa.parts[p.Index] = slices.Clone(p.Data)
	pa.have++
	if int(p.Index) < len(pa.parts)-1 {
		pa.chunk = len(p.Data)
	}
	pa.bytes += cost
	r.charge(e, cost)
	r.touch(now, e)
	if pa.have < len(pa.parts) {
		res.Kind = Stored
		return res, nil
	}

	e.partials = slices.DeleteFunc(e.partials, func(x *partial) bool { return x == pa })
	r.charge(e, -pa.bytes)
	e.recent = append(e.recent, pa.round)
	if len(e.recent) > recentRounds {
		e.recent = slices.Delete(e.recent, 0, 1)
	}
	block := slices.Concat(pa.parts...)
	if r.lim.BlockSize > 0 && len(block) != r.lim.BlockSize {
		return res, fmt.Errorf("%w: ack block of %d bytes, want %d", ErrMalformed, len(block), r.lim.BlockSize)
	}
	r.charge(e, len(block)+PieceOverhead) // no more than its parts were
	i, _ := slices.BinarySearchFunc(e.whole, pa.round, func(b ackBlock, round uint16) int { return int(b.round) - int(round) })
	e.whole = slices.Insert(e.whole, i, ackBlock{round: pa.round, data: block})
	if len(e.whole) > r.lim.MaxAckBlocks {
		r.charge(e, -(len(e.whole[0].data) + PieceOverhead))
		e.whole = slices.Delete(e.whole, 0, 1)
	}
	res.Kind = AckBlock
	return res, nil
}

// fits reports whether a part of n bytes at index fits the parts held: every part but the
// last has one length, the last no more.
func (pa *partial) fits(index, n int) bool {
	last := len(pa.parts) - 1
	if index < last {
		return (pa.chunk == 0 || n == pa.chunk) && (pa.parts[last] == nil || len(pa.parts[last]) <= n)
	}
	return pa.chunk == 0 || n <= pa.chunk
}

func lowestRound(ps []*partial) int {
	low := 0
	for i, p := range ps {
		if p.round < ps[low].round {
			low = i
		}
	}
	return low
}

// Status is the acknowledgement of message id as things stand: the fragments received, or
// Complete once the message was (and while its id is remembered). Round is left 0 for the
// caller to set to the round of the ack block it sends it on. ok is false for an id of which
// no fragment is held.
func (r *Reassembler) Status(id ID) (ack Ack, ok bool) {
	e := r.entries[key{id: id}]
	if e == nil || e.total == 0 {
		return Ack{}, false
	}
	ack = Ack{ID: id, Total: uint16(e.total), Complete: e.done}
	if !e.done {
		ack.Bitmap = slices.Clone(e.got)
	}
	return ack, true
}

// TakeAckBlock hands out the unused ack block of message id of the highest round, once: the
// block is forgotten. ok is false when none is held.
func (r *Reassembler) TakeAckBlock(id ID) (block []byte, round uint16, ok bool) {
	e := r.entries[key{id: id}]
	if e == nil || len(e.whole) == 0 {
		return nil, 0, false
	}
	b := e.whole[len(e.whole)-1]
	e.whole = e.whole[:len(e.whole)-1]
	r.charge(e, -(len(b.data) + PieceOverhead))
	return b.data, b.round, true
}

// Expire drops the incomplete messages without a new piece for Limits.Timeout at now and
// returns those of which a fragment had arrived (least recently active first), and forgets
// the completed ids older than Limits.RememberFor. The caller calls it periodically.
func (r *Reassembler) Expire(now time.Time) []Incomplete {
	var out []Incomplete
	for el := r.incomplete.Front(); el != nil; {
		e, next := el.Value.(*entry), el.Next()
		if now.Sub(e.active) >= r.lim.Timeout {
			out = report(out, e)
			r.remove(e)
		}
		el = next
	}
	for el := r.completed.Front(); el != nil; {
		e, next := el.Value.(*entry), el.Next()
		if now.Sub(e.doneAt) >= r.lim.RememberFor {
			r.remove(e)
		}
		el = next
	}
	return out
}

// InProgress is the number of incomplete messages held (including ids of which only ack block
// parts arrived).
func (r *Reassembler) InProgress() int { return r.incomplete.Len() }

// Remembered is the number of completed ids remembered.
func (r *Reassembler) Remembered() int { return r.completed.Len() }

// Bytes is what the held pieces count against Limits.MaxBytes.
func (r *Reassembler) Bytes() int { return r.bytes }

func hasBit(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }
