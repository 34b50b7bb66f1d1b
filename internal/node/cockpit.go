package node

import (
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/alerts"
	"github.com/relayd/relayd/internal/history"
)

// buildCockpit builds what the operator's cockpit reads beside the rooms' own state: the
// history of the node's values and the alerts (docs/COCKPIT.md).
func (n *Node) buildCockpit() (err error) {
	hs := history.Sources{Metrics: n.reg, Peers: n.host.Peers,
		Traffic: func() map[peer.ID]history.Traffic { return history.TrafficOf(n.host.PeerTraffic()) }}
	as := alerts.Sources{Peers: n.host.Peers, AddressOf: n.dir.AddressOf}
	if c := n.chain; c != nil {
		hs.Balances, as.Balances, as.Head, as.Indexed, as.Channels, as.Available = c.ops.Balances, c.ops.Balances, c.client.BlockNumber, c.indexer.Next, c.ops.ListChannels, c.ledger.Available
		hs.Tickets = func() (history.Tickets, error) {
			s, err := c.ops.Statistics()
			return history.Tickets{Won: s.Winning, Redeemed: s.Redeemed, RedeemedValue: s.RedeemedValue}, err
		}
	}
	if n.history, err = history.New(history.Config{Store: n.db.History(), Sources: hs, Ticks: n.opts.HistoryTicks, Logger: n.component("history")}); err != nil {
		return &StartupError{Flag: "data", Err: err}
	}
	n.alerts, err = alerts.New(alerts.Config{Sources: as, Settings: n.settings.Get, Logger: n.component("alerts")})
	return err
}
