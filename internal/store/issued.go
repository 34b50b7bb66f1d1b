package store

import (
	"encoding/binary"
	"fmt"

	"github.com/holiman/uint256"
	bolt "go.etcd.io/bbolt"
)

// What this node issued on its outgoing channels (docs/PROTOCOL.md §4): a sender must not sign
// tickets worth more than a channel holds, so it counts the tickets the chain has not yet
// passed, and keeps that count across restarts.
var (
	// channel id (32) ‖ epoch (4) → through (8) ‖ runs, each first (8) ‖ last (8) ‖ amount (32)
	bucketTicketIssued = bucket("tickets.outissued")
)

// IssuedComplete as IssuedTickets.Through says that the runs describe every ticket issued.
const IssuedComplete = ^uint64(0)

// IssuedRun is a run of outgoing tickets with indexes First to Last, each worth at most Amount.
type IssuedRun struct {
	First, Last uint64
	Amount      uint256.Int
}

// IssuedTickets is what a node issued on one outgoing channel epoch. The runs are exact for
// the indexes up to Through; indexes above it (but below the channel's next unreserved index)
// may have been used after the record was written, before a crash.
type IssuedTickets struct {
	Through uint64
	Runs    []IssuedRun
}

func issuedKey(channelID [32]byte, epoch uint32) []byte {
	k := make([]byte, 36)
	copy(k, channelID[:])
	binary.BigEndian.PutUint32(k[32:], epoch)
	return k
}

const issuedRunLen = 8 + 8 + 32

// SaveIssuedTickets replaces the issued-ticket record of a channel epoch, synced to disk before
// it returns.
func (db *DB) SaveIssuedTickets(channelID [32]byte, epoch uint32, rec IssuedTickets) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+issuedRunLen*len(rec.Runs)), rec.Through)
	for _, r := range rec.Runs {
		v = binary.BigEndian.AppendUint64(v, r.First)
		v = binary.BigEndian.AppendUint64(v, r.Last)
		a := r.Amount.Bytes32()
		v = append(v, a[:]...)
	}
	return db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTicketIssued).Put(issuedKey(channelID, epoch), v)
	})
}

// IssuedTicketsOf returns the issued-ticket record of a channel epoch (found false when there is
// none) and the channel epoch's next unreserved index (0 when none was reserved).
func (db *DB) IssuedTicketsOf(channelID [32]byte, epoch uint32) (rec IssuedTickets, found bool, next uint64, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		k := issuedKey(channelID, epoch)
		if v := tx.Bucket(bucketTicketIndexes).Get(k); len(v) == 8 {
			next = binary.BigEndian.Uint64(v)
		}
		v := tx.Bucket(bucketTicketIssued).Get(k)
		if v == nil {
			return nil
		}
		if len(v) < 8 || (len(v)-8)%issuedRunLen != 0 {
			return fmt.Errorf("issued tickets of channel %x: %d bytes", channelID[:4], len(v))
		}
		found = true
		rec.Through = binary.BigEndian.Uint64(v)
		for v = v[8:]; len(v) > 0; v = v[issuedRunLen:] {
			var r IssuedRun
			r.First = binary.BigEndian.Uint64(v)
			r.Last = binary.BigEndian.Uint64(v[8:])
			r.Amount.SetBytes32(v[16:issuedRunLen])
			rec.Runs = append(rec.Runs, r)
		}
		return nil
	})
	return rec, found, next, err
}
