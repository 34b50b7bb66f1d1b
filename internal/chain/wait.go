package chain

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/relayd/relayd/internal/health"
)

// Retry is how a node retries what may work later (a provider that is down, the announcement of
// an unfunded node): exponential backoff from Initial up to Max, each wait drawn uniformly from
// ±50 % of the current interval so that many nodes restarted together do not retry in step.
type Retry struct {
	Initial, Max time.Duration
}

// ProviderRetry is how a node waits for a chain provider that does not answer at start.
var ProviderRetry = Retry{Initial: 500 * time.Millisecond, Max: 30 * time.Second}

// BackOff returns a fresh backoff for one run of retries.
func (r Retry) BackOff() *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     r.Initial,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         r.Max,
	}
}

// WaitHead waits until the indexer has read the chain up to the provider's head now, so that
// what a transaction just mined changed is in the Graph when it returns. A provider that does
// not answer is its error (ErrProviderUnavailable).
func (ix *Indexer) WaitHead(ctx context.Context) error {
	head, err := ix.cfg.Source.BlockNumber(ctx)
	if err != nil {
		return err
	}
	return ix.WaitSynced(ctx, head)
}

// WaitCaughtUp is WaitHead for a node that starts: while the provider does not answer it
// retries with r instead of failing. It returns an error only when ctx ends.
func (ix *Indexer) WaitCaughtUp(ctx context.Context, r Retry) error {
	head, err := backoff.Retry(ctx, func() (uint64, error) { return ix.cfg.Source.BlockNumber(ctx) },
		backoff.WithBackOff(r.BackOff()), backoff.WithMaxElapsedTime(0))
	if err != nil {
		return err
	}
	return ix.WaitSynced(ctx, head)
}

// ReadyLag is how many blocks the indexer may be behind the chain head and still count as
// caught up (blocks mined while it reads).
const ReadyLag = 4

// Checks reports the chain's and the indexer's readiness (health.Checker): the provider answers,
// and the indexer is within ReadyLag blocks of its head.
func (ix *Indexer) Checks(ctx context.Context) []health.Check {
	head, err := ix.cfg.Source.BlockNumber(ctx)
	if err != nil {
		return []health.Check{
			{Name: "chain", Detail: "the chain provider does not answer: " + err.Error()},
			{Name: "indexer", Detail: "the chain head is unknown"},
		}
	}
	next := ix.Next()
	indexer := health.Check{Name: "indexer", Ready: next+ReadyLag > head, Detail: fmt.Sprintf("indexed below block %d; chain head %d", next, head)}
	if ix.storeFull.Load() {
		indexer.Ready, indexer.Detail = false, indexer.Detail+"; the store refuses writes (the disk is full)"
	}
	return []health.Check{{Name: "chain", Ready: true, Detail: fmt.Sprintf("head %d", head)}, indexer}
}

// TypicalBlockTime is the block time assumed of a chain: a second on a development chain (which
// seals at least every second), twelve (Ethereum's) elsewhere, the longest a node is likely to
// meet.
func TypicalBlockTime(chainID uint64) time.Duration {
	if DefaultConfirmations(chainID) == 0 {
		return time.Second
	}
	return 12 * time.Second
}
