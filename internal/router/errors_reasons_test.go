package router

import (
	"errors"
	"slices"
	"testing"
)

// TestReasonsListsEveryReason: what Reason returns is one of Reasons, and each of Reasons is
// returned for some error, so the series exposed at 0 from the start are exactly these.
func TestReasonsListsEveryReason(t *testing.T) {
	seen := map[string]bool{}
	for _, err := range []error{ErrNoChain, ErrNoPath, ErrNotEnoughBalance, errors.New("stream reset")} {
		r := Reason(err)
		if !slices.Contains(Reasons, r) {
			t.Errorf("Reason(%v) = %q, not in Reasons %q", err, r, Reasons)
		}
		seen[r] = true
	}
	if len(seen) != len(Reasons) {
		t.Errorf("reasons returned %v, Reasons %q", seen, Reasons)
	}
}
