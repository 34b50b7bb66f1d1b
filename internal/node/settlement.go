package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cenkalti/backoff/v5"
	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/ws"
)

// settlement is the node's chain side: the client, the indexer and the
// channel graph it feeds.
type settlement struct {
	n       *Node
	client  *chain.Client
	graph   *channels.Graph
	indexer *chain.Indexer

	// closing carries the source of every incoming channel that starts closing, for the
	// auto-redeem strategy (runAutoRedeem).
	closing chan common.Address

	// minWin is the network's minimum win probability (the tickets' 56-bit field) as the
	// contract last published it; 0 until it is known.
	minWin atomic.Uint64

	// Key conversions are pure but cost a point decompression each; path
	// selection needs them for every announced peer on every message.
	peerIDs   sync.Map // string(compressed key) → peer.ID
	addresses sync.Map // peer.ID → common.Address
}

// confirmations is the --confirmations flag, or the chain's default for -1.
func confirmations(flag int, chainID uint64) uint64 {
	if flag < 0 {
		return chain.DefaultConfirmations(chainID)
	}
	return uint64(flag)
}

// minWinProb is the network's minimum win probability, for the ledger.
func (s *settlement) minWinProb() uint64 { return s.minWin.Load() }

// peerIDOf is the PeerId of an announced account.
func (s *settlement) peerIDOf(a channels.Announcement) (peer.ID, error) {
	if v, ok := s.peerIDs.Load(string(a.PublicKey)); ok {
		return v.(peer.ID), nil
	}
	id, err := identity.PeerIDFromPubKey(a.PublicKey)
	if err == nil {
		s.peerIDs.Store(string(a.PublicKey), id)
	}
	return id, err
}

// addressOf is the chain address of a peer.
func (s *settlement) addressOf(id peer.ID) (common.Address, error) {
	if v, ok := s.addresses.Load(id); ok {
		return v.(common.Address), nil
	}
	addr, err := identity.AddressOf(id)
	if err == nil {
		s.addresses.Store(id, addr)
	}
	return addr, err
}

// buildSettlement connects to --provider; nil when the node runs without a
// chain.
func (n *Node) buildSettlement(ctx context.Context) error {
	if n.cfg.Provider == "" {
		n.log.Warn("no chain provider: channels, tickets and paid messages are off (set --provider and --channelsContract)")
		return nil
	}
	client, err := chain.Dial(ctx, chain.Config{
		ProviderURL: n.cfg.Provider,
		Key:         n.id.PrivateKey(),
		Channels:    common.HexToAddress(n.cfg.ChannelsContract),
		Logger:      n.log.With("component", "chain"),
	})
	switch {
	case errors.Is(err, chain.ErrNoContract):
		return &StartupError{"channelsContract", fmt.Errorf("%w (the address of the RelayChannels contract on the chain --provider serves)", err)}
	case err != nil:
		return &StartupError{"provider", err}
	}
	s := &settlement{n: n, client: client, graph: channels.NewGraph(), closing: make(chan common.Address, 256)}
	s.indexer, err = chain.NewIndexer(chain.IndexerConfig{
		Source:   client,
		Store:    n.db,
		Graph:    s.graph,
		ChainID:  client.ChainID(),
		Channels: client.ChannelsAddress(),
		OnEvent:  s.onEvent,
		Logger:   n.log.With("component", "indexer"),

		Confirmations: confirmations(n.cfg.Confirmations, client.ChainID()),

		ReindexOnNewChain: n.cfg.ReindexOnNewChain,
	})
	if err != nil {
		client.Close()
		return &StartupError{"channelsContract", err}
	}
	n.chain = s
	// The network's minimum win probability: what the ledger refuses incoming tickets below and
	// never signs below. Read once here; the indexer reports changes (onEvent).
	minWin, err := client.MinWinProb(ctx)
	switch {
	case errors.Is(err, chain.ErrProviderUnavailable):
		return &StartupError{"provider", fmt.Errorf("read the network's minimum win probability: %w", err)}
	case err != nil:
		return &StartupError{"channelsContract", fmt.Errorf("read the network's minimum win probability: %w (a RelayChannels contract older than lottery tickets? deploy the current one)", err)}
	}
	s.minWin.Store(minWin)
	// What the node indexed before a restart serves at once: the stored announcements make the
	// known peers (so paths, pings and forwarding work before the API opens), and the heartbeat's
	// first round, when Run starts, reconnects to them.
	if err := s.indexer.Load(ctx); err != nil {
		if errors.Is(err, chain.ErrChainReplaced) {
			return &StartupError{"reindexOnNewChain", fmt.Errorf("%w; the stored channels and tickets do not exist there (restart with --reindexOnNewChain to drop the index and re-index, or point --provider at the chain indexed)", err)}
		}
		return &StartupError{"data", err}
	}
	s.addAnnouncedPeers()
	return nil
}

// addAnnouncedPeers makes every announced node (but this one) a known peer of the transport.
func (s *settlement) addAnnouncedPeers() {
	added := 0
	for _, a := range s.graph.Peers() {
		if s.addPeer(a) {
			added++
		}
	}
	if added > 0 {
		s.n.log.Info("known peers from stored announcements", "peers", added)
	}
}

// addPeer makes an announced node (but this one) a known peer of the transport; it reports
// whether it did.
func (s *settlement) addPeer(a channels.Announcement) bool {
	if a.Account == s.n.id.Address() {
		return false
	}
	info, err := addrInfo(a)
	if err == nil {
		err = s.n.host.AddPeer(info)
	}
	if err != nil {
		s.n.log.Debug("ignored announcement", "account", a.Account, "err", err)
		return false
	}
	return true
}

// onEvent reacts to indexed contract events: announced peers become libp2p
// peers, and the node's own channel changes are logged.
func (s *settlement) onEvent(ev chain.Event) {
	self := s.n.id.Address()
	switch ev.Kind {
	case chain.AnnouncementEvent:
		s.addPeer(ev.Announcement)
	case chain.MinWinProbEvent:
		s.minWin.Store(ev.MinWinProb)
		s.n.log.Info("network minimum win probability changed", "minWinProb", tickets.FormatWinProb(ev.MinWinProb))
	case chain.ChannelEvent:
		c := ev.Channel
		if c.Source != self && c.Destination != self {
			return
		}
		if ev.Reorg && c.Destination == self && ev.Previous != nil && ev.Previous.TicketIndex > c.TicketIndex && s.n.msg != nil && s.n.msg.ledger != nil {
			// Redemptions of ours may have been in the blocks the reorganisation dropped.
			if _, err := s.n.msg.ledger.RolledBack(c); err != nil {
				s.n.log.Error("reorganisation: putting back unpaid tickets failed", "err", err)
			}
		}
		dir, other := "outgoing", c.Destination
		if c.Destination == self {
			dir, other = "incoming", c.Source
		}
		// A status change is news; a balance change within a state (every redeemed ticket
		// makes one) is detail, or a redemption of 150 tickets would log 150 lines.
		level := slog.LevelInfo
		if ev.Previous != nil && ev.Previous.Status == c.Status && ev.Previous.Epoch == c.Epoch {
			level = slog.LevelDebug
		}
		s.n.log.Log(context.Background(), level, "channel updated", "direction", dir, "counterparty", other,
			"status", c.Status.String(), "balance", formatTokens(c.Balance)+" "+s.client.TokenSymbol(), "epoch", c.Epoch)
		if dir == "incoming" && c.Status == channels.PendingToClose && (ev.Previous == nil || ev.Previous.Status != channels.PendingToClose) {
			select {
			case s.closing <- c.Source: // its tickets are void once it is closed
			default:
				s.n.log.Warn("auto-redeem: too many channels closing at once; this one's tickets wait for the next check", "counterparty", other)
			}
		}
	}
}

// addrInfo turns an announcement into a libp2p peer.
func addrInfo(a channels.Announcement) (peer.AddrInfo, error) {
	id, err := identity.PeerIDFromPubKey(a.PublicKey)
	if err != nil {
		return peer.AddrInfo{}, err
	}
	info := peer.AddrInfo{ID: id}
	for _, s := range a.Multiaddrs {
		ai, err := peer.AddrInfoFromString(s)
		if err != nil || ai.ID != id {
			continue
		}
		info.Addrs = append(info.Addrs, ai.Addrs...)
	}
	if len(info.Addrs) == 0 {
		return info, errors.New("announcement has no usable multiaddr")
	}
	return info, nil
}

// announce publishes the node's multiaddrs on chain once, as soon as its
// account can pay for the transaction; until then it says so in the log
// (and so on the admin WebSocket) instead of failing.
func (s *settlement) announce(ctx context.Context) error {
	var addrs []string
	for _, a := range s.n.host.Addrs() {
		addrs = append(addrs, a.String())
	}
	if err := s.waitIndexed(ctx); err != nil {
		return nil
	}
	if a, ok := s.graph.Announced(s.n.id.Address()); ok && slices.Equal(a.Multiaddrs, addrs) {
		s.n.log.Info("node already announced", "multiaddrs", len(addrs))
		return nil
	}
	warned := false
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		native, err := s.client.NativeBalance(ctx, s.n.id.Address())
		if err == nil && native.Sign() == 0 {
			if !warned {
				s.n.log.Warn("node is not funded: send native currency to its address to announce it", "address", s.n.id.Address())
				warned = true
			}
			return struct{}{}, errNotFunded
		}
		if err == nil {
			_, err = s.client.Announce(ctx, addrs)
		}
		if err != nil && ctx.Err() == nil {
			s.n.log.Warn("announcement failed, retrying", "err", err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(announceRetry.backOff()), backoff.WithMaxElapsedTime(0))
	if err == nil {
		s.n.log.Info("node announced on chain", "multiaddrs", len(addrs))
	}
	return nil
}

// errNotFunded makes announce retry while the node has no native currency.
var errNotFunded = errors.New("not funded")

// waitIndexed waits until the indexer has caught up with the chain head; while the provider
// does not answer it retries with backoff (providerRetry).
func (s *settlement) waitIndexed(ctx context.Context) error {
	head, err := backoff.Retry(ctx, func() (uint64, error) { return s.client.BlockNumber(ctx) },
		backoff.WithBackOff(providerRetry.backOff()), backoff.WithMaxElapsedTime(0))
	if err != nil {
		return err
	}
	return s.indexer.WaitSynced(ctx, head)
}

// synced waits until the indexer has read the chain up to its current head,
// so a reply reflects the transaction just mined.
func (s *settlement) synced(ctx context.Context) error {
	return ledger.FromChain(s.waitHead(ctx))
}

// waitHead is synced with the chain client's error as it is.
func (s *settlement) waitHead(ctx context.Context) error {
	head, err := s.client.BlockNumber(ctx)
	if err != nil {
		return err
	}
	return s.indexer.WaitSynced(ctx, head)
}

// redeemFailure reports a redemption (of every channel, or of the one from
// from) that stopped on err after it began: how many tickets it redeemed,
// how many remain unredeemed, and why. Transactions may have been mined
// before err, so it never says that nothing was sent.
func (t ticketsAPI) redeemFailure(rep ledger.RedeemReport, from *peer.ID, err error) error {
	s := t.m.n.chain
	var left []ledger.AckedTicket
	var lerr error
	if from == nil {
		left, lerr = t.m.ledger.Tickets()
	} else if addr, aerr := s.addressOf(*from); aerr != nil {
		lerr = aerr
	} else {
		left, lerr = t.m.ledger.TicketsFrom(addr)
	}
	if lerr != nil {
		return errors.Join(err, fmt.Errorf("count the tickets left: %w", lerr))
	}
	cause := api.Classify(ledger.FromChain(err), "redeem tickets")
	total := rep.Redeemed + rep.Losing + rep.Neglected + len(left)
	unpaid := ""
	if n := rep.Losing + rep.Neglected; n > 0 {
		unpaid = fmt.Sprintf(", %d settled unpaid (losing or void)", n)
	}
	cause.Msg = fmt.Sprintf("redeemed %d of %d tickets (%s %s)%s; %d remain: %s", rep.Redeemed, total,
		formatTokens(rep.Value.ToBig()), s.client.TokenSymbol(), unpaid, len(left),
		strings.ReplaceAll(strings.TrimSpace(cause.Msg), "\n", "; ")) // errors.Join puts each channel's on a line
	return &api.RedeemError{Cause: cause, Redeemed: rep.Redeemed, Remaining: len(left)}
}

// chainAPI is the settlement layer as the REST API and the admin commands see it: the ledger's
// operations, with peers named by PeerId. Its errors are the ledger's sentinels, which the API
// maps to status codes (api's error table).
type chainAPI struct{ s *settlement }

// ops are the ledger's chain-facing operations for this node.
func (c chainAPI) ops() *ledger.Operations {
	return &ledger.Operations{Chain: c.s.client, Channels: c.s.graph, Self: c.s.n.id.Address(), Synced: c.s.synced}
}

func (c chainAPI) Balances(ctx context.Context) (*big.Int, *big.Int, error) {
	return c.ops().Balances(ctx)
}

func (c chainAPI) TokenSymbol() string { return c.s.client.TokenSymbol() }

func (c chainAPI) Withdraw(ctx context.Context, native bool, amount *big.Int, to common.Address) (string, error) {
	tx, err := c.ops().Withdraw(ctx, native, amount, to)
	if err != nil {
		return "", err
	}
	return tx.Hex(), nil
}

func (c chainAPI) channelView(ch channels.Channel) api.Channel {
	self := c.s.n.id.Address()
	typ, other := "outgoing", ch.Destination
	if ch.Destination == self {
		typ, other = "incoming", ch.Source
	}
	v := api.Channel{Type: typ, ChannelID: "0x" + common.Bytes2Hex(ch.ID[:]), PeerID: c.s.peerName(other),
		Status: ch.Status.String(), Balance: ch.Balance.String()}
	if ch.Status == channels.PendingToClose {
		v.ClosureTime = ch.ClosureTime.UTC().Format(ws.TimeFormat)
	}
	return v
}

func (c chainAPI) Channels(includingClosed bool) (in, out []api.Channel) {
	self := c.s.n.id.Address()
	for _, ch := range c.s.graph.Incoming(self) {
		if includingClosed || ch.Status != channels.Closed {
			in = append(in, c.channelView(ch))
		}
	}
	for _, ch := range c.s.graph.Outgoing(self) {
		if includingClosed || ch.Status != channels.Closed {
			out = append(out, c.channelView(ch))
		}
	}
	return in, out
}

// other is the chain address of a peer that is not this node.
func (c chainAPI) other(id peer.ID) (common.Address, error) {
	other, err := c.s.addressOf(id)
	if err != nil {
		return other, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: err.Error()}
	}
	if other == c.s.n.id.Address() {
		return other, ledger.ErrSelf
	}
	return other, nil
}

func (c chainAPI) Channel(id peer.ID, outgoing bool) (api.Channel, error) {
	other, err := c.other(id)
	if err != nil {
		return api.Channel{}, err
	}
	src, dst := other, c.s.n.id.Address()
	if outgoing {
		src, dst = dst, src
	}
	ch, ok := c.s.graph.Channel(src, dst)
	if !ok || ch.Epoch == 0 {
		return api.Channel{}, fmt.Errorf("%w: no channel with %s", ledger.ErrChannelNotFound, id)
	}
	return c.channelView(ch), nil
}

func (c chainAPI) OpenChannel(ctx context.Context, id peer.ID, amount *big.Int) (string, string, error) {
	other, err := c.other(id)
	if err != nil {
		return "", "", err
	}
	chID, tx, err := c.ops().OpenChannel(ctx, other, amount)
	if err != nil {
		return "", "", err
	}
	return "0x" + common.Bytes2Hex(chID[:]), tx.Hex(), nil
}

func (c chainAPI) CloseChannel(ctx context.Context, id peer.ID, outgoing bool) (string, string, error) {
	other, err := c.other(id)
	if err != nil {
		return "", "", err
	}
	tx, before, err := c.ops().CloseChannel(ctx, other, outgoing)
	switch {
	case errors.Is(err, ledger.ErrChannelNotFound):
		return "", "", fmt.Errorf("%w: no channel with %s", err, id)
	case err != nil:
		return "", "", err
	case tx == (common.Hash{}):
		return "", before.String(), nil
	}
	return tx.Hex(), before.String(), nil
}
