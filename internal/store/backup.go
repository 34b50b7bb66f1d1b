package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Backup writes a consistent copy of the store to w and returns its length: the whole bbolt
// file as one read transaction sees it, so writers go on while it runs and the copy holds every
// transaction committed before it started and none after. The copy is a store of this build's
// format version; restoring it is docs/STORE.md's "Restoring" (the index floor keeps a restored
// node from issuing a ticket index twice). It holds what the store holds (tickets, messages,
// reply keys): keep it as private as the data directory.
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("back up the store: %w", err)
	}
	return n, nil
}

// BackupDir is Backup of the store in dir while no node holds it (a stopped node's data
// directory): it opens the file read-only, changes nothing in it, and fails with ErrLocked when
// a running node holds it (back that one up through its API instead).
func BackupDir(dir string, w io.Writer) (int64, error) {
	b, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	if err != nil {
		return 0, fmt.Errorf("open store: %w", err)
	}
	defer b.Close()
	return (&DB{bolt: b}).Backup(w)
}

// CheckFile checks that the file at path is a whole, consistent store this build can open (a
// backup, say) without changing it: bbolt's page consistency check, then the format version
// (ErrFutureFormat when it is later than FormatVersion), which it returns.
func CheckFile(path string) (uint32, error) {
	if err := checkSize(path); err != nil {
		return 0, fmt.Errorf("check store %s: %w", path, err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, fmt.Errorf("%s: %w", path, ErrLocked)
	}
	if err != nil {
		return 0, fmt.Errorf("open store %s: %w", path, err)
	}
	defer b.Close()
	var version uint32
	err = b.View(func(tx *bolt.Tx) error {
		var bad error
		for err := range tx.Check() { // read to the end: the check's goroutine sends every fault
			if bad == nil {
				bad = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
		if bad != nil {
			return bad
		}
		var err error
		version, err = formatVersion(tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("check store %s: %w", path, err)
	}
	if version > FormatVersion {
		return version, fmt.Errorf("check store %s: format version %d, this relayd reads up to %d: %w", path, version, FormatVersion, ErrFutureFormat)
	}
	return version, nil
}

// The bbolt file's meta pages, as far as checkSize reads them: magic (4 bytes, at 16 past the
// page header), page size (4, at 24), the high-water page id (8, at 56).
const (
	boltMagic       = 0xED0CDAED
	boltMetaLen     = 64
	boltOffMagic    = 16
	boltOffPageSize = 24
	boltOffPgid     = 56
)

// checkSize refuses a file shorter than its meta pages say (a copy cut short): bbolt maps the
// file into memory and would fault reading past its end. Only meta pages whose magic number
// matches count; bbolt itself checks the rest.
func checkSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	head := make([]byte, boltMetaLen)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%w: %d bytes, not a store", ErrCorrupt, fi.Size())
	}
	pageSize := int64(binary.LittleEndian.Uint32(head[boltOffPageSize:]))
	var need int64
	for i, off := range []int64{0, pageSize} {
		if i == 1 && (binary.LittleEndian.Uint32(head[boltOffMagic:]) != boltMagic || pageSize < boltMetaLen || pageSize > 1<<20) {
			break // without a page size the second meta page cannot be found; bbolt decides
		}
		if _, err := f.ReadAt(head, off); err != nil {
			return fmt.Errorf("%w: %d bytes, cut short", ErrCorrupt, fi.Size())
		}
		if binary.LittleEndian.Uint32(head[boltOffMagic:]) != boltMagic {
			continue
		}
		pgid := binary.LittleEndian.Uint64(head[boltOffPgid:])
		ps := int64(binary.LittleEndian.Uint32(head[boltOffPageSize:]))
		if pgid > 1<<40 || ps > 1<<20 {
			return fmt.Errorf("%w: meta page %d names page %d of %d bytes", ErrCorrupt, i, pgid, ps)
		}
		need = max(need, int64(pgid)*ps)
	}
	if fi.Size() < need {
		return fmt.Errorf("%w: %d bytes, cut short of %d", ErrCorrupt, fi.Size(), need)
	}
	return nil
}
