package node

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// retryPolicy is how the node retries what may work later (the announcement of an unfunded
// node, a chain provider that is down): exponential backoff with jitter, from Initial up to Max,
// each wait drawn uniformly from ±50 % of the current interval so that many nodes restarted
// together do not retry in step.
type retryPolicy struct {
	Initial, Max time.Duration
}

// jitter is the randomization factor of every retryPolicy: a wait is interval × [0.5, 1.5].
const jitter = 0.5

// backOff returns a fresh backoff for one run of retries.
func (p retryPolicy) backOff() *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     p.Initial,
		RandomizationFactor: jitter,
		Multiplier:          2,
		MaxInterval:         p.Max,
	}
}

// announceRetry is how an unfunded node checks its balance again, and how a failed
// announcement is retried.
var announceRetry = retryPolicy{Initial: time.Second, Max: 10 * time.Second}

// providerRetry is how the node waits for a chain provider that does not answer at start.
var providerRetry = retryPolicy{Initial: 500 * time.Millisecond, Max: 30 * time.Second}
