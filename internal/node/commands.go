package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/ws"
)

// commands are the operator commands of the admin WebSocket server.
func (n *Node) commands() []ws.Command {
	return append([]ws.Command{
		{Name: "address", Usage: "address", Help: "Show this node's peer ID and chain address.", Run: n.cmdAddress},
		{Name: "version", Usage: "version", Help: "Show the node's version.",
			Run: func(context.Context, string) ([]string, error) { return []string{"relayd " + Version}, nil }},
		{Name: "peers", Usage: "peers", Help: "List known peers with heartbeat quality.", Run: n.cmdPeers},
		{Name: "ping", Usage: "ping <peer>", Help: "Measure the round trip to a peer (PeerId or alias).", Run: n.cmdPing},
		{Name: "alias", Usage: "alias [<peerId> <name>]", Help: "List aliases, or name a peer.", Run: n.cmdAlias},
		n.settingsCommand(),
	}, n.chainCommands()...)
}

func (n *Node) cmdAddress(context.Context, string) ([]string, error) {
	return []string{
		"PeerId (relay address): " + n.id.PeerID().String(),
		"Native address:         " + n.id.Address().Hex(),
	}, nil
}

func (n *Node) cmdPeers(context.Context, string) ([]string, error) {
	peers := n.host.Peers()
	if len(peers) == 0 {
		return []string{"No known peers."}, nil
	}
	out := []string{fmt.Sprintf("%d known peers:", len(peers))}
	for _, p := range peers {
		seen := "never"
		if !p.LastSeen.IsZero() {
			seen = p.LastSeen.UTC().Format(ws.TimeFormat)
		}
		state := "disconnected"
		if p.Connected {
			state = "connected"
		}
		out = append(out, fmt.Sprintf("  %s  quality %.2f  %s  last seen %s", p.ID, p.Quality, state, seen))
	}
	return out, nil
}

func (n *Node) cmdPing(ctx context.Context, args string) ([]string, error) {
	if args == "" || strings.ContainsAny(args, " \t") {
		return nil, &ws.UsageError{Reason: "ping needs exactly one peer"}
	}
	id, err := n.resolvePeer(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rtt, err := n.host.Ping(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ping %s: %w", id, err)
	}
	return []string{fmt.Sprintf("Pong from %s in %.2f ms", id, float64(rtt.Microseconds())/1000)}, nil
}

func (n *Node) cmdAlias(_ context.Context, args string) ([]string, error) {
	if args == "" {
		list, err := n.db.Aliases()
		if err != nil {
			return nil, err
		}
		out := []string{"me -> " + n.id.PeerID().String()}
		for _, kv := range list {
			out = append(out, kv[0]+" -> "+kv[1])
		}
		return out, nil
	}
	fields := strings.Fields(args)
	if len(fields) != 2 {
		return nil, &ws.UsageError{Reason: "alias needs a PeerId and a name"}
	}
	id, err := p2p.ParsePeerID(fields[0])
	if err != nil {
		return nil, &ws.UsageError{Reason: fmt.Sprintf("%q is not a valid PeerId", fields[0])}
	}
	if err := api.CheckAlias(fields[1]); err != nil {
		return nil, &ws.UsageError{Reason: err.Error()}
	}
	if err := n.db.SetAlias(fields[1], id.String()); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Set alias %s -> %s", fields[1], id)}, nil
}

// resolvePeer turns an operator's peer argument into a PeerId: "me" is this
// node, a valid PeerId is itself, anything else is looked up as an alias.
// It is the one resolver of every command that names a peer. A PeerId is
// read before the aliases so that an alias spelt like a PeerId (refused
// since, but a store may hold one) cannot stand for another peer.
func (n *Node) resolvePeer(s string) (peer.ID, error) {
	if s == api.MeAlias {
		return n.id.PeerID(), nil
	}
	if id, err := p2p.ParsePeerID(s); err == nil {
		return id, nil
	}
	v, err := n.db.Alias(s)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("%q is neither an alias nor a valid PeerId", s)
	case err != nil:
		return "", err
	}
	id, err := p2p.ParsePeerID(v)
	if err != nil {
		return "", fmt.Errorf("alias %q names %q, which is not a valid PeerId", s, v)
	}
	return id, nil
}
