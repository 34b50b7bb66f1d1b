package node

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// autoRedeemInterval is how often the auto-redeem strategy looks at the tickets waiting.
var autoRedeemInterval = 10 * time.Second

// runAutoRedeem carries out the auto-redeem settings (strategy.RedeemPolicy) until ctx ends:
// every autoRedeemInterval, and at once when a setting changes, it redeems every acknowledged
// ticket when their count or value reached the threshold; and it redeems an incoming channel's
// tickets as soon as the channel starts closing (settlement.onEvent reports it on s.closing).
// Failures are logged and retried at the next check.
func (s *settlement) runAutoRedeem(ctx context.Context) error {
	n := s.n
	t := time.NewTicker(autoRedeemInterval)
	defer t.Stop()
	for {
		var from *common.Address
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-n.settings.redeemKick:
		case src := <-s.closing:
			from = &src
		}
		st := n.settings.get()
		if !st.AutoRedeem {
			continue
		}
		var err error
		switch {
		case from != nil:
			_, err = s.redeemTickets(ctx, from, "incoming channel closing")
		default:
			stats, serr := n.msg.ledger.Statistics()
			if serr != nil || !st.redeemPolicy().ShouldRedeem(stats.Unredeemed, stats.UnredeemedValue.ToBig()) {
				continue
			}
			_, err = s.redeemTickets(ctx, nil, "auto-redeem threshold reached")
		}
		if err != nil && ctx.Err() == nil {
			n.log.Warn("auto-redeem: redemption failed; retrying at the next check", "err", err)
		}
	}
}
