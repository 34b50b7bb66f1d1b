package ledger

import (
	"context"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/token"
)

// DefaultAutoRedeemInterval is how often AutoRedeem looks at the tickets waiting.
const DefaultAutoRedeemInterval = 10 * time.Second

// AutoRedeem redeems tickets without being asked. An incoming channel that starts closing
// (Closing) has its tickets redeemed at once, whatever the policy says, and again at every check
// until none is left or the channel is closed: they are void once it is closed, and a source that
// finalizes the closure would otherwise take back what it owes. Besides, every Interval and at
// once on Kick, it redeems every acknowledged ticket when the policy is on (strategy.RedeemPolicy)
// and their count or value reached its threshold. It never redeems when the gas would cost more
// than the policy's share of the value (for a closing channel: more than the value). Failures are
// logged and retried at the next check.
type AutoRedeem struct {
	Ledger   *Ledger
	Redeemer Redeemer
	// Policy returns the current policy (the node's settings).
	Policy func() strategy.RedeemPolicy
	// GasPrice returns the current price of a unit of gas in native wei.
	GasPrice func(ctx context.Context) (*big.Int, error)
	// Kick makes it look at once (a setting changed); Closing carries the source of every
	// incoming channel that starts closing (Ledger.Closing). Both optional.
	Kick    <-chan struct{}
	Closing <-chan common.Address
	// Channels tells whether a closing channel is still open to redemption; without it a closing
	// channel is retried until its tickets are gone.
	Channels ChannelLookup
	// Interval is how often it looks (default DefaultAutoRedeemInterval).
	Interval time.Duration
	// ClosurePeriod is the contract's, and ClosureNeeds the time a closing channel's tickets need
	// to be seen and redeemed (MinClosurePeriod): Run warns when the first is shorter.
	ClosurePeriod, ClosureNeeds time.Duration
	Logger                      *slog.Logger
}

// MinClosurePeriod is the shortest closure period in which a destination that follows the chain
// confirmations blocks deep sees an incoming channel start closing and gets its redemptions
// mined: the confirmations, plus five blocks for the redemption transactions (each carries some
// 190 tickets, about 8 M gas), at blockTime each, plus 30 s for polling and a provider's delays. A source that
// finalizes sooner voids what its destination could not redeem in time.
func MinClosurePeriod(confirmations uint64, blockTime time.Duration) time.Duration {
	return time.Duration(confirmations+5)*blockTime + 30*time.Second
}

// whyThreshold is the reason of a routine automatic redemption: with the stream on, one every
// few seconds, so Redeem logs it at debug level (the metrics count what it redeemed).
const whyThreshold = "auto-redeem threshold reached"

// Run carries out the strategy until ctx ends, then returns nil.
func (a *AutoRedeem) Run(ctx context.Context) error {
	every := a.Interval
	if every <= 0 {
		every = DefaultAutoRedeemInterval
	}
	log := a.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if a.ClosurePeriod > 0 && a.ClosurePeriod < a.ClosureNeeds {
		log.Warn("the channels contract's closure period is shorter than a closing channel's redemption may need: a source that finalizes at once can void tickets this node holds",
			"closurePeriod", a.ClosurePeriod, "needs", a.ClosureNeeds)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	closing := map[common.Address]bool{} // sources of closing channels whose tickets wait
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-a.Kick:
		case src := <-a.Closing:
			closing[src] = true
			a.warnClosing(src, log)
		}
		for src := range closing {
			done, err := a.redeemClosing(ctx, src, log)
			if err != nil && ctx.Err() == nil {
				log.Warn("redeeming a closing channel's tickets failed; retrying at the next check", "counterparty", src, "err", err)
			}
			if done {
				delete(closing, src)
			}
		}
		if p := a.Policy(); p.Enabled {
			if err := a.check(ctx, p, nil, log); err != nil && ctx.Err() == nil {
				log.Warn("auto-redeem: redemption failed; retrying at the next check", "err", err)
			}
		}
	}
}

// warnClosing tells the operator what a closing incoming channel puts at stake.
func (a *AutoRedeem) warnClosing(src common.Address, log *slog.Logger) {
	list, err := a.Ledger.TicketsFrom(src)
	if err != nil || len(list) == 0 {
		return
	}
	value := new(big.Int)
	for _, t := range list {
		value.Add(value, t.Ticket.Amount.ToBig())
	}
	log.Warn("an incoming channel is closing: its unredeemed tickets become void once it is closed; redeeming them now",
		"counterparty", src, "tickets", len(list), "value", token.Of(value).String())
}

// redeemClosing redeems the tickets of the closing channel from src; done is true once there is
// nothing left to do (no tickets, or the channel is closed and they are void).
func (a *AutoRedeem) redeemClosing(ctx context.Context, src common.Address, log *slog.Logger) (done bool, err error) {
	if a.Channels != nil {
		if ch, ok := a.Channels.Channel(src, a.Ledger.self); !ok || ch.Status == channels.Closed {
			return true, nil
		}
	}
	// The gas may cost up to the whole value: whatever is not redeemed is lost anyway.
	p := a.Policy()
	if p.MaxGasShare > 0 {
		p.MaxGasShare = 1
	}
	if err := a.check(ctx, p, &src, log); err != nil {
		return false, err
	}
	left, err := a.Ledger.TicketsFrom(src)
	return err == nil && len(left) == 0, err
}

// check redeems what p says should be redeemed now: the tickets of the channel from *from, or,
// with from nil, all of them once past the threshold; each only when worth its gas.
func (a *AutoRedeem) check(ctx context.Context, p strategy.RedeemPolicy, from *common.Address, log *slog.Logger) error {
	var list []AckedTicket
	var err error
	why := whyThreshold
	if from != nil {
		why = "incoming channel closing"
		list, err = a.Ledger.TicketsFrom(*from)
	} else {
		st, serr := a.Ledger.Statistics()
		if serr != nil {
			return serr
		}
		if !p.ShouldRedeem(st.Unredeemed, st.UnredeemedValue.ToBig()) {
			return nil
		}
		list, err = a.Ledger.Tickets()
	}
	if err != nil || len(list) == 0 {
		return err
	}
	value := new(big.Int)
	chans := map[[32]byte]bool{}
	for _, t := range list {
		value.Add(value, t.Ticket.Amount.ToBig())
		chans[t.Ticket.ChannelID] = true
	}
	if p.MaxGasShare > 0 {
		price, err := a.GasPrice(ctx)
		if err != nil {
			return FromChain(err)
		}
		gas := new(big.Int).Mul(price, new(big.Int).SetUint64(chain.EstimateRedeemGas(len(list), len(chans))))
		if !p.WorthGas(gas, value) {
			log.Info("auto-redeem: waiting, the gas would cost more than the share allowed", "tickets", len(list),
				"value", token.Of(value).String(), "gas", token.Of(gas).String(), "maxGasShare", p.MaxGasShare)
			return nil
		}
	}
	_, err = a.Ledger.Redeem(ctx, a.Redeemer, from, why)
	return err
}
