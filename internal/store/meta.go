package store

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The store's format (docs/STORE.md). The meta bucket holds the format version the records
// follow; Open brings an older store to FormatVersion with the migrations below, in order, in
// the one transaction that opens it, and refuses a store of a later version (ErrFutureFormat)
// without writing to it. A store without the meta bucket was written before format versions
// existed: it is version 1.
var bucketMeta = []byte("meta")

// Keys of the meta bucket.
var (
	// metaVersion → the format version (4 bytes, big-endian)
	metaVersion = []byte("version")
	// metaIndexFloor → the outgoing ticket index floor set by the last Open (8 bytes, big-endian)
	metaIndexFloor = []byte("indexFloor")
)

// A migration brings a store from format version to-1 to version to. It runs inside the
// transaction that opens the store: it either completes with the version's update or leaves
// nothing behind. It must only read and write buckets (no other I/O) and must not assume
// buckets newer than its version exist.
type migration struct {
	to   uint32
	what string // for the log: what the version changed
	run  func(tx *bolt.Tx) error
}

// migrations are the format's versions after 1, in order: migrations[i] goes from version i+1
// to i+2. Add one (never change one that shipped) with a fixture written by the code before it
// (testdata/v<N>.db, fixture_test.go) and a test that opens it.
var migrations = []migration{
	{to: 2, what: "a meta bucket with the format version and the outgoing ticket index floor", run: func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketMeta)
		return err
	}},
}

// FormatVersion is the store format this build writes: 1 + the number of migrations.
var FormatVersion = uint32(len(migrations) + 1)

// IndexesPerMilli is the rate, per millisecond of the clock, at which the outgoing ticket index
// floor rises: each Open of an existing store sets the floor to its clock's Unix milliseconds ×
// IndexesPerMilli (docs/STORE.md, "Restoring"), so that a restored copy of the store, whose
// reservations are behind the indexes the node used after the copy was made, still issues
// only indexes above them, as long as no channel used more than IndexesPerMilli indexes a
// millisecond (about a million a second, far above what signing allows) on average since the
// node's last start, and the clock does not go back. 1024 keeps indexes below 2^53 (exact in
// JSON numbers) until the year 2248.
const IndexesPerMilli = 1024

// indexFloorAt is the index floor an Open at t sets.
func indexFloorAt(t time.Time) uint64 {
	ms := t.UnixMilli()
	if ms <= 0 {
		return 0
	}
	return uint64(ms) * IndexesPerMilli
}

// formatVersion reads the store's format version: 0 for a new, empty file, 1 for a store
// without the meta bucket.
func formatVersion(tx *bolt.Tx) (uint32, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		empty := true
		if err := tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil }); err != nil {
			return 0, err
		}
		if empty {
			return 0, nil
		}
		return 1, nil
	}
	v := meta.Get(metaVersion)
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: format version of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint32(v), nil
}

// prepare brings the store to FormatVersion (version is what formatVersion read in an earlier
// transaction: 0 for a new file), creates the buckets it lacks and raises the index floor. It
// runs in the transaction that opens the store and returns the index floor.
func prepare(tx *bolt.Tx, version uint32, now time.Time, log *slog.Logger) (uint64, error) {
	if version != 0 {
		for _, m := range migrations[version-1:] {
			if err := m.run(tx); err != nil {
				return 0, fmt.Errorf("migrate the store to format version %d: %w", m.to, err)
			}
			log.Info("store: migrated", slog.Int("from", int(m.to-1)), slog.Int("to", int(m.to)), slog.String("change", m.what))
		}
	}
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return 0, err
	}
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return 0, err
		}
	}
	if err := meta.Put(metaVersion, binary.BigEndian.AppendUint32(nil, FormatVersion)); err != nil {
		return 0, err
	}
	// A new store has issued nothing: its indexes start at 1. Any other may be a copy.
	var floor uint64
	if v := meta.Get(metaIndexFloor); len(v) == 8 {
		floor = binary.BigEndian.Uint64(v)
	}
	if version != 0 {
		if at := indexFloorAt(now); at >= floor {
			floor = at
		} else {
			log.Warn("store: the clock is behind the store's last start; ticket indexes stay above the ones issued since, "+
				"but a restored copy is safe only with a clock that does not go back (docs/STORE.md)",
				slog.Time("now", now), slog.Uint64("indexFloor", floor))
		}
	}
	return floor, meta.Put(metaIndexFloor, binary.BigEndian.AppendUint64(nil, floor))
}

// IndexFloor is the outgoing ticket index floor this Open set: ReserveTicketIndexes reserves no
// index below it (0 for a store created by this Open).
func (db *DB) IndexFloor() uint64 { return db.indexFloor }
