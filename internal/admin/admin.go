// Package admin is the node's console language: the commands an operator types on the admin
// WebSocket (or in relayctl), how a line parses, what each command calls in the node's rooms, and
// the text it prints; and the console's lines for a message this node received. It is the one
// place that renders console text, in the wording of the original 2022 node where it had one
// (brand renamed: HOPR is RELAY, ETH stays the native coin), so scripts written for it keep
// matching; relayd's extra detail follows it.
//
// It reaches the rooms only through the small interfaces it declares (deps.go), the same rooms the
// REST API calls, and speaks their vocabulary (the types and sentinels of ledger, router, courier,
// settings, peers, channels, token, gateway, layers); it hands lines to internal/ws, the console's
// transport. It
// must not import internal/node, internal/api, internal/p2p, internal/chain or internal/store.
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/ws"
)

// Config configures the node's commands. Self, Peers, Transport, Settings, Messenger and Version
// are required; Chain, Tickets, ChainInfo, Indexer and Graph are nil on a node without a chain
// (their commands then say so); Mail is nil on a node without the courier (send then sends what
// one packet carries, and inbox, reply and status say so); Sessions is nil on a node that opens
// no sessions (sessions and session say so); Discovery is optional; Quit stops the node (quit).
type Config struct {
	Version   string
	Network   string
	Self      Self
	Peers     Peers
	Transport Transport
	Discovery Discovery
	Settings  Settings
	Messenger Messenger
	Mail      Mail
	Chain     Chain
	Tickets   Tickets
	ChainInfo ChainInfo
	Indexer   Indexer
	Graph     ChannelGraph
	Sessions  Sessions
	// Layers is the node's place in the layers (info); nil or not ok: free routes.
	Layers Layers
	// Quit, when set, stops the node; the quit command calls it once its reply is on its way.
	Quit func()
}

// console holds what the commands need.
type console struct{ cfg Config }

// New returns the node's command set.
func New(cfg Config) (*Commands, error) {
	if cfg.Self == nil || cfg.Peers == nil || cfg.Transport == nil || cfg.Settings == nil || cfg.Messenger == nil || cfg.Version == "" {
		return nil, errors.New("admin: Self, Peers, Transport, Settings, Messenger and Version are required")
	}
	c := &console{cfg: cfg}
	return NewCommands(slices.Concat(c.nodeCommands(), c.mailCommands(), c.chainCommands(), c.sessionCommands())...)
}

var errNoChain = errors.New("this node runs without a chain (--provider and --channelsContract)")

// Received publishes a message this node received on every admin connection through hub, as the
// original node showed it: three log lines, then the message frame, back to back. The frames'
// text goes out escaped (ws.Frame), the message frame's exactly.
func Received(hub *ws.Hub) func(router.Message) {
	return func(m router.Message) {
		now := hub.Now()
		hub.PublishSeq(
			ws.NewFrame(ws.TypeLog, "#### NODE RECEIVED MESSAGE ["+m.ReceivedAt.UTC().Format(ws.TimeFormat)+"] ####", now),
			ws.NewFrame(ws.TypeLog, "Message: "+m.Text, now),
			ws.NewFrame(ws.TypeLog, "Latency: "+strconv.FormatInt(m.Latency().Milliseconds(), 10)+" ms", now),
			ws.NewFrame(ws.TypeMessage, m.Text, now),
		)
	}
}

// pingTimeout bounds the ping command.
const pingTimeout = 10 * time.Second

// withTimeout bounds a command's call into the node.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// usage is a UsageError with a formatted reason.
func usage(format string, args ...any) error {
	return &UsageError{Reason: fmt.Sprintf(format, args...)}
}
