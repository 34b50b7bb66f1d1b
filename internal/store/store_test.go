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
	if err := db.DeleteAlias("never-there"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete an unknown alias: %v", err)
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
