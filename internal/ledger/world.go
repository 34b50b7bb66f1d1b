package ledger

import (
	"context"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/strategy"
)

// ClosureSlack is how long after a channel's closure time the strategy finalizes it, for the
// chain's clock to pass it too.
const ClosureSlack = 2 * time.Second

// ChannelWorld is the node as the channel strategy sees and changes it (strategy.World): its token
// balance, the announced peers with their heartbeat quality, its outgoing channels at what the
// tickets it signed leave of them, and Operations' open and close.
type ChannelWorld struct {
	Ops *Operations
	// Snapshot is the node's view of the channels and announcements; *channels.Graph has it.
	Snapshot func() *channels.Snapshot
	// Qualities are the heartbeat qualities of the known peers by chain address.
	Qualities func() map[common.Address]float64
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// State implements strategy.World.
func (w ChannelWorld) State(ctx context.Context) (strategy.State, error) {
	self := w.Ops.Self
	balance, err := w.Ops.Chain.TokenBalance(ctx, self)
	if err != nil {
		return strategy.State{}, FromChain(err)
	}
	st := strategy.State{Balance: balance}
	quality := w.Qualities()
	snap := w.Snapshot()
	incoming := map[common.Address]int{}
	for _, c := range snap.Channels() {
		if c.Status == channels.Open && c.Source != self {
			incoming[c.Destination]++
		}
	}
	for _, a := range snap.Peers() {
		if a.Account != self {
			st.Peers = append(st.Peers, strategy.Peer{Address: a.Account, Quality: quality[a.Account], Incoming: incoming[a.Account]})
		}
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	for _, c := range snap.Outgoing(self) {
		switch c.Status {
		case channels.Open:
			capacity, avail := new(big.Int).Set(c.Balance), new(big.Int).Set(c.Balance)
			if w.Ops.Ledger != nil {
				// Less the tickets signed and not redeemed: in face amount for top-ups, and in the
				// expected value a ticket can carry for depletion (the strategy's thresholds are
				// values, PROTOCOL.md §4.9).
				if a, ok := w.Ops.Ledger.Available(c.Destination); ok {
					avail = a.ToBig()
				}
				if cp, ok := w.Ops.Ledger.Capacity(c.Destination); ok {
					capacity = cp.ToBig()
				}
			}
			st.Open = append(st.Open, strategy.Channel{Peer: c.Destination, Balance: capacity, Available: avail})
		case channels.PendingToClose:
			if now.After(c.ClosureTime.Add(ClosureSlack)) {
				st.Finalizable = append(st.Finalizable, c.Destination)
			} else {
				st.Busy = append(st.Busy, c.Destination)
			}
		}
	}
	return st, nil
}

// Open implements strategy.World.
func (w ChannelWorld) Open(ctx context.Context, peer common.Address, amount *big.Int) error {
	_, _, err := w.Ops.OpenChannel(ctx, peer, amount)
	return err
}

// TopUp implements strategy.World.
func (w ChannelWorld) TopUp(ctx context.Context, peer common.Address, amount *big.Int) error {
	_, err := w.Ops.TopUpChannel(ctx, peer, amount)
	return err
}

// Close implements strategy.World.
func (w ChannelWorld) Close(ctx context.Context, peer common.Address) error {
	_, _, err := w.Ops.CloseChannel(ctx, peer, true)
	return err
}
