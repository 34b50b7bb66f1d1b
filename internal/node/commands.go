package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/ws"
)

// commands are the operator commands of the admin WebSocket server.
func (n *Node) commands() []ws.Command {
	return append([]ws.Command{
		{Name: "address", Usage: "address [relay|native]", Help: "Show this node's PeerId (relay address) and chain address.", Run: n.cmdAddress},
		{Name: "addresses", Usage: "addresses <peer>", Help: "Show the multiaddresses a peer announced on chain and those it was seen at.", Run: n.cmdAddresses},
		{Name: "version", Usage: "version", Help: "Show the node's version.",
			Run: func(context.Context, string) ([]string, error) { return []string{Version}, nil }},
		{Name: "peers", Usage: "peers", Help: "List known peers with heartbeat quality.", Run: n.cmdPeers},
		{Name: "ping", Usage: "ping <peer>", Help: "Measure the round trip to a peer (PeerId or alias).", Run: n.cmdPing},
		{Name: "alias", Usage: "alias [<peerId> <name>]", Help: "List aliases, or name a peer.", Run: n.cmdAlias},
		{Name: "quit", Usage: "quit", Help: "Stop the node (as a signal would).", Run: n.cmdQuit, After: n.quit},
		n.settingsCommand(),
		n.signCommand(),
	}, n.chainCommands()...)
}

// The admin commands' output starts with the original 2022 node's wording
// (brand renamed: HOPR is RELAY, ETH stays the native coin), so scripts
// written for it keep matching; relayd's extra detail follows it.

func (n *Node) cmdAddress(_ context.Context, args string) ([]string, error) {
	relay := "RELAY Address:  " + n.id.PeerID().String() + " (PeerId)"
	native := "ETH Address:    " + n.id.Address().Hex() + " (native address)"
	switch strings.ToLower(args) {
	case "":
		return []string{relay, native}, nil
	case "relay", "hopr":
		return []string{relay}, nil
	case "native", "eth":
		return []string{native}, nil
	}
	return nil, &ws.UsageError{Reason: fmt.Sprintf("%q is neither relay nor native", args)}
}

func (n *Node) cmdAddresses(_ context.Context, args string) ([]string, error) {
	if args == "" || strings.ContainsAny(args, " \t") {
		return nil, &ws.UsageError{Reason: "addresses needs exactly one peer"}
	}
	id, err := n.resolvePeer(args)
	if err != nil {
		return nil, err
	}
	announced, observed := apiNode{n}.PeerAddresses(id)
	out := []string{"Announced addresses for " + args + ":"}
	for _, a := range announced {
		out = append(out, "- "+a)
	}
	out = append(out, "Observed addresses for "+args+":")
	for _, a := range observed {
		out = append(out, "- "+a)
	}
	return out, nil
}

func (n *Node) cmdPeers(context.Context, string) ([]string, error) {
	peers := n.host.Peers()
	good, poor := 0, 0
	for _, p := range peers {
		switch {
		case fmt.Sprintf("%.2f", p.Quality) == "1.00":
			good++
		case p.Quality < 0.5:
			poor++
		}
	}
	out := []string{fmt.Sprintf("network peers status: %d nodes in total, %d nodes with quality 1.0, %d nodes with quality below 0.5",
		len(peers), good, poor)}
	for _, p := range peers {
		seen := "never"
		if !p.LastSeen.IsZero() {
			seen = p.LastSeen.UTC().Format(ws.TimeFormat)
		}
		state := "disconnected"
		if p.Connected {
			state = "connected"
		}
		out = append(out, fmt.Sprintf("- id: %s, quality: %.2f, %s, last seen: %s", p.ID, p.Quality, state, seen))
	}
	if s := n.chain; s != nil {
		announced := s.graph.Snapshot().Peers()
		out = append(out, fmt.Sprintf("%d peers have announced themselves on chain:", len(announced)))
		for _, a := range announced {
			out = append(out, strings.Join(a.Multiaddrs, ","))
		}
	}
	return out, nil
}

func (n *Node) cmdQuit(_ context.Context, args string) ([]string, error) {
	if args != "" {
		return nil, &ws.UsageError{Reason: "quit takes no arguments"}
	}
	if n.stop == nil {
		return nil, errors.New("the node is not running")
	}
	return []string{"Stopping the node."}, nil
}

// quit stops the node once the quit command's reply is on its way: Run
// shuts down as on a signal and returns.
func (n *Node) quit() {
	n.log.Info("stopping: an admin client sent quit")
	n.stop()
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
	ms := float64(rtt.Microseconds()) / 1000
	return []string{fmt.Sprintf("Pong received in: %d ms (%.2f ms, from %s)", rtt.Round(time.Millisecond).Milliseconds(), ms, id)}, nil
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
	id, err := identity.ParsePeerID(fields[0])
	if err != nil {
		return nil, &ws.UsageError{Reason: fmt.Sprintf("%q is not a valid PeerId", fields[0])}
	}
	if err := api.CheckAlias(fields[1]); err != nil {
		return nil, &ws.UsageError{Reason: err.Error()}
	}
	if err := n.db.SetAlias(fields[1], id.String()); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Set alias '%s' to '%s'.", fields[1], id)}, nil
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
	if id, err := identity.ParsePeerID(s); err == nil {
		return id, nil
	}
	v, err := n.db.Alias(s)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("%q is neither an alias nor a valid PeerId", s)
	case err != nil:
		return "", err
	}
	id, err := identity.ParsePeerID(v)
	if err != nil {
		return "", fmt.Errorf("alias %q names %q, which is not a valid PeerId", s, v)
	}
	return id, nil
}
