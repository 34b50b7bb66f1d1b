package ledger

import (
	"context"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/token"
)

// DefaultAutoRedeemInterval is how often AutoRedeem looks at the tickets waiting.
const DefaultAutoRedeemInterval = 10 * time.Second

// AutoRedeem is the auto-redeem strategy at work (strategy.RedeemPolicy): every Interval, and at
// once on Kick, it redeems every acknowledged ticket when their count or value reached the
// policy's threshold; it redeems an incoming channel's tickets as soon as the channel starts
// closing (Closing), since they are void once it is closed; and it never redeems when the gas
// would cost more than the policy's share of the value. Failures are logged and retried at the
// next check.
type AutoRedeem struct {
	Ledger   *Ledger
	Redeemer Redeemer
	// Policy returns the current policy (the node's settings).
	Policy func() strategy.RedeemPolicy
	// GasPrice returns the current price of a unit of gas in native wei.
	GasPrice func(ctx context.Context) (*big.Int, error)
	// Kick makes it look at once (a setting changed); Closing carries the source of every
	// incoming channel that starts closing. Both optional.
	Kick    <-chan struct{}
	Closing <-chan common.Address
	// Interval is how often it looks (default DefaultAutoRedeemInterval).
	Interval time.Duration
	Logger   *slog.Logger
}

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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var from *common.Address
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-a.Kick:
		case src := <-a.Closing:
			from = &src
		}
		p := a.Policy()
		if !p.Enabled {
			continue
		}
		if err := a.check(ctx, p, from, log); err != nil && ctx.Err() == nil {
			log.Warn("auto-redeem: redemption failed; retrying at the next check", "err", err)
		}
	}
}

// check redeems what p says should be redeemed now: the tickets of the channel from *from, or,
// with from nil, all of them once past the threshold; each only when worth its gas.
func (a *AutoRedeem) check(ctx context.Context, p strategy.RedeemPolicy, from *common.Address, log *slog.Logger) error {
	var list []AckedTicket
	var err error
	why := "auto-redeem threshold reached"
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
