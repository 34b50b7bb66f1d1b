package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func storedVersion(t *testing.T, db *DB) uint32 {
	t.Helper()
	var v uint32
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		v, err = formatVersion(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrationsAreOrdered(t *testing.T) {
	for i, m := range migrations {
		if m.to != uint32(i+2) || m.run == nil || m.what == "" {
			t.Errorf("migration %d goes to version %d (want %d), run %v, what %q", i, m.to, i+2, m.run != nil, m.what)
		}
	}
	if FormatVersion != uint32(len(migrations)+1) {
		t.Errorf("FormatVersion %d with %d migrations", FormatVersion, len(migrations))
	}
	if _, err := os.Stat(filepath.Join("testdata", fmt.Sprintf("v%d.db", FormatVersion-1))); err != nil {
		t.Errorf("no fixture written by the code before the last migration: %v", err)
	}
}

// TestFixtureV1Migrates: the store written by format version 1 (no meta bucket) opens, is
// migrated once, logged, to FormatVersion, and every record reads back, also after a reopen.
func TestFixtureV1Migrates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	copyFile(t, filepath.Join("testdata", "v1.db"), path)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	db, err := OpenWith(dir, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if v := storedVersion(t, db); v != FormatVersion {
		t.Fatalf("format version %d after the migration, want %d", v, FormatVersion)
	}
	if n := strings.Count(logs.String(), "store: migrated"); n != int(FormatVersion-1) {
		t.Fatalf("%d migrations logged, want %d:\n%s", n, FormatVersion-1, logs.String())
	}
	if !strings.Contains(logs.String(), "from=1 to=2") {
		t.Fatalf("the migration from 1 to 2 is not logged:\n%s", logs.String())
	}
	checkFixture(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	db, err = OpenWith(dir, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if strings.Contains(logs.String(), "migrated") {
		t.Fatalf("a migrated store migrated again:\n%s", logs.String())
	}
	if v := storedVersion(t, db); v != FormatVersion {
		t.Fatalf("format version %d after a reopen", v)
	}
}

// TestFutureFormatIsRefused: a store of a format version this build does not know is refused
// with ErrFutureFormat, and not a byte of it changes.
func TestFutureFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAlias("alice", "16Uiu2HAmAlice"); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaVersion, binary.BigEndian.AppendUint32(nil, FormatVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := filepath.Join(dir, FileName)
	before := fileHash(t, path)
	_, err = OpenWith(dir, Options{Logger: quietLog})
	if !errors.Is(err, ErrFutureFormat) {
		t.Fatalf("open a store of format %d: %v, want ErrFutureFormat", FormatVersion+1, err)
	}
	if want := fmt.Sprintf("format version %d, this relayd reads up to %d", FormatVersion+1, FormatVersion); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	if fileHash(t, path) != before {
		t.Fatal("the refused store was changed")
	}
	if _, err := CheckFile(path); !errors.Is(err, ErrFutureFormat) {
		t.Fatalf("CheckFile: %v, want ErrFutureFormat", err)
	}
	// The lock is released: the store is not held by the refused Open.
	if _, err := BackupDir(dir, new(bytes.Buffer)); err != nil {
		t.Fatalf("back up the refused store: %v", err)
	}
}

// TestFailedMigrationChangesNothing: a migration that fails leaves the store as it was, at its
// old version, with every earlier migration of the same Open undone too.
func TestFailedMigrationChangesNothing(t *testing.T) {
	saved, savedVersion := migrations, FormatVersion
	t.Cleanup(func() { migrations, FormatVersion = saved, savedVersion })
	migrations = append(append([]migration(nil), saved...), migration{to: savedVersion + 1, what: "fails", run: func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketAliases).Put([]byte("half"), []byte("done")); err != nil {
			return err
		}
		return errors.New("disk on fire")
	}})
	FormatVersion = savedVersion + 1

	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	copyFile(t, filepath.Join("testdata", "v1.db"), path)
	before := fileHash(t, path)
	if _, err := OpenWith(dir, Options{Logger: quietLog}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("open with a failing migration: %v", err)
	}
	if fileHash(t, path) != before {
		t.Fatal("a failed migration changed the store")
	}
	migrations, FormatVersion = saved, savedVersion
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, _ := db.Alias("half"); ok {
		t.Fatal("the failed migration's write is in the store")
	}
	checkFixture(t, db)
}

// TestNewStoreStartsAtOne: a new store is written at FormatVersion without migrating, and its
// indexes start at 1 (it issued nothing); every later Open raises the index floor to its clock.
func TestNewStoreStartsAtOne(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_790_000_000_000)
	var logs bytes.Buffer
	db, err := OpenWith(dir, Options{Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if v := storedVersion(t, db); v != FormatVersion || db.IndexFloor() != 0 || logs.Len() != 0 {
		t.Fatalf("new store: version %d, floor %d, log %q", v, db.IndexFloor(), logs.String())
	}
	if first, err := db.ReserveTicketIndexes([32]byte{1}, 1, 0, 4); first != 1 || err != nil {
		t.Fatalf("first index of a new store: %d, %v", first, err)
	}
	db = reopenAt(t, db, dir, now)
	want := uint64(now.UnixMilli()) * IndexesPerMilli
	if db.IndexFloor() != want {
		t.Fatalf("floor after a reopen %d, want %d", db.IndexFloor(), want)
	}
	for _, ch := range [][32]byte{{1}, {2}} { // a channel with reservations and one without
		if first, err := db.ReserveTicketIndexes(ch, 1, 0, 4); first != want || err != nil {
			t.Fatalf("channel %x after a reopen: first index %d, %v; want %d", ch[0], first, err, want)
		}
	}
	// A clock that went back does not lower the floor.
	db = reopenAt(t, db, dir, now.Add(-time.Hour))
	if db.IndexFloor() != want {
		t.Fatalf("floor %d after the clock went back, want %d", db.IndexFloor(), want)
	}
	if first, _ := db.ReserveTicketIndexes([32]byte{1}, 1, 0, 4); first != want+4 {
		t.Fatalf("next index %d, want %d", first, want+4)
	}
}

// TestRestoredBackupIssuesNoIndexTwice: indexes reserved after a backup was made are never
// reserved again by the restored store, also when the same backup is restored twice.
func TestRestoredBackupIssuesNoIndexTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	now := time.UnixMilli(1_790_000_000_000)
	db, err := OpenWith(dir, Options{Now: func() time.Time { return now }, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	ch := [32]byte{9}
	used := map[uint64]bool{}
	reserve := func(n uint64, when string) {
		t.Helper()
		first, err := db.ReserveTicketIndexes(ch, 1, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := first; i < first+n; i++ {
			if used[i] {
				t.Fatalf("%s: index %d reserved again", when, i)
			}
			used[i] = true
		}
	}
	reserve(8, "before the backup")
	var backup bytes.Buffer
	if _, err := db.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	reserve(1000, "after the backup")
	db = reopenAt(t, db, dir, now.Add(time.Second)) // a restart in between
	reserve(1000, "after a restart")
	for i, when := range []string{"after the first restore", "after the second restore"} {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, backup.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		db = reopenAt(t, db, dir, now.Add(time.Duration(i+2)*time.Second))
		reserve(1000, when)
	}
}

// TestBackupWhileWriting: a backup taken while other goroutines write is a whole store (bbolt's
// check passes) holding a prefix of the writes, each whole.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fillFixture(t, db)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.PutSettings(map[string][]byte{fmt.Sprintf("w%d.%d", w, i): bytes.Repeat([]byte{byte(i)}, 512)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	copies := make([]string, 3)
	for i := range copies {
		copies[i] = filepath.Join(t.TempDir(), FileName)
		f, err := os.Create(copies[i])
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.Backup(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := f.Stat(); fi.Size() != n {
			t.Fatalf("backup wrote %d bytes, said %d", fi.Size(), n)
		}
		f.Close()
	}
	close(stop)
	wg.Wait()
	for _, p := range copies {
		if v, err := CheckFile(p); err != nil || v != FormatVersion {
			t.Fatalf("the copy: version %d, %v", v, err)
		}
		c, err := OpenWith(filepath.Dir(p), Options{Logger: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		settings, err := c.Settings()
		if err != nil {
			t.Fatal(err)
		}
		// Each writer's settings are a prefix 0..k-1 of what it wrote.
		for w := range 2 {
			n := 0
			for ; settings[fmt.Sprintf("w%d.%d", w, n)] != nil; n++ {
			}
			for k := range settings {
				var ww, i int
				if _, err := fmt.Sscanf(k, "w%d.%d", &ww, &i); err == nil && ww == w && i >= n {
					t.Errorf("the copy holds %s but not w%d.%d", k, w, n)
				}
			}
		}
		checkFixture(t, c)
		c.Close()
	}
}

// TestBackupDir: a stopped node's store is copied without a change; a running node's is
// refused with ErrLocked.
func TestBackupDir(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	fillFixture(t, db)
	if _, err := BackupDir(dir, new(bytes.Buffer)); !errors.Is(err, ErrLocked) {
		t.Fatalf("back up a store in use: %v, want ErrLocked", err)
	}
	db.Close()
	path := filepath.Join(dir, FileName)
	before := fileHash(t, path)
	out := filepath.Join(t.TempDir(), FileName)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BackupDir(dir, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fileHash(t, path) != before {
		t.Fatal("BackupDir changed the store")
	}
	c, err := OpenWith(filepath.Dir(out), Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkFixture(t, c)
}

// TestCheckFile: a truncated or scribbled copy is refused.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenWith(dir, Options{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	fillFixture(t, db)
	var good bytes.Buffer
	if _, err := db.Backup(&good); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for name, b := range map[string][]byte{
		"good":      good.Bytes(),
		"truncated": good.Bytes()[:good.Len()/2],
		"empty":     nil,
		"scribbled": func() []byte {
			b := bytes.Clone(good.Bytes())
			for i := 4 * 4096; i < 5*4096; i++ { // a whole page past the meta and freelist pages
				b[i] = 0xff
			}
			return b
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			v, err := CheckFile(p)
			if name == "good" {
				if err != nil || v != FormatVersion {
					t.Fatalf("version %d, %v", v, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s copy passed the check (version %d)", name, v)
			}
		})
	}
}
