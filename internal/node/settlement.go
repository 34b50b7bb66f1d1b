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

	"github.com/cenkalti/backoff/v5"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/relay"
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

	// Key conversions are pure but cost a point decompression each; path
	// selection needs them for every announced peer on every message.
	peerIDs   sync.Map // string(compressed key) → peer.ID
	addresses sync.Map // peer.ID → common.Address
}

// peerIDOf is the PeerId of an announced account.
func (s *settlement) peerIDOf(a channels.Announcement) (peer.ID, error) {
	if v, ok := s.peerIDs.Load(string(a.PublicKey)); ok {
		return v.(peer.ID), nil
	}
	id, err := p2p.PeerIDFromPubKey(a.PublicKey)
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
	addr, err := peerAddress(id)
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

		ReindexOnNewChain: n.cfg.ReindexOnNewChain,
	})
	if err != nil {
		client.Close()
		return &StartupError{"channelsContract", err}
	}
	n.chain = s
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
	case chain.ChannelEvent:
		c := ev.Channel
		if c.Source != self && c.Destination != self {
			return
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
	id, err := p2p.PeerIDFromPubKey(a.PublicKey)
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
	return chainError(s.waitHead(ctx))
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
func (t ticketsAPI) redeemFailure(rep relay.RedeemReport, from *peer.ID, err error) error {
	s := t.m.n.chain
	var left []relay.AckedTicket
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
	cause := api.Error{Status: http.StatusInternalServerError, Code: api.CodeUnknownFailure, Msg: err.Error()}
	var ae *api.Error
	switch {
	case errors.Is(err, chain.ErrProviderUnavailable):
		cause = api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnknownFailure, Msg: "the chain provider is unavailable: " + err.Error()}
	case errors.As(chainError(err), &ae):
		cause = *ae
	case errors.Is(err, context.DeadlineExceeded):
		cause = api.Error{Status: http.StatusGatewayTimeout, Code: api.CodeTimeout, Msg: "redeem tickets timed out"}
	}
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

// chainError maps settlement failures to what a client can act on.
func chainError(err error) error {
	var rev *chain.RevertError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, chain.ErrInsufficientFunds):
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeNotEnoughBalance, Msg: "not enough balance: " + err.Error()}
	case errors.As(err, &rev):
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeUnknownFailure, Msg: "the contract refused: " + rev.Reason}
	case errors.Is(err, chain.ErrProviderUnavailable):
		return &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnknownFailure, Msg: "the chain provider is unavailable; nothing was sent"}
	}
	return err
}

// peerAddress is the chain address of a peer: both derive from its key.
func peerAddress(id peer.ID) (common.Address, error) {
	raw, err := p2p.PubKeyFromPeerID(id)
	if err != nil {
		return common.Address{}, err
	}
	pub, err := crypto.DecompressPubkey(raw)
	if err != nil {
		return common.Address{}, err
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// chainAPI is the settlement layer as the REST API and the admin commands
// see it.
type chainAPI struct{ s *settlement }

func (c chainAPI) Balances(ctx context.Context) (*big.Int, *big.Int, error) {
	self := c.s.n.id.Address()
	native, err := c.s.client.NativeBalance(ctx, self)
	if err != nil {
		return nil, nil, chainError(err)
	}
	token, err := c.s.client.TokenBalance(ctx, self)
	return native, token, chainError(err)
}

func (c chainAPI) TokenSymbol() string { return c.s.client.TokenSymbol() }

// amount renders an amount in the smallest unit for an operator: in tokens (or whole units of the
// native currency) with the symbol, and the smallest unit the API speaks in brackets.
func (c chainAPI) amount(native bool, v *big.Int) string {
	sym := c.s.client.TokenSymbol()
	if native {
		sym = "native"
	}
	return fmt.Sprintf("%s %s (%s wei)", formatTokens(v), sym, v)
}

func (c chainAPI) Withdraw(ctx context.Context, native bool, amount *big.Int, to common.Address) (string, error) {
	nativeBal, tokenBal, err := c.Balances(ctx)
	if err != nil {
		return "", err
	}
	have, send := tokenBal, c.s.client.TransferToken
	if native {
		have, send = nativeBal, c.s.client.TransferNative
	}
	if amount.Cmp(have) > 0 {
		return "", &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeNotEnoughBalance,
			Msg: fmt.Sprintf("amount %s is more than the balance %s", c.amount(native, amount), c.amount(native, have))}
	}
	tx, err := send(ctx, to, amount)
	if err != nil {
		return "", chainError(err)
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

// ends returns the source and destination of the channel with a peer.
func (c chainAPI) ends(id peer.ID, outgoing bool) (src, dst common.Address, err error) {
	other, err := c.s.addressOf(id)
	if err != nil {
		return src, dst, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: err.Error()}
	}
	self := c.s.n.id.Address()
	if other == self {
		return src, dst, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidPeerID, Msg: "a channel needs another peer, not this node"}
	}
	if outgoing {
		return self, other, nil
	}
	return other, self, nil
}

func (c chainAPI) Channel(id peer.ID, outgoing bool) (api.Channel, error) {
	src, dst, err := c.ends(id, outgoing)
	if err != nil {
		return api.Channel{}, err
	}
	ch, ok := c.s.graph.Channel(src, dst)
	if !ok || ch.Epoch == 0 {
		return api.Channel{}, &api.Error{Status: http.StatusNotFound, Code: api.CodeChannelNotFound, Msg: "no channel with " + id.String()}
	}
	return c.channelView(ch), nil
}

func (c chainAPI) OpenChannel(ctx context.Context, id peer.ID, amount *big.Int) (string, string, error) {
	src, dst, err := c.ends(id, true)
	if err != nil {
		return "", "", err
	}
	if ch, ok := c.s.graph.Channel(src, dst); ok && ch.Status != channels.Closed {
		return "", "", &api.Error{Status: http.StatusConflict, Code: api.CodeChannelOpen,
			Msg: "a channel to " + id.String() + " is already " + ch.Status.String()}
	}
	balance, err := c.s.client.TokenBalance(ctx, src)
	if err != nil {
		return "", "", chainError(err)
	}
	if amount.Cmp(balance) > 0 {
		return "", "", &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeNotEnoughBalance,
			Msg: fmt.Sprintf("amount %s is more than the token balance %s", c.amount(false, amount), c.amount(false, balance))}
	}
	tx, err := c.s.client.FundChannel(ctx, dst, amount)
	if err != nil {
		return "", "", chainError(err)
	}
	if err := c.s.synced(ctx); err != nil {
		return "", "", err
	}
	chID := channels.IDOf(src, dst)
	return "0x" + common.Bytes2Hex(chID[:]), tx.Hex(), nil
}

func (c chainAPI) CloseChannel(ctx context.Context, id peer.ID, outgoing bool) (string, string, error) {
	src, dst, err := c.ends(id, outgoing)
	if err != nil {
		return "", "", err
	}
	ch, ok := c.s.graph.Channel(src, dst)
	if !ok || ch.Epoch == 0 {
		return "", "", &api.Error{Status: http.StatusNotFound, Code: api.CodeChannelNotFound, Msg: "no channel with " + id.String()}
	}
	before := ch.Status.String()
	var tx common.Hash
	switch {
	case ch.Status == channels.Closed:
		return "", before, nil
	case !outgoing:
		tx, err = c.s.client.CloseIncoming(ctx, src)
	case ch.Status == channels.Open:
		tx, err = c.s.client.InitiateClosure(ctx, dst)
	default: // PendingToClose: finalize once the chain allows it
		tx, err = c.s.client.FinalizeClosure(ctx, dst)
		var rev *chain.RevertError
		if errors.As(err, &rev) && strings.HasPrefix(rev.Reason, "ClosureTimeNotReached") {
			return "", before, nil
		}
	}
	if err != nil {
		return "", "", chainError(err)
	}
	if err := c.s.synced(ctx); err != nil {
		return "", "", err
	}
	return tx.Hex(), before, nil
}
