// Package wait is the one polling helper of the tests: wait.For polls a condition until it
// holds or a deadline passes, and fails the test then, naming what it waited for. Tests use it
// instead of sleeping: the interval is a polling interval, never synchronisation.
//
// It may import only the standard library; only test code imports it.
package wait

import (
	"testing"
	"time"
)

// Interval is how often For and Until look at their condition: short next to any deadline, long
// enough not to busy the machine.
const Interval = 5 * time.Millisecond

// For polls cond until it holds; if timeout passes first it fails t with "timed out after
// <timeout> waiting until <what>".
func For(t testing.TB, cond func() bool, timeout time.Duration, what string) {
	t.Helper()
	if !Until(cond, timeout) {
		t.Fatalf("timed out after %s waiting until %s", timeout, what)
	}
}

// Until polls cond until it holds (true) or timeout passes (false), for a caller that reports
// the failure itself.
func Until(cond func() bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Interval) // polling interval, not synchronisation
	}
	return true
}
