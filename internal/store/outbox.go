package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The outbox: the messages this node accepted to send, with their delivery state, so that
// a node restarted after kill -9 resumes the pending ones (ListOutbox of OutboxQueued and
// OutboxSent) and still answers for the finished ones until PruneOutbox removes them. The
// quota bounds the pending messages; the finished ones are bounded by PruneOutbox, which
// the node runs periodically.
var (
	// id (16) → the message record (encodeOutbox)
	bucketOutbox = bucket("outbox.messages")
	// counter name → uint64 (8)
	bucketOutboxMeta = bucket("outbox.meta")
)

// Counter names in bucketOutboxMeta: the pending messages and their bodies' bytes.
var (
	counterOutboxPending = []byte("pending")
	counterOutboxBytes   = []byte("bytes")
)

// Outbox states. A message is pending while queued or sent and finished once delivered or
// failed.
const (
	OutboxQueued    = "queued"    // accepted, not yet (completely) sent
	OutboxSent      = "sent"      // sent, waiting for the recipient's acknowledgement
	OutboxDelivered = "delivered" // the recipient acknowledged it
	OutboxFailed    = "failed"    // given up (Reason says why)
)

// outboxStates are the states in the order of their codes in a record (code = index + 1).
var outboxStates = [...]string{OutboxQueued, OutboxSent, OutboxDelivered, OutboxFailed}

func outboxStateCode(s string) (byte, bool) {
	i := slices.Index(outboxStates[:], s)
	return byte(i + 1), i >= 0
}

// Bounds of the outbox.
const (
	// DefaultOutboxPending and DefaultOutboxBytes are the outbox quota until
	// SetOutboxQuota: pending messages and their bodies' bytes.
	DefaultOutboxPending = 1000
	DefaultOutboxBytes   = 64 << 20
)

// OutboxMessage is a message this node accepted to send.
type OutboxMessage struct {
	// ID identifies the message (the API's message id); the outbox stores one per id.
	ID [16]byte
	// Recipient is the recipient's peer id, as text.
	Recipient string
	Body      []byte
	// Replies is how many reply blocks the message carries for the recipient to answer.
	Replies int
	// InReplyTo is the id of the message this one answers (zero if none), ReplyTo the inbox
	// seq of that message (0 if none).
	InReplyTo [16]byte
	ReplyTo   uint64
	// Created and Updated are when the message was accepted and last changed (stored to the
	// millisecond); the caller sets both.
	Created, Updated time.Time
	// State is one of OutboxQueued, OutboxSent, OutboxDelivered and OutboxFailed; Reason
	// says why a message failed.
	State  string
	Reason string
	// Attempts is how many times the message was sent, Fragments how many packets it takes;
	// Acked has bit i (byte i/8, bit i%8 from the least significant) set once fragment i is
	// acknowledged.
	Attempts  int
	Fragments int
	Acked     []byte
	// Blocks are the reply blocks the message carries for the recipient's answers, built once
	// and kept, so that a fragment sent again carries the same bytes (at most Replies).
	Blocks [][]byte
}

// Finished reports whether the message is delivered or failed: no longer pending.
func (m *OutboxMessage) Finished() bool {
	return m.State == OutboxDelivered || m.State == OutboxFailed
}

// The outbox record, version 1: version (1) ‖ state (1: 1 queued, 2 sent, 3 delivered, 4
// failed) ‖ created (8, unix ms) ‖ updated (8) ‖ in reply to (16) ‖ reply to (8) ‖ replies
// (4) ‖ attempts (4) ‖ fragments (4) ‖ recipient, reason, body and acked, each a 4-byte
// length ‖ bytes ‖ block count (4) ‖ each block as a 4-byte length ‖ bytes. The id is the key.
const (
	outboxVersion  = 1
	outboxFixedLen = 1 + 1 + 8 + 8 + 16 + 8 + 4 + 4 + 4
)

func encodeOutbox(m *OutboxMessage) ([]byte, error) {
	state, ok := outboxStateCode(m.State)
	if !ok {
		return nil, fmt.Errorf("%w: outbox state %q", ErrInvalid, m.State)
	}
	for _, n := range []int{m.Replies, m.Attempts, m.Fragments, len(m.Recipient), len(m.Reason), len(m.Body), len(m.Acked)} {
		if n < 0 || n > maxRecordInt {
			return nil, fmt.Errorf("%w: outbox message with a count or length of %d", ErrInvalid, n)
		}
	}
	v := make([]byte, 0, outboxFixedLen+16+len(m.Recipient)+len(m.Reason)+len(m.Body)+len(m.Acked))
	v = append(v, outboxVersion, state)
	v = appendMillis(v, m.Created)
	v = appendMillis(v, m.Updated)
	v = append(v, m.InReplyTo[:]...)
	v = binary.BigEndian.AppendUint64(v, m.ReplyTo)
	v = binary.BigEndian.AppendUint32(v, uint32(m.Replies))
	v = binary.BigEndian.AppendUint32(v, uint32(m.Attempts))
	v = binary.BigEndian.AppendUint32(v, uint32(m.Fragments))
	v = appendLenBytes(v, []byte(m.Recipient))
	v = appendLenBytes(v, []byte(m.Reason))
	v = appendLenBytes(v, m.Body)
	v = appendLenBytes(v, m.Acked)
	if len(m.Blocks) > MaxReplyBlocks {
		return nil, fmt.Errorf("%w: %d reply blocks, at most %d", ErrInvalid, len(m.Blocks), MaxReplyBlocks)
	}
	v = binary.BigEndian.AppendUint32(v, uint32(len(m.Blocks)))
	for _, b := range m.Blocks {
		if len(b) == 0 || len(b) > maxRecordInt {
			return nil, fmt.Errorf("%w: a reply block of %d bytes", ErrInvalid, len(b))
		}
		v = appendLenBytes(v, b)
	}
	return v, nil
}

// decodeOutbox decodes the record of the message id; the result shares no memory with v.
func decodeOutbox(id [16]byte, v []byte) (OutboxMessage, error) {
	m := OutboxMessage{ID: id}
	r := recordReader{b: v}
	if ver := r.u8(); ver != outboxVersion && r.err == nil {
		return m, fmt.Errorf("outbox message %x: %w: version %d", id[:4], ErrCorrupt, ver)
	}
	if state := r.u8(); r.err == nil {
		if state < 1 || int(state) > len(outboxStates) {
			return m, fmt.Errorf("outbox message %x: %w: state %d", id[:4], ErrCorrupt, state)
		}
		m.State = outboxStates[state-1]
	}
	m.Created = r.millis()
	m.Updated = r.millis()
	m.InReplyTo = r.id()
	m.ReplyTo = r.u64()
	m.Replies = r.count()
	m.Attempts = r.count()
	m.Fragments = r.count()
	m.Recipient = string(r.lenBytes())
	m.Reason = string(r.lenBytes())
	m.Body = r.lenBytes()
	m.Acked = r.lenBytes()
	if n := r.count(); r.err == nil {
		if n > MaxReplyBlocks {
			return m, fmt.Errorf("outbox message %x: %w: %d reply blocks", id[:4], ErrCorrupt, n)
		}
		for range n {
			b := r.lenBytes()
			if r.err == nil && len(b) == 0 {
				return m, fmt.Errorf("outbox message %x: %w: an empty reply block", id[:4], ErrCorrupt)
			}
			m.Blocks = append(m.Blocks, b)
		}
	}
	if err := r.end(); err != nil {
		return m, fmt.Errorf("outbox message %x: %w", id[:4], err)
	}
	return m, nil
}

// SetOutboxQuota bounds the pending (queued or sent) messages of the outbox to maxPending
// messages and maxBytes bytes of bodies: PutOutbox refuses a message beyond either with
// ErrOutboxFull. A value below 1 sets its default (DefaultOutboxPending,
// DefaultOutboxBytes). Finished messages do not count.
func (db *DB) SetOutboxQuota(maxPending int, maxBytes int64) {
	if maxPending < 1 {
		maxPending = DefaultOutboxPending
	}
	if maxBytes < 1 {
		maxBytes = DefaultOutboxBytes
	}
	db.outboxPending.Store(int64(maxPending))
	db.outboxBytes.Store(maxBytes)
}

// pendingDelta is what a message adds to the pending counters.
func pendingDelta(m *OutboxMessage) (n, size uint64) {
	if m.Finished() {
		return 0, 0
	}
	return 1, uint64(len(m.Body))
}

// putOutbox writes m, replacing old (nil: none), and moves the pending counters from old to
// m, refusing with ErrOutboxFull when they grow beyond the quota.
func (db *DB) putOutbox(tx *bolt.Tx, old, m *OutboxMessage) error {
	v, err := encodeOutbox(m)
	if err != nil {
		return err
	}
	var oldN, oldSize uint64
	if old != nil {
		oldN, oldSize = pendingDelta(old)
	}
	n, size := pendingDelta(m)
	meta := tx.Bucket(bucketOutboxMeta)
	pending, bytes := getCount(meta, counterOutboxPending), getCount(meta, counterOutboxBytes)
	if n > oldN && pending+1 > uint64(db.outboxPending.Load()) {
		return fmt.Errorf("%w: %d messages pending", ErrOutboxFull, pending)
	}
	if size > oldSize && bytes-min(bytes, oldSize)+size > uint64(db.outboxBytes.Load()) {
		return fmt.Errorf("%w: %d bytes pending, the message has %d", ErrOutboxFull, bytes, size)
	}
	if err := tx.Bucket(bucketOutbox).Put(m.ID[:], v); err != nil {
		return err
	}
	if err := subCount(meta, counterOutboxPending, oldN); err != nil {
		return err
	}
	if err := subCount(meta, counterOutboxBytes, oldSize); err != nil {
		return err
	}
	if err := addCount(meta, counterOutboxPending, n); err != nil {
		return err
	}
	return addCount(meta, counterOutboxBytes, size)
}

// PutOutbox stores a new message in one transaction, synced to disk before it returns. It
// fails with ErrExists when a message with its id is stored, ErrInvalid for an unknown
// state or a negative count, and ErrOutboxFull when a pending message would exceed the
// quota (SetOutboxQuota).
func (db *DB) PutOutbox(m OutboxMessage) error {
	err := db.update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOutbox).Get(m.ID[:]) != nil {
			return fmt.Errorf("outbox message %x: %w", m.ID[:4], ErrExists)
		}
		return db.putOutbox(tx, nil, &m)
	})
	if err != nil {
		return fmt.Errorf("store outbox message: %w", err)
	}
	return nil
}

// GetOutbox returns the message id; ok is false when there is none.
func (db *DB) GetOutbox(id [16]byte) (m OutboxMessage, ok bool, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketOutbox).Get(id[:])
		if v == nil {
			return nil
		}
		ok = true
		m, err = decodeOutbox(id, v)
		return err
	})
	if err != nil {
		return OutboxMessage{}, false, fmt.Errorf("read outbox: %w", err)
	}
	return m, ok, nil
}

// UpdateOutbox reads the message id, lets fn change it and writes it back, all in one
// transaction synced to disk before it returns. When fn returns an error nothing changes and
// UpdateOutbox returns it (wrapped). It fails with ErrNotFound when there is no such message,
// ErrInvalid when fn changed the id or left an invalid message, and ErrOutboxFull when fn
// made a finished message pending again (or grew a pending one's body) beyond the quota. fn
// runs inside the store's write transaction: it must not call the store, and should be quick.
// UpdateOutbox does not touch Updated: fn sets it.
func (db *DB) UpdateOutbox(id [16]byte, fn func(*OutboxMessage) error) error {
	err := db.update(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketOutbox).Get(id[:])
		if v == nil {
			return fmt.Errorf("outbox message %x: %w", id[:4], ErrNotFound)
		}
		old, err := decodeOutbox(id, v)
		if err != nil {
			return err
		}
		m, err := decodeOutbox(id, v)
		if err != nil {
			return err
		}
		if err := fn(&m); err != nil {
			return err
		}
		if m.ID != id {
			return fmt.Errorf("%w: the update changed the id of outbox message %x", ErrInvalid, id[:4])
		}
		return db.putOutbox(tx, &old, &m)
	})
	if err != nil {
		return fmt.Errorf("update outbox message: %w", err)
	}
	return nil
}

// ListOutbox returns the messages in any of the given states (every message when none is
// given), oldest first (by Created, then id). A node resumes ListOutbox(OutboxQueued,
// OutboxSent) at start. An unknown state is ErrInvalid.
func (db *DB) ListOutbox(states ...string) ([]OutboxMessage, error) {
	var want [len(outboxStates) + 1]bool
	for _, s := range states {
		code, ok := outboxStateCode(s)
		if !ok {
			return nil, fmt.Errorf("list outbox: %w: state %q", ErrInvalid, s)
		}
		want[code] = true
	}
	var out []OutboxMessage
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOutbox).ForEach(func(k, v []byte) error {
			if len(k) != 16 {
				return fmt.Errorf("outbox key %x: %w", k, ErrCorrupt)
			}
			if len(states) > 0 && (len(v) < 2 || int(v[1]) >= len(want) || !want[v[1]]) {
				return nil // another state (or a corrupt record, which does not match either)
			}
			m, err := decodeOutbox([16]byte(k), v)
			if err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	slices.SortFunc(out, func(a, b OutboxMessage) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return out, nil
}

// DeleteOutbox deletes the message id, pending or not; ok is false, and nothing changes,
// when there is none. It deletes a corrupt record too.
func (db *DB) DeleteOutbox(id [16]byte) (ok bool, err error) {
	err = db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOutbox)
		v := b.Get(id[:])
		if v == nil {
			return nil
		}
		ok = true
		m, err := decodeOutbox(id, v)
		if err := b.Delete(id[:]); err != nil {
			return err
		}
		if err != nil {
			return recountOutbox(tx)
		}
		n, size := pendingDelta(&m)
		meta := tx.Bucket(bucketOutboxMeta)
		if err := subCount(meta, counterOutboxPending, n); err != nil {
			return err
		}
		return subCount(meta, counterOutboxBytes, size)
	})
	if err != nil {
		return false, fmt.Errorf("delete outbox message: %w", err)
	}
	return ok, nil
}

// PruneOutbox deletes the finished (delivered or failed) messages last updated before
// `before`, and of the others all but the keep last updated (none for a keep below 1), in
// one transaction; it returns how many it deleted. Pending messages stay. Corrupt records
// are deleted too.
func (db *DB) PruneOutbox(before time.Time, keep int) (int, error) {
	type finished struct {
		id      []byte
		updated time.Time
	}
	keep = max(keep, 0)
	n := 0
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOutbox)
		var old, recent []finished
		corrupt := false
		err := b.ForEach(func(k, v []byte) error {
			var m OutboxMessage
			err := fmt.Errorf("outbox key %x: %w", k, ErrCorrupt)
			if len(k) == 16 {
				m, err = decodeOutbox([16]byte(k), v)
			}
			switch {
			case err != nil:
				corrupt = true
				old = append(old, finished{id: bytes.Clone(k)})
			case !m.Finished():
			case m.Updated.Before(before):
				old = append(old, finished{id: bytes.Clone(k)})
			default:
				recent = append(recent, finished{bytes.Clone(k), m.Updated})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(recent) > keep {
			// Newest first; of the same time, the greater id first (a deterministic choice).
			slices.SortFunc(recent, func(a, b finished) int {
				if c := b.updated.Compare(a.updated); c != 0 {
					return c
				}
				return bytes.Compare(b.id, a.id)
			})
			old = append(old, recent[keep:]...)
		}
		for _, f := range old {
			if err := b.Delete(f.id); err != nil {
				return err
			}
		}
		n = len(old)
		if corrupt {
			return recountOutbox(tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	return n, nil
}

// recountOutbox sets the pending counters from the stored messages (after a corrupt record,
// whose share of them is unknown, was deleted); corrupt records left count as nothing.
func recountOutbox(tx *bolt.Tx) error {
	var n, size uint64
	err := tx.Bucket(bucketOutbox).ForEach(func(k, v []byte) error {
		if len(k) != 16 {
			return nil
		}
		if m, err := decodeOutbox([16]byte(k), v); err == nil {
			dn, ds := pendingDelta(&m)
			n, size = n+dn, size+ds
		}
		return nil
	})
	if err != nil {
		return err
	}
	meta := tx.Bucket(bucketOutboxMeta)
	if err := meta.Put(counterOutboxPending, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		return err
	}
	return meta.Put(counterOutboxBytes, binary.BigEndian.AppendUint64(nil, size))
}

// OutboxUsage returns the number of pending (queued or sent) messages and their bodies'
// bytes, what SetOutboxQuota bounds.
func (db *DB) OutboxUsage() (pending int, bytes int64, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketOutboxMeta)
		pending, bytes = int(getCount(meta, counterOutboxPending)), int64(getCount(meta, counterOutboxBytes))
		return nil
	})
	return pending, bytes, err
}
