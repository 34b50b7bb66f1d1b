package store

import (
	"context"
	"testing"
	"time"
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
