package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpen: each problem names the flag that fixes it and creates nothing; --init creates the
// directory and the keystore, which the next Open reads back.
func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	c := Config{Data: dir, Identity: filepath.Join(dir, "identity.json"), Password: "S3cret!pass", WeakCrypto: true}
	flag := func(err error) string {
		var fe *FlagError
		if !errors.As(err, &fe) {
			t.Fatalf("%v is not a FlagError", err)
		}
		return fe.Flag
	}
	if _, err := Open(c); flag(err) != "data" {
		t.Fatalf("a missing directory without --init: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directory was created without --init: %v", err)
	}
	c.Init = true
	id, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Init = false
	again, err := Open(c)
	if err != nil || again.Address() != id.Address() {
		t.Fatalf("reopened %v (%v), want %v", again, err, id.Address())
	}
	c.Password, c.PasswordFile = "wrong!password", "pw.txt"
	if _, err := Open(c); flag(err) != "passwordFile" || err.Error() != "--passwordFile: does not decrypt the keystore "+c.Identity {
		t.Fatalf("a wrong password from a file: %v", err)
	}
	c.Identity = filepath.Join(dir, "other.json")
	if _, err := Open(c); flag(err) != "identity" {
		t.Fatalf("a missing keystore without --init: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Data = file
	if _, err := Open(c); flag(err) != "data" {
		t.Fatalf("a file as the data directory: %v", err)
	}
}
