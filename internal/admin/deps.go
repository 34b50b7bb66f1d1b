package admin

import (
	"context"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
)

// The interfaces the commands call, each implemented by one of the node's rooms (named in its
// comment), as the REST API's are; tests use small fakes.

// Self is this node; *identity.Identity implements it.
type Self interface {
	Address() common.Address
	PeerID() peer.ID
	SignMessage(message string) (string, error)
}

// Peers names peers; *peers.Directory implements it.
type Peers interface {
	Resolve(name string) (peer.ID, error)
	AddressOf(id peer.ID) (common.Address, error)
	Name(account common.Address) string
	Aliases() ([]peers.Alias, error)
	SetAlias(alias string, id peer.ID) error
}

// Transport is the p2p host; *p2p.Host implements it.
type Transport interface {
	Peers() []peers.Info
	Ping(ctx context.Context, id peer.ID) (time.Duration, error)
	Addrs() []ma.Multiaddr
}

// Discovery is what the node knows of peers' addresses; *discovery.Discovery implements it.
type Discovery interface {
	PeerAddresses(id peer.ID) (announced, observed []string)
}

// Settings are the operator's settings; *settings.Settings implements it.
type Settings interface {
	Get() settings.Values
	UpdateText(name, text string) (settings.Values, error)
}

// Messenger sends this node's messages; *router.Router implements it.
type Messenger interface {
	Send(ctx context.Context, recipient peer.ID, text string) (router.Sent, error)
	SendPath(ctx context.Context, hops []peer.ID, text string) (router.Sent, error)
}

// Mail is the node's courier: long, reliable and answerable messages, and the inbox of those
// received; *courier.Courier implements it. Its errors are courier's sentinels (and, for Reply,
// router's).
type Mail interface {
	Send(req courier.Request) ([16]byte, error)
	Status(id [16]byte) (courier.OutboxMessage, error)
	Reply(ctx context.Context, seq uint64, body []byte) (id [16]byte, blocksLeft int, err error)
	Inbox(since uint64, limit int) ([]courier.InboxMessage, int, error)
}

// Chain is the node's account and channels; *ledger.Operations implements it.
type Chain interface {
	Balances(ctx context.Context) (native, token *big.Int, err error)
	TokenSymbol() string
	Withdraw(ctx context.Context, native bool, amount *big.Int, to common.Address) (common.Hash, error)
	ListChannels(includingClosed bool) (in, out []channels.Channel)
	OpenChannel(ctx context.Context, dst common.Address, amount *big.Int) ([32]byte, common.Hash, error)
	CloseChannel(ctx context.Context, other common.Address, outgoing bool) (common.Hash, channels.Status, error)
}

// Tickets are the node's tickets; *ledger.Operations implements it.
type Tickets interface {
	Statistics() (ledger.Statistics, error)
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
// implements it, as it does the REST API's. Its errors are gateway's sentinels.
type Sessions interface {
	// Open listens on a local address and carries every connection (or datagram flow) it
	// accepts there to o.Destination.
	Open(ctx context.Context, o gateway.Open) (gateway.Info, error)
	// List is the open sessions, oldest first.
	List() []gateway.Info
	// Close closes the session id (gateway.ErrUnknownSession).
	Close(id string) error
}
