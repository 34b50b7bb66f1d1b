package store

import (
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The inbox: the messages delivered to this node, kept until the app reads them, so that
// a message the node acknowledged survives kill -9. Each message gets a sequence number,
// the app's cursor: strictly increasing, never reused (the last one handed out is a
// counter of its own, kept through deletes and restarts).
//
// A sender resends a message it saw no acknowledgement for, also after the app read the
// first copy, so the inbox remembers the id of every message it deleted (the app read it)
// for the next InboxSeenKept deletions: a count, not a time, so the bound holds whatever
// the clock does and whatever the traffic (100,000 ids take some 10 MB on disk). At the
// default quotas that is ten full inboxes; a sender's resends end within its retry window
// (minutes), long before a node reads 100,000 messages. The ids of stored messages are
// always known.
var (
	// seq (8) → the message record (encodeInbox)
	bucketInbox = bucket("inbox.messages")
	// id (16) → seq (8): every stored message and every remembered (seen) one
	bucketInboxIDs = bucket("inbox.ids")
	// seq (8) → id (16): the remembered messages, oldest first
	bucketInboxSeen = bucket("inbox.seen")
	// counter name → uint64 (8)
	bucketInboxMeta = bucket("inbox.meta")
)

// Counter names in bucketInboxMeta.
var (
	counterInboxSeq   = []byte("seq")   // the last seq handed out
	counterInboxCount = []byte("count") // messages in bucketInbox
	counterInboxBytes = []byte("bytes") // their bodies and reply blocks
	counterInboxSeen  = []byte("seen")  // entries in bucketInboxSeen
)

// Bounds of the inbox.
const (
	// DefaultInboxMessages and DefaultInboxBytes are the inbox quota until SetInboxQuota.
	DefaultInboxMessages = 10_000
	DefaultInboxBytes    = 256 << 20
	// InboxSeenKept is how many deleted messages' ids the inbox remembers (SeenInbox).
	InboxSeenKept = 100_000
	// MaxInboxList is the most messages one ListInbox returns.
	MaxInboxList = 1000
	// MaxReplyBlocks is the most reply blocks one inbox message carries.
	MaxReplyBlocks = 1000
)

// InboxMessage is a message delivered to this node.
type InboxMessage struct {
	// Seq is the inbox's sequence number of the message, assigned by PutInbox (which
	// ignores the field).
	Seq uint64
	// ID is the sender's message id: the inbox stores one message per id.
	ID [16]byte
	// Received is when this node received it (stored to the millisecond).
	Received time.Time
	// SentAt is the sender's timestamp, unix milliseconds.
	SentAt uint64
	// Body is the message (untrusted bytes).
	Body []byte
	// Reply says the message answers one of this node's messages: the one with id InReplyTo.
	Reply     bool
	InReplyTo [16]byte
	// ReplyBlocks are the anonymous reply blocks that came with the message, each usable
	// once (TakeReplyBlock); none is empty.
	ReplyBlocks [][]byte
}

// size is what the message counts against the inbox's byte quota.
func (m *InboxMessage) size() uint64 {
	n := uint64(len(m.Body))
	for _, b := range m.ReplyBlocks {
		n += uint64(len(b))
	}
	return n
}

// The inbox record, version 1: version (1) ‖ id (16) ‖ received (8, unix ms) ‖ sent at (8)
// ‖ flags (1; bit 0: reply, the others zero) ‖ in reply to (16) ‖ body (4-byte length ‖
// bytes) ‖ the number of reply blocks (4) ‖ each block (4-byte length ‖ bytes, at least 1).
const (
	inboxVersion   = 1
	inboxFlagReply = 1
	inboxFixedLen  = 1 + 16 + 8 + 8 + 1 + 16
)

func encodeInbox(m *InboxMessage) ([]byte, error) {
	if len(m.ReplyBlocks) > MaxReplyBlocks {
		return nil, fmt.Errorf("%w: %d reply blocks, at most %d", ErrInvalid, len(m.ReplyBlocks), MaxReplyBlocks)
	}
	if len(m.Body) > maxRecordInt {
		return nil, fmt.Errorf("%w: body of %d bytes", ErrInvalid, len(m.Body))
	}
	n := inboxFixedLen + 4 + len(m.Body) + 4
	for _, b := range m.ReplyBlocks {
		if len(b) == 0 || len(b) > maxRecordInt {
			return nil, fmt.Errorf("%w: reply block of %d bytes", ErrInvalid, len(b))
		}
		n += 4 + len(b)
	}
	v := make([]byte, 0, n)
	v = append(v, inboxVersion)
	v = append(v, m.ID[:]...)
	v = appendMillis(v, m.Received)
	v = binary.BigEndian.AppendUint64(v, m.SentAt)
	var flags byte
	if m.Reply {
		flags |= inboxFlagReply
	}
	v = append(v, flags)
	v = append(v, m.InReplyTo[:]...)
	v = appendLenBytes(v, m.Body)
	v = binary.BigEndian.AppendUint32(v, uint32(len(m.ReplyBlocks)))
	for _, b := range m.ReplyBlocks {
		v = appendLenBytes(v, b)
	}
	return v, nil
}

// decodeInbox decodes the record of the message seq; the result shares no memory with v.
func decodeInbox(seq uint64, v []byte) (InboxMessage, error) {
	m := InboxMessage{Seq: seq}
	r := recordReader{b: v}
	if ver := r.u8(); ver != inboxVersion && r.err == nil {
		return m, fmt.Errorf("inbox message %d: %w: version %d", seq, ErrCorrupt, ver)
	}
	m.ID = r.id()
	m.Received = r.millis()
	m.SentAt = r.u64()
	flags := r.u8()
	if flags&^inboxFlagReply != 0 && r.err == nil {
		return m, fmt.Errorf("inbox message %d: %w: flags %#x", seq, ErrCorrupt, flags)
	}
	m.Reply = flags&inboxFlagReply != 0
	m.InReplyTo = r.id()
	m.Body = r.lenBytes()
	n := r.count()
	if n > MaxReplyBlocks && r.err == nil {
		return m, fmt.Errorf("inbox message %d: %w: %d reply blocks", seq, ErrCorrupt, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		b := r.lenBytes()
		if b == nil && r.err == nil {
			return m, fmt.Errorf("inbox message %d: %w: empty reply block", seq, ErrCorrupt)
		}
		m.ReplyBlocks = append(m.ReplyBlocks, b)
	}
	if err := r.end(); err != nil {
		return m, fmt.Errorf("inbox message %d: %w", seq, err)
	}
	return m, nil
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// SetInboxQuota bounds the inbox to maxMessages messages and maxBytes bytes of bodies and
// reply blocks (PutInbox refuses a message beyond either with ErrInboxFull). A value below
// 1 sets its default (DefaultInboxMessages, DefaultInboxBytes). Lowering the quota below
// what is stored deletes nothing: PutInbox refuses until the app has read enough.
func (db *DB) SetInboxQuota(maxMessages int, maxBytes int64) {
	if maxMessages < 1 {
		maxMessages = DefaultInboxMessages
	}
	if maxBytes < 1 {
		maxBytes = DefaultInboxBytes
	}
	db.inboxMessages.Store(int64(maxMessages))
	db.inboxBytes.Store(maxBytes)
}

// PutInbox stores a delivered message in one transaction, synced to disk before it returns,
// and returns its seq. A message whose id the inbox knows (stored, or deleted and still
// remembered: SeenInbox) is not stored again: dup is true and seq is the seq the first copy
// got (which GetInbox no longer finds once it was deleted). A new message beyond the quota
// (SetInboxQuota) is refused with ErrInboxFull; a dup never is. m.Seq is ignored.
func (db *DB) PutInbox(m InboxMessage) (seq uint64, dup bool, err error) {
	res, err := db.PutInboxBatch([]InboxMessage{m})
	if err != nil {
		return 0, false, err
	}
	return res[0].Seq, res[0].Dup, res[0].Err
}

// InboxPut is what PutInboxBatch did with one message: stored under Seq, or found stored
// already (Dup, the first copy's Seq), or refused (Err: ErrInboxFull or ErrInvalid).
type InboxPut struct {
	Seq uint64
	Dup bool
	Err error
}

// PutInboxBatch stores messages as PutInbox does, in order, in one transaction (one fsync for
// all: at about 10 ms an fsync here, a message a transaction would bound a recipient to some
// 100 messages a second). A message refused (quota, invalid) has its Err set and does not stop
// the others; err is for the transaction, which then stored none.
func (db *DB) PutInboxBatch(ms []InboxMessage) ([]InboxPut, error) {
	res := make([]InboxPut, len(ms))
	vals := make([][]byte, len(ms))
	for i := range ms {
		v, err := encodeInbox(&ms[i])
		if err != nil {
			res[i].Err = fmt.Errorf("store inbox message: %w", err)
		}
		vals[i] = v
	}
	maxMessages, maxBytes := uint64(db.inboxMessages.Load()), uint64(db.inboxBytes.Load())
	err := db.update(func(tx *bolt.Tx) error {
		ids, meta := tx.Bucket(bucketInboxIDs), tx.Bucket(bucketInboxMeta)
		b := tx.Bucket(bucketInbox)
		b.FillPercent = 0.9 // seqs are appended in order
		for i := range ms {
			if vals[i] == nil {
				continue
			}
			m, r := &ms[i], &res[i]
			*r = InboxPut{}
			if s := ids.Get(m.ID[:]); s != nil {
				if len(s) != 8 {
					return fmt.Errorf("inbox id %x: %w: %d bytes", m.ID[:4], ErrCorrupt, len(s))
				}
				r.Seq, r.Dup = binary.BigEndian.Uint64(s), true
				continue
			}
			size := m.size()
			count, bytes := getCount(meta, counterInboxCount), getCount(meta, counterInboxBytes)
			if count+1 > maxMessages {
				r.Err = fmt.Errorf("store inbox message: %w: %d messages stored", ErrInboxFull, count)
				continue
			}
			if bytes+size > maxBytes || bytes+size < bytes {
				r.Err = fmt.Errorf("store inbox message: %w: %d bytes stored, the message has %d", ErrInboxFull, bytes, size)
				continue
			}
			r.Seq = getCount(meta, counterInboxSeq) + 1
			k := seqKey(r.Seq)
			if err := b.Put(k, vals[i]); err != nil {
				return err
			}
			if err := ids.Put(m.ID[:], k); err != nil {
				return err
			}
			if err := meta.Put(counterInboxSeq, k); err != nil {
				return err
			}
			if err := addCount(meta, counterInboxCount, 1); err != nil {
				return err
			}
			if err := addCount(meta, counterInboxBytes, size); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store inbox message: %w", err)
	}
	return res, nil
}

// ListInbox returns the stored messages with a seq above since, oldest first, at most limit
// of them (at most MaxInboxList; none for a limit below 1), and total, the number of
// messages stored.
func (db *DB) ListInbox(since uint64, limit int) (msgs []InboxMessage, total int, err error) {
	limit = min(limit, MaxInboxList)
	err = db.bolt.View(func(tx *bolt.Tx) error {
		total = int(getCount(tx.Bucket(bucketInboxMeta), counterInboxCount))
		if limit < 1 || since == ^uint64(0) {
			return nil
		}
		c := tx.Bucket(bucketInbox).Cursor()
		for k, v := c.Seek(seqKey(since + 1)); k != nil && len(msgs) < limit; k, v = c.Next() {
			if len(k) != 8 {
				return fmt.Errorf("inbox key %x: %w", k, ErrCorrupt)
			}
			m, err := decodeInbox(binary.BigEndian.Uint64(k), v)
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list inbox: %w", err)
	}
	return msgs, total, nil
}

// GetInbox returns the stored message seq; ok is false when there is none.
func (db *DB) GetInbox(seq uint64) (m InboxMessage, ok bool, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketInbox).Get(seqKey(seq))
		if v == nil {
			return nil
		}
		ok = true
		m, err = decodeInbox(seq, v)
		return err
	})
	if err != nil {
		return InboxMessage{}, false, fmt.Errorf("read inbox: %w", err)
	}
	return m, ok, nil
}

// DeleteInbox deletes the message seq (the app read it) and remembers its id (SeenInbox);
// ok is false, and nothing changes, when there is no such message. It deletes a corrupt
// record too.
func (db *DB) DeleteInbox(seq uint64) (ok bool, err error) {
	err = db.update(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketInbox).Get(seqKey(seq))
		if v == nil {
			return nil
		}
		ok = true
		return db.removeInbox(tx, seq, v)
	})
	if err != nil {
		return false, fmt.Errorf("delete inbox message: %w", err)
	}
	return ok, nil
}

// PopInbox returns the oldest stored message and deletes it in the same transaction, as
// DeleteInbox does; ok is false when the inbox is empty. A corrupt oldest record is an
// error naming its seq, for DeleteInbox.
func (db *DB) PopInbox() (m InboxMessage, ok bool, err error) {
	err = db.update(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketInbox).Cursor().First()
		if k == nil {
			return nil
		}
		if len(k) != 8 {
			return fmt.Errorf("inbox key %x: %w", k, ErrCorrupt)
		}
		seq := binary.BigEndian.Uint64(k)
		if m, err = decodeInbox(seq, v); err != nil {
			return err
		}
		ok = true
		return db.removeInbox(tx, seq, v)
	})
	if err != nil {
		return InboxMessage{}, false, fmt.Errorf("pop inbox: %w", err)
	}
	return m, ok, nil
}

// removeInbox deletes the stored message seq whose record is v, takes it off the counters
// and remembers its id (when the id index points at it), forgetting the oldest remembered
// ids beyond db.seenKept. Of a corrupt record it takes the id at the id's offset and counts
// the inbox again.
func (db *DB) removeInbox(tx *bolt.Tx, seq uint64, v []byte) error {
	var id [16]byte
	m, err := decodeInbox(seq, v)
	known := err == nil
	if known {
		id = m.ID
	} else if len(v) >= 1+16 {
		id = [16]byte(v[1:17])
	}
	k := seqKey(seq)
	if err := tx.Bucket(bucketInbox).Delete(k); err != nil {
		return err
	}
	meta := tx.Bucket(bucketInboxMeta)
	if known {
		if err := subCount(meta, counterInboxCount, 1); err != nil {
			return err
		}
		if err := subCount(meta, counterInboxBytes, m.size()); err != nil {
			return err
		}
	} else if err := recountInbox(tx); err != nil {
		return err
	}
	ids := tx.Bucket(bucketInboxIDs)
	if s := ids.Get(id[:]); len(s) != 8 || binary.BigEndian.Uint64(s) != seq {
		return nil // the index does not know the id (a damaged store): nothing to remember
	}
	seen := tx.Bucket(bucketInboxSeen)
	seen.FillPercent = 0.9 // keys are appended in order: fill pages, as bbolt advises
	if err := seen.Put(k, id[:]); err != nil {
		return err
	}
	n := getCount(meta, counterInboxSeen) + 1
	type entry struct{ seq, id []byte }
	var old []entry
	c := seen.Cursor()
	for sk, sid := c.First(); sk != nil && n-uint64(len(old)) > db.seenKept; sk, sid = c.Next() {
		old = append(old, entry{append([]byte(nil), sk...), append([]byte(nil), sid...)})
	}
	for _, e := range old {
		if err := seen.Delete(e.seq); err != nil {
			return err
		}
		// The index points at the entry unless the id was stored again since (it cannot
		// be while remembered, but a hand-edited store is not refused for it).
		if s := ids.Get(e.id); string(s) == string(e.seq) {
			if err := ids.Delete(e.id); err != nil {
				return err
			}
		}
	}
	return meta.Put(counterInboxSeen, binary.BigEndian.AppendUint64(nil, n-uint64(len(old))))
}

// recountInbox sets the message and byte counters from the stored messages (after a corrupt
// record, whose size is unknown, was deleted); a corrupt record left counts its length.
func recountInbox(tx *bolt.Tx) error {
	var n, size uint64
	err := tx.Bucket(bucketInbox).ForEach(func(k, v []byte) error {
		n++
		if m, err := decodeInbox(0, v); err == nil {
			size += m.size()
		} else {
			size += uint64(len(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	meta := tx.Bucket(bucketInboxMeta)
	if err := meta.Put(counterInboxCount, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		return err
	}
	return meta.Put(counterInboxBytes, binary.BigEndian.AppendUint64(nil, size))
}

// SeenInbox reports whether the inbox knows a message with this id: stored, or deleted
// within the last InboxSeenKept deletions.
func (db *DB) SeenInbox(id [16]byte) (bool, error) {
	var seen bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		seen = tx.Bucket(bucketInboxIDs).Get(id[:]) != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read inbox ids: %w", err)
	}
	return seen, nil
}

// InboxUsage returns how many messages the inbox stores and their bytes (bodies and reply
// blocks), what SetInboxQuota bounds.
func (db *DB) InboxUsage() (messages int, bytes int64, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketInboxMeta)
		messages, bytes = int(getCount(meta, counterInboxCount)), int64(getCount(meta, counterInboxBytes))
		return nil
	})
	return messages, bytes, err
}

// TakeReplyBlock removes one reply block of the stored message seq (the first of those
// left) and returns it with the number left, in one transaction synced to disk before it
// returns: a block handed out is never handed out again, also after a crash. It fails with
// ErrNotFound when there is no such message and ErrNoReplyBlock when it has no block left.
func (db *DB) TakeReplyBlock(seq uint64) (block []byte, left int, err error) {
	err = db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketInbox)
		k := seqKey(seq)
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("inbox message %d: %w", seq, ErrNotFound)
		}
		m, err := decodeInbox(seq, v)
		if err != nil {
			return err
		}
		if len(m.ReplyBlocks) == 0 {
			return fmt.Errorf("inbox message %d: %w", seq, ErrNoReplyBlock)
		}
		block, m.ReplyBlocks = m.ReplyBlocks[0], m.ReplyBlocks[1:]
		left = len(m.ReplyBlocks)
		nv, err := encodeInbox(&m)
		if err != nil {
			return err
		}
		if err := b.Put(k, nv); err != nil {
			return err
		}
		return subCount(tx.Bucket(bucketInboxMeta), counterInboxBytes, uint64(len(block)))
	})
	if err != nil {
		return nil, 0, fmt.Errorf("take reply block: %w", err)
	}
	return block, left, nil
}
