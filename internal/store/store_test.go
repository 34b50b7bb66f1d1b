package store

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestAliasesPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if err := db.SetAlias("bob", "16Uiu2HAmB"); err != nil {
		t.Fatal(err)
	}
	db.SetAlias("alice", "16Uiu2HAmA")
	db.SetAlias("bob", "16Uiu2HAmB2")
	db.SetAlias("gone", "x")
	if ok, err := db.DeleteAlias("gone"); !ok || err != nil {
		t.Fatalf("delete an alias: %v, %v", ok, err)
	}
	if ok, err := db.DeleteAlias("never-there"); ok || err != nil {
		t.Fatalf("delete an unknown alias: %v, %v", ok, err)
	}
	db.Close()

	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Aliases()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != [2]string{"alice", "16Uiu2HAmA"} || got[1] != [2]string{"bob", "16Uiu2HAmB2"} {
		t.Fatalf("aliases after reopen: %v", got)
	}
	if _, ok, err := db.Alias("gone"); ok || err != nil {
		t.Fatalf("deleted alias: %v, %v", ok, err)
	}
	if id, ok, err := db.Alias("alice"); !ok || err != nil || id != "16Uiu2HAmA" {
		t.Fatalf("alias alice: %q, %v, %v", id, ok, err)
	}
}

func TestSettingsPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := db.Settings(); err != nil || len(s) != 0 {
		t.Fatalf("new store: %v, %v", s, err)
	}
	if err := db.PutSettings(map[string][]byte{"strategy": []byte(`"promiscuous"`), "maxChannels": []byte("5")}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSettings(map[string][]byte{"maxChannels": []byte("7")}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Settings()
	if err != nil || string(s["strategy"]) != `"promiscuous"` || string(s["maxChannels"]) != "7" || len(s) != 2 {
		t.Fatalf("after reopening: %q, %v", s, err)
	}
}

// TestFullDiskIsErrFull: a write the file system refuses for want of space is ErrFull (the
// indexer and the relay retry it), and nothing of the transaction is kept; other errors are not.
func TestFullDiskIsErrFull(t *testing.T) {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	full := &fs.PathError{Op: "write", Path: "relayd.db", Err: syscall.ENOSPC}
	err = db.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketAliases).Put([]byte("alice"), []byte("x")); err != nil {
			return err
		}
		return full
	})
	if !errors.Is(err, ErrFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("update on a full disk: %v, want ErrFull wrapping ENOSPC", err)
	}
	if aliases, err := db.Aliases(); err != nil || len(aliases) != 0 {
		t.Fatalf("aliases after the refused write: %v %v", aliases, err)
	}
	if err := db.update(func(*bolt.Tx) error { return syscall.EIO }); errors.Is(err, ErrFull) {
		t.Fatalf("an I/O error is reported as a full disk: %v", err)
	}
}
