package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/tickets"
)

// Ticket state of the relay layer (docs/PROTOCOL.md §4, DESIGN §5). Acknowledged tickets are
// money: they are written in one fsynced transaction per batch and leave the store only when
// they are settled (redeemed, found losing, or void), which bumps the matching counter.
var (
	// channel id (32) ‖ epoch (4) ‖ index (8) → source (20) ‖ ticket (168) ‖ response (32)
	bucketTicketsAcked = bucket("tickets.acked")
	// channel id (32) ‖ epoch (4) → first index not yet reserved (8)
	bucketTicketIndexes = bucket("tickets.outindex")
	// counter name → uint64 (8) or uint256 (32)
	bucketTicketCounters = bucket("tickets.counters")
	// channel id (32) ‖ epoch (4) ‖ index (8) → the acknowledged ticket's value ‖ settled at (8,
	// Unix seconds): tickets settled as redeemed, kept for a day so that a reorganisation that
	// undoes their redemption can put them back (UnsettleRedeemed)
	bucketTicketsPaid = bucket("tickets.paid")
)

const (
	ackedKeyLen   = 32 + 4 + 8
	ackedValueLen = common.AddressLength + tickets.EncodedLen + 32
)

// Counter names in bucketTicketCounters.
var (
	counterRedeemed      = []byte("redeemed")
	counterRedeemedValue = []byte("redeemedValue")
	counterLosing        = []byte("losing")
	counterNeglected     = []byte("neglected")
	counterRejected      = []byte("rejected")
	counterRejectedValue = []byte("rejectedValue")
	counterLosingValue   = []byte("losingValue")
	// The acknowledged tickets that won, settled or not (SaveAcknowledgedTickets stores only
	// winners). Stores written before it existed get it on Open (countWon).
	counterWon      = []byte("won")
	counterWonValue = []byte("wonValue")
	// The acknowledged tickets in bucketTicketsAcked and their summed amount, kept in the same
	// transactions as the tickets so that statistics never scan them. Stores written before
	// these counters existed get them on Open (countUnredeemed).
	counterUnredeemed      = []byte("unredeemed")
	counterUnredeemedValue = []byte("unredeemedValue")
)

// AckedTicket is an incoming ticket whose next hop acknowledged the packet: with Response it is
// redeemable by this node (the ticket's destination) until it is settled.
type AckedTicket struct {
	// Source is the chain address of the channel's source, who signed the ticket.
	Source common.Address
	// Ticket is the ticket as received.
	Ticket tickets.Ticket
	// Response is the proof-of-relay response own + ack mod n that opens Ticket.Challenge.
	Response [32]byte
}

// Outcome is how an acknowledged ticket left the store.
type Outcome uint8

// Outcomes of SettleTicket.
const (
	// OutcomeRedeemed: the contract paid the ticket (or had already paid its index).
	OutcomeRedeemed Outcome = iota + 1
	// OutcomeLosing: the ticket does not win (section 4.5); it is worth nothing.
	OutcomeLosing
	// OutcomeNeglected: the ticket became void before it was redeemed (the channel closed or
	// reopened with a new epoch).
	OutcomeNeglected
)

// TicketCounters are the persistent statistics of acknowledged, settled and rejected tickets.
type TicketCounters struct {
	// Unredeemed and UnredeemedValue count the acknowledged tickets not yet settled.
	Unredeemed      uint64
	UnredeemedValue uint256.Int
	Redeemed        uint64
	RedeemedValue   uint256.Int
	// Won and WonValue count every acknowledged ticket stored, that is every winner.
	Won      uint64
	WonValue uint256.Int
	// Losing and LosingValue count acknowledged tickets that did not win (face amounts).
	Losing        uint64
	LosingValue   uint256.Int
	Neglected     uint64
	Rejected      uint64
	RejectedValue uint256.Int
}

func ackedKey(channelID [32]byte, epoch uint32, index uint64) []byte {
	k := make([]byte, ackedKeyLen)
	copy(k, channelID[:])
	binary.BigEndian.PutUint32(k[32:], epoch)
	binary.BigEndian.PutUint64(k[36:], index)
	return k
}

// SaveAcknowledgedTickets records ts as acknowledged in one transaction, synced to disk before
// it returns: once it returned nil the tickets survive a crash. A ticket already stored under
// the same channel, epoch and index is overwritten.
func (db *DB) SaveAcknowledgedTickets(ts []AckedTicket) error {
	if len(ts) == 0 {
		return nil
	}
	// One buffer for every key and value of the batch (bbolt keeps them until the commit).
	buf := make([]byte, 0, len(ts)*(ackedKeyLen+ackedValueLen))
	return db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTicketsAcked)
		buf := buf[:0]
		var added uint64
		var value, replaced uint256.Int
		for i := range ts {
			t := &ts[i]
			k0 := len(buf)
			buf = append(buf, t.Ticket.ChannelID[:]...)
			buf = binary.BigEndian.AppendUint32(buf, t.Ticket.Epoch)
			buf = binary.BigEndian.AppendUint64(buf, t.Ticket.Index)
			v0 := len(buf)
			buf = append(buf, t.Source[:]...)
			var err error
			if buf, err = t.Ticket.AppendBinary(buf); err != nil {
				return fmt.Errorf("acknowledged ticket %d: %w", t.Ticket.Index, err)
			}
			buf = append(buf, t.Response[:]...)
			key := buf[k0:v0:v0]
			if old := b.Get(key); old != nil {
				prev, err := decodeAcked(old)
				if err != nil {
					return fmt.Errorf("key %x: %w", key, err)
				}
				replaced.Add(&replaced, &prev.Ticket.Amount)
			} else {
				added++
			}
			value.Add(&value, &t.Ticket.Amount)
			if err := b.Put(key, buf[v0:len(buf):len(buf)]); err != nil {
				return err
			}
		}
		cb := tx.Bucket(bucketTicketCounters)
		var wonValue uint256.Int
		wonValue.Sub(&value, &replaced) // the tickets new to the store (a replaced one counted before)
		for _, c := range []struct {
			name []byte
			n    uint64
		}{{counterUnredeemed, added}, {counterWon, added}} {
			if err := addCount(cb, c.name, c.n); err != nil {
				return err
			}
		}
		if err := addValue(cb, counterWonValue, &wonValue); err != nil {
			return err
		}
		if err := addValue(cb, counterUnredeemedValue, &value); err != nil {
			return err
		}
		return subValue(cb, counterUnredeemedValue, &replaced)
	})
}

func decodeAcked(v []byte) (AckedTicket, error) {
	var t AckedTicket
	if len(v) != ackedValueLen {
		return t, fmt.Errorf("acknowledged ticket: %d bytes, want %d", len(v), ackedValueLen)
	}
	copy(t.Source[:], v)
	if err := t.Ticket.UnmarshalBinary(v[common.AddressLength : common.AddressLength+tickets.EncodedLen]); err != nil {
		return t, fmt.Errorf("acknowledged ticket: %w", err)
	}
	copy(t.Response[:], v[common.AddressLength+tickets.EncodedLen:])
	return t, nil
}

// AcknowledgedTickets returns every acknowledged, unsettled ticket, ordered by channel id,
// then epoch, then index (the order a channel's tickets must be redeemed in).
func (db *DB) AcknowledgedTickets() ([]AckedTicket, error) {
	return db.ackedWithPrefix(nil)
}

// AcknowledgedTicketsOf returns the acknowledged, unsettled tickets of one channel, ordered by
// epoch, then index.
func (db *DB) AcknowledgedTicketsOf(channelID [32]byte) ([]AckedTicket, error) {
	return db.ackedWithPrefix(channelID[:])
}

func (db *DB) ackedWithPrefix(prefix []byte) ([]AckedTicket, error) {
	var out []AckedTicket
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketTicketsAcked).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			t, err := decodeAcked(v)
			if err != nil {
				return fmt.Errorf("key %x: %w", k, err)
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// Settlement says how one acknowledged ticket left the store (SettleTickets).
type Settlement struct {
	ChannelID [32]byte
	Epoch     uint32
	Index     uint64
	Outcome   Outcome
}

// SettleTicket is SettleTickets for one ticket.
func (db *DB) SettleTicket(channelID [32]byte, epoch uint32, index uint64, outcome Outcome) error {
	return db.SettleTickets([]Settlement{{channelID, epoch, index, outcome}})
}

// SettleTickets removes acknowledged tickets and counts each under its outcome (with its amount
// for OutcomeRedeemed), all in one transaction: either every one is settled or none. Settling a
// ticket that is not stored (already settled, e.g. by a run that crashed after settling) changes
// nothing and is not an error.
func (db *DB) SettleTickets(list []Settlement) error {
	for _, st := range list {
		if st.Outcome < OutcomeRedeemed || st.Outcome > OutcomeNeglected {
			return fmt.Errorf("settle ticket: unknown outcome %d", st.Outcome)
		}
	}
	if len(list) == 0 {
		return nil
	}
	now := time.Now()
	return db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTicketsAcked)
		cb := tx.Bucket(bucketTicketCounters)
		for _, st := range list {
			k := ackedKey(st.ChannelID, st.Epoch, st.Index)
			v := b.Get(k)
			if v == nil {
				continue
			}
			t, err := decodeAcked(v)
			if err != nil {
				return err
			}
			if err := b.Delete(k); err != nil {
				return err
			}
			if st.Outcome == OutcomeRedeemed {
				paid := binary.BigEndian.AppendUint64(append([]byte(nil), v...), uint64(now.Unix()))
				if err := tx.Bucket(bucketTicketsPaid).Put(k, paid); err != nil {
					return err
				}
			}
			if err := subCount(cb, counterUnredeemed, 1); err != nil {
				return err
			}
			if err := subValue(cb, counterUnredeemedValue, &t.Ticket.Amount); err != nil {
				return err
			}
			count, value := counterNeglected, []byte(nil)
			switch st.Outcome {
			case OutcomeRedeemed:
				count, value = counterRedeemed, counterRedeemedValue
			case OutcomeLosing:
				count, value = counterLosing, counterLosingValue
			}
			if err := addCount(cb, count, 1); err != nil {
				return err
			}
			if value != nil {
				if err := addValue(cb, value, &t.Ticket.Amount); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// UnsettleRedeemed puts back the tickets of a channel epoch with an index above `above` that
// were settled as redeemed (a reorganisation removed the redemption: the chain's ticket index of
// the channel went back to `above`): they are acknowledged and unredeemed again, and the
// redeemed counters give them back, in one transaction. It returns how many it put back. Only
// tickets settled within the last PaidKept are still known.
func (db *DB) UnsettleRedeemed(channelID [32]byte, epoch uint32, above uint64) (int, error) {
	n := 0
	err := db.update(func(tx *bolt.Tx) error {
		paid, acked, cb := tx.Bucket(bucketTicketsPaid), tx.Bucket(bucketTicketsAcked), tx.Bucket(bucketTicketCounters)
		prefix := ackedKey(channelID, epoch, 0)[:36]
		var keys [][]byte
		var value uint256.Int
		c := paid.Cursor()
		for k, v := c.Seek(ackedKey(channelID, epoch, above+1)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(v) != ackedValueLen+8 {
				return fmt.Errorf("paid ticket %x: %d bytes", k, len(v))
			}
			t, err := decodeAcked(v[:ackedValueLen])
			if err != nil {
				return err
			}
			if err := acked.Put(append([]byte(nil), k...), append([]byte(nil), v[:ackedValueLen]...)); err != nil {
				return err
			}
			keys = append(keys, append([]byte(nil), k...))
			value.Add(&value, &t.Ticket.Amount)
		}
		for _, k := range keys {
			if err := paid.Delete(k); err != nil {
				return err
			}
		}
		n = len(keys)
		if err := subCount(cb, counterRedeemed, uint64(n)); err != nil {
			return err
		}
		if err := subValue(cb, counterRedeemedValue, &value); err != nil {
			return err
		}
		if err := addCount(cb, counterUnredeemed, uint64(n)); err != nil {
			return err
		}
		return addValue(cb, counterUnredeemedValue, &value)
	})
	return n, err
}

// PaidKept is how long tickets settled as redeemed are kept for UnsettleRedeemed: far longer
// than any reorganisation a chain with finality allows.
const PaidKept = 24 * time.Hour

// PrunePaid forgets the redeemed tickets settled before `before` (now − PaidKept, say).
func (db *DB) PrunePaid(before time.Time) error {
	return db.update(func(tx *bolt.Tx) error {
		paid := tx.Bucket(bucketTicketsPaid)
		var old [][]byte
		err := paid.ForEach(func(k, v []byte) error {
			if len(v) < 8 || int64(binary.BigEndian.Uint64(v[len(v)-8:])) < before.Unix() {
				old = append(old, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := paid.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// TicketCounterDelta is what AddTicketCounters adds: counts kept in memory and persisted in
// batches (they are statistics, not money).
type TicketCounterDelta struct {
	Neglected     uint64
	Rejected      uint64
	RejectedValue uint256.Int
	// Losing and LosingValue count acknowledged tickets found losing (never stored).
	Losing      uint64
	LosingValue uint256.Int
}

// Add adds o to d.
func (d *TicketCounterDelta) Add(o *TicketCounterDelta) {
	d.Neglected += o.Neglected
	d.Rejected += o.Rejected
	d.RejectedValue.Add(&d.RejectedValue, &o.RejectedValue)
	d.Losing += o.Losing
	d.LosingValue.Add(&d.LosingValue, &o.LosingValue)
}

// AddTicketCounters adds d to the persistent counters in one transaction.
func (db *DB) AddTicketCounters(d TicketCounterDelta) error {
	if d == (TicketCounterDelta{}) {
		return nil
	}
	return db.update(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketTicketCounters)
		for _, c := range []struct {
			name []byte
			n    uint64
		}{{counterNeglected, d.Neglected}, {counterRejected, d.Rejected}, {counterLosing, d.Losing}} {
			if err := addCount(cb, c.name, c.n); err != nil {
				return err
			}
		}
		if err := addValue(cb, counterLosingValue, &d.LosingValue); err != nil {
			return err
		}
		return addValue(cb, counterRejectedValue, &d.RejectedValue)
	})
}

// TicketCounters returns the persistent counters.
func (db *DB) TicketCounters() (TicketCounters, error) {
	var c TicketCounters
	err := db.bolt.View(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketTicketCounters)
		c.Unredeemed = getCount(cb, counterUnredeemed)
		getValue(cb, counterUnredeemedValue, &c.UnredeemedValue)
		c.Redeemed = getCount(cb, counterRedeemed)
		c.Losing = getCount(cb, counterLosing)
		getValue(cb, counterLosingValue, &c.LosingValue)
		c.Won = getCount(cb, counterWon)
		getValue(cb, counterWonValue, &c.WonValue)
		c.Neglected = getCount(cb, counterNeglected)
		c.Rejected = getCount(cb, counterRejected)
		getValue(cb, counterRedeemedValue, &c.RedeemedValue)
		getValue(cb, counterRejectedValue, &c.RejectedValue)
		return nil
	})
	return c, err
}

func getCount(b *bolt.Bucket, name []byte) uint64 {
	if v := b.Get(name); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func addCount(b *bolt.Bucket, name []byte, n uint64) error {
	if n == 0 {
		return nil
	}
	return b.Put(name, binary.BigEndian.AppendUint64(nil, getCount(b, name)+n))
}

// subCount takes n off a counter; a counter never goes below zero.
func subCount(b *bolt.Bucket, name []byte, n uint64) error {
	if n == 0 {
		return nil
	}
	cur := getCount(b, name)
	return b.Put(name, binary.BigEndian.AppendUint64(nil, cur-min(cur, n)))
}

func getValue(b *bolt.Bucket, name []byte, out *uint256.Int) {
	if v := b.Get(name); len(v) == 32 {
		out.SetBytes32(v)
	} else {
		out.Clear()
	}
}

func addValue(b *bolt.Bucket, name []byte, x *uint256.Int) error {
	if x.IsZero() {
		return nil
	}
	var cur uint256.Int
	getValue(b, name, &cur)
	cur.Add(&cur, x)
	v := cur.Bytes32()
	return b.Put(name, v[:])
}

// subValue takes x off a value counter; a counter never goes below zero.
func subValue(b *bolt.Bucket, name []byte, x *uint256.Int) error {
	if x.IsZero() {
		return nil
	}
	var cur uint256.Int
	getValue(b, name, &cur)
	if cur.Lt(x) {
		cur.Clear()
	} else {
		cur.Sub(&cur, x)
	}
	v := cur.Bytes32()
	return b.Put(name, v[:])
}

// countUnredeemed sets the unredeemed counters from the stored tickets when the store has none
// yet (a store written before they existed); otherwise it changes nothing.
func countUnredeemed(tx *bolt.Tx) error {
	cb := tx.Bucket(bucketTicketCounters)
	if cb.Get(counterUnredeemed) != nil {
		return nil
	}
	var n uint64
	var value uint256.Int
	err := tx.Bucket(bucketTicketsAcked).ForEach(func(k, v []byte) error {
		t, err := decodeAcked(v)
		if err != nil {
			return fmt.Errorf("key %x: %w", k, err)
		}
		n++
		value.Add(&value, &t.Ticket.Amount)
		return nil
	})
	if err != nil {
		return fmt.Errorf("count acknowledged tickets: %w", err)
	}
	if err := cb.Put(counterUnredeemed, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		return err
	}
	v := value.Bytes32()
	return cb.Put(counterUnredeemedValue, v[:])
}

// countWon sets the won counters when the store has none yet (a store written before they
// existed), from what was stored as acknowledged then: every such ticket was kept as a winner,
// the redeemed and the unredeemed ones. Run after countUnredeemed.
func countWon(tx *bolt.Tx) error {
	cb := tx.Bucket(bucketTicketCounters)
	if cb.Get(counterWon) != nil {
		return nil
	}
	n := getCount(cb, counterRedeemed) + getCount(cb, counterUnredeemed)
	var value, unredeemed uint256.Int
	getValue(cb, counterRedeemedValue, &value)
	getValue(cb, counterUnredeemedValue, &unredeemed)
	value.Add(&value, &unredeemed)
	if err := cb.Put(counterWon, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		return err
	}
	v := value.Bytes32()
	return cb.Put(counterWonValue, v[:])
}

// ReserveTicketIndexes reserves n consecutive outgoing ticket indexes of a channel epoch and
// returns the first. The reservation is synced to disk before it returns, so an index handed
// out from it is never handed out again, also after a crash: the next reservation starts after
// it (indexes reserved but never used are skipped, which the contract allows). The first index
// is at least min (e.g. one above the channel's last redeemed index on chain), at least 1, and
// at least the index floor this Open set (IndexFloor): a store restored from a copy reserves
// above every index the node may have used after the copy was made (docs/STORE.md).
func (db *DB) ReserveTicketIndexes(channelID [32]byte, epoch uint32, min, n uint64) (uint64, error) {
	if n == 0 {
		return 0, fmt.Errorf("reserve ticket indexes: n must be at least 1")
	}
	var first uint64
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTicketIndexes)
		k := make([]byte, 36)
		copy(k, channelID[:])
		binary.BigEndian.PutUint32(k[32:], epoch)
		first = max(min, 1, db.indexFloor)
		if v := b.Get(k); len(v) == 8 {
			first = max(first, binary.BigEndian.Uint64(v))
		}
		if first > ^uint64(0)-n {
			return fmt.Errorf("reserve ticket indexes: index space of channel exhausted")
		}
		return b.Put(k, binary.BigEndian.AppendUint64(nil, first+n))
	})
	return first, err
}
