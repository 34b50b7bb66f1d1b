package wait

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records a Fatalf instead of stopping the test.
type fakeT struct {
	testing.TB
	failed atomic.Bool
	msg    string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed.Store(true)
	f.msg = format
	_ = args
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	ft := &fakeT{}
	For(ft, func() bool { return n.Add(1) >= 3 }, time.Second, "three looks")
	if ft.failed.Load() || n.Load() != 3 {
		t.Fatalf("failed %v after %d looks, want success after 3", ft.failed.Load(), n.Load())
	}
}

func TestForFailsAtTheDeadline(t *testing.T) {
	ft := &fakeT{}
	start := time.Now()
	For(ft, func() bool { return false }, 30*time.Millisecond, "never")
	if !ft.failed.Load() || !strings.Contains(ft.msg, "timed out") {
		t.Fatalf("a condition that never holds did not fail the test (%q)", ft.msg)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 5*time.Second {
		t.Fatalf("gave up after %v, want about 30 ms", d)
	}
	if Until(func() bool { return false }, 10*time.Millisecond) {
		t.Fatal("Until reported a condition that never holds")
	}
}
