package node

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/strategy"
)

// strategyWorld is the node as the channel strategy sees and changes it.
type strategyWorld struct{ s *settlement }

// closureSlack is how long after a channel's closure time the strategy finalizes it, for the
// chain's clock to pass it too.
const closureSlack = 2 * time.Second

func (w strategyWorld) State(ctx context.Context) (strategy.State, error) {
	s := w.s
	self := s.n.id.Address()
	balance, err := s.client.TokenBalance(ctx, self)
	if err != nil {
		return strategy.State{}, err
	}
	st := strategy.State{Balance: balance}
	quality := map[string]float64{}
	for _, p := range s.n.host.Peers() {
		quality[p.ID.String()] = p.Quality
	}
	snap := s.graph.Snapshot()
	incoming := map[common.Address]int{}
	for _, c := range snap.Channels() {
		if c.Status == channels.Open && c.Source != self {
			incoming[c.Destination]++
		}
	}
	for _, a := range snap.Peers() {
		if a.Account == self {
			continue
		}
		id, err := s.peerIDOf(a)
		if err != nil {
			continue
		}
		st.Peers = append(st.Peers, strategy.Peer{Address: a.Account, Quality: quality[id.String()], Incoming: incoming[a.Account]})
	}
	now := time.Now()
	for _, c := range snap.Outgoing(self) {
		switch c.Status {
		case channels.Open:
			avail := new(big.Int).Set(c.Balance)
			if s.n.msg != nil && s.n.msg.ledger != nil {
				if a, ok := s.n.msg.ledger.Capacity(c.Destination); ok {
					// Less the tickets signed and not redeemed, in the expected value a ticket can
					// carry (the strategy's thresholds are values, PROTOCOL.md §4.9).
					avail = a.ToBig()
				}
			}
			st.Open = append(st.Open, strategy.Channel{Peer: c.Destination, Balance: avail})
		case channels.PendingToClose:
			if now.After(c.ClosureTime.Add(closureSlack)) {
				st.Finalizable = append(st.Finalizable, c.Destination)
			} else {
				st.Busy = append(st.Busy, c.Destination)
			}
		}
	}
	return st, nil
}

func (w strategyWorld) Open(ctx context.Context, to common.Address, amount *big.Int) error {
	id, err := w.peerID(to)
	if err != nil {
		return err
	}
	_, _, err = chainAPI{w.s}.OpenChannel(ctx, id, amount)
	return err
}

func (w strategyWorld) Close(ctx context.Context, to common.Address) error {
	id, err := w.peerID(to)
	if err != nil {
		return err
	}
	_, _, err = chainAPI{w.s}.CloseChannel(ctx, id, true)
	return err
}

func (w strategyWorld) peerID(a common.Address) (peer.ID, error) {
	ann, ok := w.s.graph.Announced(a)
	if !ok {
		return "", fmt.Errorf("%s has not announced itself", a.Hex())
	}
	return w.s.peerIDOf(ann)
}

// buildStrategy makes the channel strategy's runner; the node has a chain.
func (n *Node) buildStrategy() (*strategy.Runner, error) {
	return strategy.NewRunner(strategy.RunnerConfig{
		Policy:   func() strategy.Policy { return n.settings.get().policy() },
		World:    strategyWorld{n.chain},
		Interval: n.cfg.StrategyInterval,
		Kick:     n.settings.kick,
		Logger:   n.log.With("component", "strategy"),
	})
}
