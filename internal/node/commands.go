package node

import (
	"context"

	"github.com/relayd/relayd/internal/ws"
)

// commands are the operator commands of the admin WebSocket server.
func (n *Node) commands() []ws.Command {
	return []ws.Command{
		{Name: "address", Usage: "address", Help: "Show this node's peer ID and chain address.",
			Run: func(context.Context, string) ([]string, error) {
				return []string{
					"PeerId (relay address): " + n.id.PeerID().String(),
					"Native address:         " + n.id.Address().Hex(),
				}, nil
			}},
		{Name: "version", Usage: "version", Help: "Show the node's version.",
			Run: func(context.Context, string) ([]string, error) { return []string{"relayd " + Version}, nil }},
	}
}
