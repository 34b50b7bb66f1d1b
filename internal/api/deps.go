package api

import (
	"context"
	"encoding/json"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/alerts"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/history"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
)

// The interfaces the handlers call, each implemented by one of the node's rooms (named in its
// comment); tests use small fakes.

// Self is this node; *identity.Identity implements it.
type Self interface {
	Address() common.Address
	PeerID() peer.ID
	// SignMessage signs message with the node's key (identity.SignMessagePrefix) and returns 0x
	// and the 64-byte compact signature r ‖ s in hexadecimal.
	SignMessage(message string) (string, error)
}

// Peers names peers; *peers.Directory implements it.
type Peers interface {
	// Resolve turns "me", a PeerId or an alias into a PeerId (peers.ErrUnknownName).
	Resolve(name string) (peer.ID, error)
	AddressOf(id peer.ID) (common.Address, error)
	PeerIDOf(a channels.Announcement) (peer.ID, error)
	// Name names an account by its PeerId once it announced itself, else by its address.
	Name(account common.Address) string
	Aliases() ([]peers.Alias, error)
	SetAlias(alias string, id peer.ID) error
	// DeleteAlias fails with peers.ErrAliasNotFound when the alias is not set.
	DeleteAlias(alias string) error
}

// Transport is the p2p host; *p2p.Host implements it.
type Transport interface {
	// Peers lists the known peers with their heartbeat quality.
	Peers() []peers.Info
	// Ping measures the round trip to a peer; an error wrapping identity.ErrNoAddress for a peer
	// the node knows no address of, identity.ErrSelf for the node itself.
	Ping(ctx context.Context, id peer.ID) (time.Duration, error)
	// Addrs are the addresses the node listens on.
	Addrs() []ma.Multiaddr
}

// Discovery is what the node knows of other nodes' addresses; *discovery.Discovery implements it.
type Discovery interface {
	EntryNodes() map[peer.ID][]string
	PeerAddresses(id peer.ID) (announced, observed []string)
}

// Settings are the operator's settings; *settings.Settings implements it.
type Settings interface {
	Get() settings.Values
	// Update changes the named settings, all or none (settings.ErrUnknown, settings.ErrInvalid).
	Update(values map[string]json.RawMessage) (settings.Values, error)
}

// Messenger sends this node's messages; *router.Router implements it. Its errors are router's
// sentinels.
type Messenger interface {
	Send(ctx context.Context, recipient peer.ID, text string) (router.Sent, error)
}

// Mail sends this node's messages of any length, reliably, with reply blocks, and keeps the
// messages delivered to it until the app reads them; *courier.Courier implements it. Its errors
// are courier's sentinels (and, for Reply, which sends at once, router's).
type Mail interface {
	// Send accepts a message, stores it as queued and returns its id at once.
	Send(req courier.Request) ([16]byte, error)
	// Status is the state of one of this node's outgoing messages (courier.ErrNotFound).
	Status(id [16]byte) (courier.OutboxMessage, error)
	// Reply answers the inbox message seq on its reply blocks; it returns the answer's id and the
	// blocks left (courier.ErrNoReplyBlock, courier.ErrReplyTooLarge, courier.ErrNotFound).
	Reply(ctx context.Context, seq uint64, body []byte) (id [16]byte, blocksLeft int, err error)
	// Inbox lists the kept messages with a seq above since, oldest first, at most limit, and how
	// many are kept.
	Inbox(since uint64, limit int) ([]courier.InboxMessage, int, error)
	// Pop removes and returns the oldest kept message; false when there is none.
	Pop() (courier.InboxMessage, bool, error)
	// Delete removes the kept message seq; false when there is none.
	Delete(seq uint64) (bool, error)
}

// Chain is the node's account and channels; *ledger.Operations implements it. Its errors are
// ledger's sentinels.
type Chain interface {
	Balances(ctx context.Context) (native, token *big.Int, err error)
	TokenSymbol() string
	Withdraw(ctx context.Context, native bool, amount *big.Int, to common.Address) (common.Hash, error)
	ListChannels(includingClosed bool) (in, out []channels.Channel)
	Channel(other common.Address, outgoing bool) (channels.Channel, error)
	OpenChannel(ctx context.Context, dst common.Address, amount *big.Int) ([32]byte, common.Hash, error)
	CloseChannel(ctx context.Context, other common.Address, outgoing bool) (common.Hash, channels.Status, error)
}

// Tickets are the node's tickets; *ledger.Operations implements it.
type Tickets interface {
	Tickets(from *common.Address) ([]ledger.AckedTicket, error)
	Statistics() (ledger.Statistics, error)
	// RedeemTickets fails with a *ledger.RedeemError once the redemption began.
	RedeemTickets(ctx context.Context, from *common.Address, why string) (ledger.RedeemReport, error)
}

// ChainInfo describes the chain and the contracts; *chain.Client implements it.
type ChainInfo interface {
	ChainID() uint64
	ChannelsAddress() common.Address
	TokenAddress() common.Address
	TokenSymbol() string
	ClosurePeriod() time.Duration
}

// Indexer is the chain indexer's progress; *chain.Indexer implements it.
type Indexer interface {
	// Next is the first block the indexer has not read.
	Next() uint64
}

// ChannelGraph is the node's view of the channels and announcements; *channels.Graph implements it.
type ChannelGraph interface {
	Snapshot() *channels.Snapshot
}

// Layers is the node's place in its network's layered topology; *layers.View implements it (a
// nil one too: free routes, ok false).
type Layers interface {
	Status() (st layers.Status, ok bool)
}

// Sessions are the sessions this node opens towards exits (docs/SESSIONS.md); *gateway.Entry
// implements it. Its errors are gateway's sentinels.
type Sessions interface {
	// Open listens on a local address and carries every connection (or datagram flow) it
	// accepts there to o.Destination; it returns the session as List shows it.
	Open(ctx context.Context, o gateway.Open) (gateway.Info, error)
	// List is the open sessions, oldest first.
	List() []gateway.Info
	// Close closes the session id and every connection it carries (gateway.ErrUnknownSession).
	Close(id string) error
}

// History is the history the node keeps of itself (docs/COCKPIT.md); *history.History
// implements it.
type History interface {
	// View is one resolution's series (history.ErrUnknownResolution).
	View(res history.Resolution) (history.View, error)
}

// Alerts are the node's raised alerts (docs/COCKPIT.md); *alerts.Alerts implements it.
type Alerts interface {
	Alerts() []alerts.Alert
}
