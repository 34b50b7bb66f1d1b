package node

import (
	"testing"
	"time"
)

// TestRetryPolicyBounded: every wait of a retry policy lies within ±50 % of an interval that
// starts at Initial and never exceeds Max, and the waits are jittered.
func TestRetryPolicyBounded(t *testing.T) {
	for name, p := range map[string]retryPolicy{"announce": announceRetry, "provider": providerRetry} {
		t.Run(name, func(t *testing.T) {
			if p.Initial <= 0 || p.Max < p.Initial {
				t.Fatalf("policy %+v", p)
			}
			b := p.backOff()
			b.Reset()
			lo, hi := time.Duration(float64(p.Initial)*(1-jitter)), time.Duration(float64(p.Max)*(1+jitter))
			seen := map[time.Duration]bool{}
			var last time.Duration
			for i := range 100 {
				d := b.NextBackOff()
				if d < lo || d > hi {
					t.Fatalf("wait %d is %v, outside [%v, %v]", i, d, lo, hi)
				}
				if i == 0 && d > time.Duration(float64(p.Initial)*(1+jitter)) {
					t.Fatalf("first wait %v, more than Initial %v + 50 %%", d, p.Initial)
				}
				seen[d], last = true, d
			}
			if last < time.Duration(float64(p.Max)*(1-jitter)) {
				t.Fatalf("after 100 retries the wait is %v, never reached Max %v", last, p.Max)
			}
			if len(seen) < 50 {
				t.Fatalf("only %d distinct waits in 100: no jitter", len(seen))
			}
		})
	}
}
