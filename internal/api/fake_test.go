package api

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/tickets"
)

// config serves every part of the node, with its metrics and the real WebSocket streams.
func (n *fakeNode) config(disableAuth bool) Config {
	return Config{Token: testToken, DisableAuth: disableAuth, Version: "9.9.9", Network: "test",
		Self: n.Identity, Peers: n.dir, Transport: n.transport, Discovery: n.discovery, Settings: n.settings,
		Messenger: n.messenger, Mail: n.mail, Chain: n.chain, Tickets: n.chain, ChainInfo: n.chainInfo, Indexer: fakeIndexer(42),
		Graph: n.graph, Metrics: fakeMetrics, Streams: newTestStreams(), Sessions: n.sessions, Backup: fakeBackup{},
		History: newFakeHistory(), Alerts: fakeAlerts{}}
}

// faultyConfig serves n with every chain-side call (messenger, courier, chain, tickets), the
// session gateway's and the signing key failing with err.
func (n *fakeNode) faultyConfig(err error) Config {
	cfg := n.config(false)
	cfg.Self = faultySelf{n.Identity, err}
	cfg.Messenger = faultyMessenger{err}
	cfg.Mail = faultyMail{err}
	cfg.Chain = faultyChain{n.chain, err}
	cfg.Tickets = faultyChain{n.chain, err}
	cfg.Sessions = faultySessions{n.sessions, err}
	cfg.Backup = fakeBackup{err: err}
	return cfg
}

// noChainConfig serves n as a node started without a chain: no messenger, courier, chain,
// tickets, chain info, indexer, graph, streams, metrics nor sessions, and a peer directory
// without announcements.
func (n *fakeNode) noChainConfig() Config {
	dir, err := peers.New(peers.Config{Self: n.PeerID(), Aliases: n.aliases})
	if err != nil {
		panic(err)
	}
	return Config{Token: testToken, Version: "9.9.9", Network: "test", Self: n.Identity, Peers: dir,
		Transport: n.transport, Discovery: n.discovery, Settings: n.settings}
}

// fakeMetrics answers GET /node/metrics as promhttp does.
var fakeMetrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, "# HELP relayd_messages_sent_total Messages sent.\n# TYPE relayd_messages_sent_total counter\nrelayd_messages_sent_total 3\n")
})

// fakeHash is the 32 bytes b, as a transaction hash.
func fakeHash(b byte) common.Hash { return common.BytesToHash(slices.Repeat([]byte{b}, 32)) }

// fakeWallet is the chain address of a node that never announced itself.
var fakeWallet = common.HexToAddress("0x035C68d5251AfF759Ea945A05783F2290EA0Accf")

// fakeTransport is the p2p host: the peers it knows, a scripted ping (1 ms by default) and one
// listening address.
type fakeTransport struct {
	mu    sync.Mutex
	peers []peers.Info
	ping  func(context.Context, peer.ID) (time.Duration, error)
}

func (t *fakeTransport) Peers() []peers.Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.peers)
}

func (t *fakeTransport) setPeers(list ...peers.Info) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers = list
}

func (t *fakeTransport) Ping(ctx context.Context, id peer.ID) (time.Duration, error) {
	if t.ping == nil {
		return time.Millisecond, nil
	}
	return t.ping(ctx, id)
}

func (t *fakeTransport) Addrs() []ma.Multiaddr {
	return []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/9091")}
}

// fakeMessenger refuses a text longer than a packet carries like the router, then answers with
// send, else with an ack challenge.
type fakeMessenger struct {
	send func(ctx context.Context, to peer.ID, text string) (router.Sent, error)
}

func (m *fakeMessenger) Send(ctx context.Context, to peer.ID, text string) (router.Sent, error) {
	if len(text) > packet.MaxMessageSize {
		return router.Sent{}, router.ErrMessageTooLarge
	}
	if m.send != nil {
		return m.send(ctx, to, text)
	}
	return router.Sent{Ack: ack(0x02, 0x00), Relayers: 2}, nil
}

// ack is the ack challenge of prefix then 32 bytes b.
func ack(prefix, b byte) por.AckChallenge {
	var a por.AckChallenge
	a[0] = prefix
	copy(a[1:], slices.Repeat([]byte{b}, 32))
	return a
}

var (
	fakeNative = big.NewInt(1e18) // the account's native balance
	fakeToken  = big.NewInt(5e17) // the account's token balance
)

// fakeChain plays the node's ledger operations (Chain and Tickets) with scripted answers. Its
// account holds 1 native coin and 0.5 tokens. Every peer has an Open incoming channel to the
// node; its outgoing channels are those in open: true while Open, false once their closure was
// initiated (PendingToClose, with a closure period that never ends). tickets are the
// acknowledged tickets.
type fakeChain struct {
	self common.Address

	mu        sync.Mutex
	withdrawn []string
	open      map[common.Address]bool
	tickets   []ledger.AckedTicket
}

func newFakeChain(self common.Address) *fakeChain {
	return &fakeChain{self: self, open: map[common.Address]bool{}}
}

// reset puts back the outgoing channels and the tickets.
func (c *fakeChain) reset(open map[common.Address]bool, list ...ledger.AckedTicket) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open, c.tickets, c.withdrawn = maps.Clone(open), list, nil
	if c.open == nil {
		c.open = map[common.Address]bool{}
	}
}

func (c *fakeChain) Balances(context.Context) (*big.Int, *big.Int, error) {
	return new(big.Int).Set(fakeNative), new(big.Int).Set(fakeToken), nil
}

func (c *fakeChain) TokenSymbol() string { return "RELAY" }

func (c *fakeChain) Withdraw(_ context.Context, native bool, amount *big.Int, to common.Address) (common.Hash, error) {
	have := fakeToken
	if native {
		have = fakeNative
	}
	if amount.Cmp(have) > 0 {
		return common.Hash{}, fmt.Errorf("%w: amount %s is more than the balance %s", ledger.ErrNotEnoughBalance, amount, have)
	}
	c.mu.Lock()
	c.withdrawn = append(c.withdrawn, amount.String())
	c.mu.Unlock()
	return fakeHash(0xaa), nil
}

// outgoing is the channel to other, if the fake has one (c.mu held).
func (c *fakeChain) outgoing(other common.Address) (channels.Channel, bool) {
	open, ok := c.open[other]
	if !ok {
		return channels.Channel{}, false
	}
	ch := channels.Channel{ID: channels.IDOf(c.self, other), Source: c.self, Destination: other, Balance: big.NewInt(100),
		Epoch: 1, Status: channels.Open}
	if !open {
		ch.Status, ch.ClosureTime = channels.PendingToClose, time.Date(2026, 11, 22, 10, 5, 0, 0, time.UTC)
	}
	return ch, true
}

// incoming is the Open channel from other.
func (c *fakeChain) incoming(other common.Address, balance int64) channels.Channel {
	return channels.Channel{ID: channels.IDOf(other, c.self), Source: other, Destination: c.self, Balance: big.NewInt(balance),
		Epoch: 1, Status: channels.Open}
}

// ListChannels: one Open incoming channel from the node itself, as a stand-in, and one from a
// wallet that never announced itself; closed, one more; and the outgoing channels.
func (c *fakeChain) ListChannels(includingClosed bool) (in, out []channels.Channel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in = []channels.Channel{c.incoming(c.self, 100), c.incoming(fakeWallet, 0)}
	if includingClosed {
		closed := c.incoming(c.self, 0)
		closed.ID, closed.Status = [32]byte{0x03}, channels.Closed
		in = append(in, closed)
	}
	for _, other := range slices.SortedFunc(maps.Keys(c.open), common.Address.Cmp) {
		ch, _ := c.outgoing(other)
		out = append(out, ch)
	}
	return in, out
}

func (c *fakeChain) Channel(other common.Address, outgoing bool) (channels.Channel, error) {
	if other == c.self {
		return channels.Channel{}, ledger.ErrSelf
	}
	if !outgoing {
		return c.incoming(other, 100), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.outgoing(other); ok {
		return ch, nil
	}
	return channels.Channel{}, ledger.ErrChannelNotFound
}

func (c *fakeChain) OpenChannel(_ context.Context, dst common.Address, amount *big.Int) ([32]byte, common.Hash, error) {
	if dst == c.self {
		return [32]byte{}, common.Hash{}, ledger.ErrSelf
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.outgoing(dst); ok {
		return [32]byte{}, common.Hash{}, fmt.Errorf("%w: the channel to %s is %s", ledger.ErrChannelAlreadyOpen, dst.Hex(), ch.Status)
	}
	if amount.Cmp(fakeToken) > 0 {
		return [32]byte{}, common.Hash{}, fmt.Errorf("%w: amount %s is more than the token balance %s", ledger.ErrNotEnoughBalance, amount, fakeToken)
	}
	c.open[dst] = true
	return channels.IDOf(c.self, dst), fakeHash(0xbb), nil
}

// CloseChannel closes an incoming channel at once; an outgoing one goes from Open to
// PendingToClose, and stays there.
func (c *fakeChain) CloseChannel(_ context.Context, other common.Address, outgoing bool) (common.Hash, channels.Status, error) {
	ch, err := c.Channel(other, outgoing)
	switch {
	case err != nil:
		return common.Hash{}, 0, err
	case !outgoing:
		return fakeHash(0xcc), ch.Status, nil
	case ch.Status == channels.PendingToClose: // the closure period is not over
		return common.Hash{}, ch.Status, nil
	}
	c.mu.Lock()
	c.open[other] = false
	c.mu.Unlock()
	return fakeHash(0xcc), ch.Status, nil
}

// Tickets are c.tickets, those of one channel selected by their source.
func (c *fakeChain) Tickets(from *common.Address) ([]ledger.AckedTicket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ledger.AckedTicket
	for _, t := range c.tickets {
		if from == nil || t.Source == *from {
			out = append(out, t)
		}
	}
	return out, nil
}

func (c *fakeChain) Statistics() (ledger.Statistics, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ledger.Statistics{Pending: 1, Unredeemed: uint64(len(c.tickets)), Redeemed: 2, Winning: 2, LosingTickets: 2, WinProportion: 0.5}
	for _, t := range c.tickets {
		st.UnredeemedValue.Add(&st.UnredeemedValue, &t.Ticket.Amount)
	}
	st.RedeemedValue.SetUint64(2e16)
	st.WinningValue.SetUint64(2e16)
	st.LosingValue.SetUint64(2e16)
	return st, nil
}

// RedeemTickets redeems the tickets at once.
func (c *fakeChain) RedeemTickets(_ context.Context, from *common.Address, _ string) (ledger.RedeemReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rep ledger.RedeemReport
	kept := c.tickets[:0]
	for _, t := range c.tickets {
		if from != nil && t.Source != *from {
			kept = append(kept, t)
			continue
		}
		rep.Redeemed++
		rep.Value.Add(&rep.Value, &t.Ticket.Amount)
	}
	c.tickets = kept
	return rep, nil
}

// fakeTicket is an acknowledged ticket (0.01 RELAY, always winning) from source to self.
func fakeTicket(source, self common.Address, index uint64) ledger.AckedTicket {
	tk := tickets.Ticket{ChannelID: tickets.ChannelID(source, self), Index: index, Epoch: 1, WinProb: tickets.MaxWinProb}
	tk.Amount.SetUint64(1e16)
	copy(tk.Challenge[:], slices.Repeat([]byte{0xab}, 20))
	copy(tk.Signature[:], slices.Repeat([]byte{0xcd}, 64))
	tk.Signature[64] = 0x1b
	return ledger.AckedTicket{Source: source, Ticket: tk}
}

// fakeChainInfo describes a dev chain whose closure period is closure.
type fakeChainInfo struct{ closure time.Duration }

func (fakeChainInfo) ChainID() uint64                 { return 1337 }
func (fakeChainInfo) ChannelsAddress() common.Address { return common.HexToAddress("0x01") }
func (fakeChainInfo) TokenAddress() common.Address    { return common.HexToAddress("0x02") }
func (fakeChainInfo) TokenSymbol() string             { return "RELAY" }
func (i fakeChainInfo) ClosurePeriod() time.Duration  { return i.closure }

// fakeIndexer has read the blocks below it.
type fakeIndexer uint64

func (i fakeIndexer) Next() uint64 { return uint64(i) }

// faultyChain is the fakeChain whose every call that can fail fails with err.
type faultyChain struct {
	*fakeChain
	err error
}

func (c faultyChain) Balances(context.Context) (*big.Int, *big.Int, error) { return nil, nil, c.err }
func (c faultyChain) Withdraw(context.Context, bool, *big.Int, common.Address) (common.Hash, error) {
	return common.Hash{}, c.err
}
func (c faultyChain) Channel(common.Address, bool) (channels.Channel, error) {
	return channels.Channel{}, c.err
}
func (c faultyChain) OpenChannel(context.Context, common.Address, *big.Int) ([32]byte, common.Hash, error) {
	return [32]byte{}, common.Hash{}, c.err
}
func (c faultyChain) CloseChannel(context.Context, common.Address, bool) (common.Hash, channels.Status, error) {
	return common.Hash{}, 0, c.err
}
func (c faultyChain) Tickets(*common.Address) ([]ledger.AckedTicket, error) { return nil, c.err }
func (c faultyChain) Statistics() (ledger.Statistics, error)                { return ledger.Statistics{}, c.err }
func (c faultyChain) RedeemTickets(context.Context, *common.Address, string) (ledger.RedeemReport, error) {
	return ledger.RedeemReport{}, c.err
}

// faultyMessenger fails every send with err.
type faultyMessenger struct{ err error }

func (m faultyMessenger) Send(context.Context, peer.ID, string) (router.Sent, error) {
	return router.Sent{}, m.err
}

// faultySelf is the node's identity whose signing fails with err.
type faultySelf struct {
	*identity.Identity
	err error
}

func (s faultySelf) SignMessage(string) (string, error) { return "", s.err }
