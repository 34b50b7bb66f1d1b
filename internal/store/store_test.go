package store

import (
	"errors"
	"testing"
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
	db.DeleteAlias("gone")
	if err := db.DeleteAlias("never-there"); err != nil {
		t.Fatal(err)
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
	if _, err := db.Alias("gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted alias: %v", err)
	}
}
