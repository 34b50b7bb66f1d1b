package store

import (
	"bytes"
	"testing"
)

// TestEpochStakes: the stakes of an epoch read back as stored, survive a reopen, are overwritten
// when stored again, and only the newest keptStakes epochs are kept.
func TestEpochStakes(t *testing.T) {
	path := t.TempDir()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.EpochStakes(100); ok || err != nil {
		t.Fatalf("nothing stored: ok %v, %v", ok, err)
	}
	for _, first := range []uint64{100, 200, 300, 400} {
		if err := db.PutEpochStakes(first, []byte{byte(first / 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutEpochStakes(300, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for first, want := range map[uint64][]byte{100: nil, 200: {2}, 300: []byte("again"), 400: {4}} {
		got, ok, err := db.EpochStakes(first)
		if err != nil || ok != (want != nil) || !bytes.Equal(got, want) {
			t.Errorf("epoch block %d: %q, %v, %v; want %q", first, got, ok, err, want)
		}
	}
}
