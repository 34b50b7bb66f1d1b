package store

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestReplayTagsPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.ReplayTags()
	if err != nil {
		t.Fatal(err)
	}
	a, b := [32]byte{1}, [32]byte{2}
	if fresh, _ := r.CheckAndAdd(a); !fresh {
		t.Fatal("first tag not fresh")
	}
	if fresh, _ := r.CheckAndAdd(a); fresh {
		t.Fatal("repeated tag accepted")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, time.Hour) }()
	r.CheckAndAdd(b)
	cancel() // Run flushes on the way out
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err = db.ReplayTags()
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 2 {
		t.Fatalf("%d tags after reopen, want 2", r.Len())
	}
	for _, tag := range [][32]byte{a, b} {
		if fresh, _ := r.CheckAndAdd(tag); fresh {
			t.Fatalf("tag %x accepted again after restart", tag[0])
		}
	}
}

func TestReplayTagsReadBothLayouts(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := [32]byte{0xee, 1}
	// A store written by an older relayd: one key per tag.
	if err := db.bolt.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketReplay).Put(old[:], nil) }); err != nil {
		t.Fatal(err)
	}
	r, err := db.ReplayTags()
	if err != nil {
		t.Fatal(err)
	}
	var tags [][32]byte
	for batch := range 3 { // three flushes: three appended entries
		for i := range 50 {
			tag := [32]byte{byte(batch), byte(i), 0x77}
			tags = append(tags, tag)
			if fresh, _ := r.CheckAndAdd(tag); !fresh {
				t.Fatalf("tag %d/%d not fresh", batch, i)
			}
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r, err = db.ReplayTags(); err != nil {
		t.Fatal(err)
	}
	if r.Len() != len(tags)+1 {
		t.Fatalf("%d tags after reopen, want %d", r.Len(), len(tags)+1)
	}
	for _, tag := range append(tags, old) {
		if fresh, _ := r.CheckAndAdd(tag); fresh {
			t.Fatalf("tag %x accepted again after restart", tag[:2])
		}
	}
}
