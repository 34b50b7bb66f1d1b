package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/cover"
	"github.com/relayd/relayd/internal/discovery"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/stream"
	"github.com/relayd/relayd/internal/version"
	"github.com/relayd/relayd/internal/ws"
)

// build creates every room, in the order their dependencies need; on error the caller closes
// what exists.
func (n *Node) build() (err error) {
	if n.db, err = store.OpenWith(n.cfg.Data, store.Options{Logger: n.component("store")}); err != nil {
		return &StartupError{Flag: "data", Err: err}
	}
	// The ledger, built with the chain below, tracks the network's minimum win probability, which
	// a winProb setting must not go under; the settings are read before (the ledger signs at
	// their winProb), so they ask it when a change comes.
	var led *ledger.Ledger
	if err := n.buildSettings(func() uint64 {
		if led == nil {
			return 0
		}
		return led.MinWinProb()
	}); err != nil {
		return err
	}
	if err := n.buildTransport(); err != nil {
		return err
	}
	var graph *channels.Graph
	if n.cfg.Provider != "" {
		graph = channels.NewGraph()
	}
	if n.dir, err = peers.New(peers.Config{Self: n.id.PeerID(), Announcements: announcements(graph), Aliases: n.db}); err != nil {
		return err
	}
	if err := n.buildChain(graph); err != nil {
		return err
	}
	if n.chain != nil {
		led = n.chain.ledger
	}
	if err := n.disc.Start(); err != nil {
		return &StartupError{Flag: "peers", Err: err}
	}
	if err := n.buildMessaging(); err != nil {
		return err
	}
	if err := n.buildCockpit(); err != nil {
		return err
	}
	n.reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector(),
		version.ReadBuildInfo().Collector())
	return n.buildServers()
}

// announcements is graph as peers.Announcements, nil without a chain.
func announcements(g *channels.Graph) peers.Announcements {
	if g == nil {
		return nil
	}
	return g
}

// buildSettings opens the stored settings over the flags of a first start; a mixDelayMean must
// fit the flags' bounds of the mixing delay.
func (n *Node) buildSettings(minWinProb func() uint64) error {
	initial, err := n.cfg.InitialSettings()
	if err != nil {
		return err
	}
	n.settings, err = settings.Open(settings.Config{Store: n.db, Initial: &initial, MinWinProb: minWinProb,
		Check: func(v settings.Values) error {
			_, err := n.mixing(v)
			return err
		}})
	if err != nil {
		return &StartupError{Flag: "mixDelayMax", Err: err}
	}
	return nil
}

// mixing is the relay's mixing delay under v: its mean between the flags' minimum and cap.
func (n *Node) mixing(v settings.Values) (relay.Mixing, error) {
	m, err := relay.MixingFor(n.cfg.MixDelayMin, v.MixDelayMean, n.cfg.MixDelayMax)
	if err != nil {
		return m, fmt.Errorf("does not fit --mixDelayMin %v and --mixDelayMax %v: the cap must be at least the minimum plus the mean", n.cfg.MixDelayMin, n.cfg.MixDelayMax)
	}
	return m, nil
}

// buildTransport starts the libp2p host on --host.
func (n *Node) buildTransport() error {
	addrs, err := p2p.ListenAddrsFor(n.cfg.Host)
	if err != nil {
		return &StartupError{Flag: "host", Err: err}
	}
	announce, err := p2p.ParseAnnounce(n.cfg.Announce)
	if err != nil {
		return &StartupError{Flag: "announce", Err: err}
	}
	// NAT traversal on every network but the local one of `relayd cluster` (docs/NAT.md).
	n.host, err = p2p.New(p2p.Config{PrivKey: n.id.P2PKey(), ListenAddrs: addrs, Network: n.cfg.Network,
		Announce: announce, Traversal: n.cfg.Network != discovery.LocalNetwork,
		HeartbeatInterval: n.cfg.HeartbeatInterval, Logger: n.component("p2p"), Registerer: n.reg})
	if err != nil {
		return &StartupError{Flag: "host", Err: err}
	}
	return nil
}

// buildChain connects to --provider and builds the rooms of the chain: the indexer and the graph
// it feeds, the ledger, its operations, the channel strategy and auto-redeem; and discovery, with
// or without them.
func (n *Node) buildChain(graph *channels.Graph) error {
	disc := discovery.Config{Host: n.host, Directory: n.dir, StaticPeers: n.cfg.Peers, AnnounceRetry: n.opts.AnnounceRetry,
		Logger: n.component("node"), Registerer: n.reg}
	if graph == nil {
		n.log.Warn("no chain provider: channels, tickets and paid messages are off (set --provider and --channelsContract)")
		return n.buildDiscovery(disc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The network's entry (or --channelsContract) names the contracts; the chain must agree.
	nw, err := networks.Join(ctx, networks.JoinConfig{Provider: n.cfg.Provider, Name: n.cfg.Network,
		File: n.cfg.NetworksFile, Channels: n.cfg.ChannelsContract})
	switch {
	case errors.Is(err, chain.ErrProviderUnavailable):
		return &StartupError{Flag: "provider", Err: err}
	case err != nil:
		return &StartupError{Flag: "network", Err: err}
	}
	client, err := chain.Dial(ctx, chain.Config{ProviderURL: n.cfg.Provider, Key: n.id.PrivateKey(),
		Channels: nw.Channels, Logger: n.component("chain")})
	switch {
	case errors.Is(err, chain.ErrNoContract):
		return &StartupError{Flag: "channelsContract", Err: fmt.Errorf("%w (the address of the RelayChannels contract on the chain --provider serves)", err)}
	case err != nil:
		return &StartupError{Flag: "provider", Err: err}
	}
	c := &chainRooms{client: client, graph: graph}
	n.chain = c
	// The network's minimum win probability: what the ledger refuses incoming tickets below and
	// never signs below. Read once here; the ledger follows the indexer's reports of changes.
	minWin, err := client.MinWinProb(ctx)
	switch {
	case errors.Is(err, chain.ErrProviderUnavailable):
		return &StartupError{Flag: "provider", Err: fmt.Errorf("read the network's minimum win probability: %w", err)}
	case err != nil:
		return &StartupError{Flag: "channelsContract", Err: fmt.Errorf("read the network's minimum win probability: %w (a RelayChannels contract older than lottery tickets? deploy the current one)", err)}
	}
	if c.ledger, err = ledger.New(ledger.Config{Key: n.id.PrivateKey(), ChainID: client.ChainID(), Contract: client.ChannelsAddress(),
		Channels: graph, Store: n.db, MinWinProb: minWin, WinProb: n.settings.WinProb, Logger: n.component("tickets"), Registerer: n.reg}); err != nil {
		return err
	}
	c.indexer, err = chain.NewIndexer(chain.IndexerConfig{Source: client, Store: n.db, Graph: graph, ChainID: client.ChainID(),
		Channels: client.ChannelsAddress(), StartBlock: nw.StartBlock, Confirmations: chain.Confirmations(n.cfg.Confirmations, client.ChainID()),
		ReindexOnNewChain: n.cfg.ReindexOnNewChain, OnEvent: n.onChainEvent, Logger: n.component("indexer"), Registerer: n.reg,
		EpochBlocks: nw.Topology.Epochs(), OnEpoch: func(first uint64) error { return n.layers.AtEpoch(first) }})
	if err != nil {
		return &StartupError{Flag: "channelsContract", Err: err}
	}
	if t := nw.Topology; t != nil {
		if n.layers, err = layers.New(layers.Config{Params: t.Params(), EpochBlocks: t.EpochBlocks, Self: n.id.Address(), RelayerCoverRate: t.RelayerCoverRate, Stakes: n.db,
			Snapshot: graph.Snapshot, Indexed: c.indexer.Next, HeaderHash: client.HeaderHash, Logger: n.component("layers")}); err != nil {
			return &StartupError{Flag: "network", Err: err}
		}
	}
	redeemer := ledger.ChainRedeemer{Chain: client, Options: n.opts.RedeemOptions}
	c.ops = &ledger.Operations{Chain: client, Channels: graph, Self: n.id.Address(), Synced: c.indexer.WaitHead, Ledger: c.ledger, Redeemer: redeemer}
	n.reg.MustRegister(c.ops.BalanceCollector())
	disc.Chain, disc.Graph, disc.Announce = client, graph, n.cfg.Announce
	disc.Scope = discovery.ScopeOfNode(n.cfg.Host, nw.Name, nw.PrivateAddresses)
	disc.CaughtUp = func(ctx context.Context) error { return c.indexer.WaitCaughtUp(ctx, chain.ProviderRetry) }
	if err := n.buildDiscovery(disc); err != nil {
		return err
	}
	// What the node indexed before a restart serves at once: the stored announcements make the
	// known peers (Discovery.Start), so paths, pings and forwarding work before the API opens.
	if err := c.indexer.Load(ctx); err != nil {
		if errors.Is(err, chain.ErrChainReplaced) {
			return &StartupError{Flag: "reindexOnNewChain", Err: fmt.Errorf("%w; the stored channels and tickets do not exist there (restart with --reindexOnNewChain to drop the index and re-index, or point --provider at the chain indexed)", err)}
		}
		return &StartupError{Flag: "data", Err: err}
	}
	if c.strategy, err = strategy.NewRunner(strategy.RunnerConfig{
		Policy:   func() strategy.Policy { return n.settings.Get().Policy() },
		World:    ledger.ChannelWorld{Ops: c.ops, Snapshot: graph.Snapshot, Qualities: n.disc.Qualities},
		Interval: n.cfg.StrategyInterval, Kick: n.settings.Subscribe(), Logger: n.component("strategy"), Layers: n.layers.ForStrategy(),
	}); err != nil {
		return err
	}
	conf := chain.Confirmations(n.cfg.Confirmations, client.ChainID())
	c.redeem = &ledger.AutoRedeem{Ledger: c.ledger, Redeemer: redeemer, GasPrice: client.GasPrice, Channels: graph,
		ClosurePeriod: client.ClosurePeriod(), ClosureNeeds: ledger.MinClosurePeriod(conf, chain.TypicalBlockTime(client.ChainID())),
		Policy: func() strategy.RedeemPolicy { return n.settings.Get().RedeemPolicy() },
		Kick:   n.settings.Subscribe(), Closing: c.ledger.Closing(), Interval: n.opts.AutoRedeemInterval, Logger: n.component("tickets")}
	return nil
}

func (n *Node) buildDiscovery(cfg discovery.Config) (err error) {
	if n.disc, err = discovery.New(cfg); err != nil {
		return &StartupError{Flag: "peers", Err: err}
	}
	return nil
}

// onChainEvent hands the indexer's events to the rooms that follow them.
func (n *Node) onChainEvent(ev chain.Event) {
	n.disc.OnEvent(ev)
	n.chain.ledger.OnEvent(ev)
}

// buildMessaging builds the data plane: cover traffic, the inbox that receives, the relay
// pipeline and the router that sends, and the streams that show what arrives.
func (n *Node) buildMessaging() (err error) {
	if n.cover, err = cover.New(cover.Config{Key: n.id.PrivateKey(), Rate: n.layers.CoverRate(func() float64 { return n.settings.Get().CoverRate }),
		Kick: n.settings.Subscribe(), Logger: n.component("cover"), Registerer: n.reg}); err != nil {
		return err
	}
	if n.inbox, err = router.NewInbox(router.InboxConfig{Own: n.cover.Returned, Registerer: n.reg,
		Relayed: func() { n.stream.Reemit() }, // on the wire this node relays it: docs/TRAFFIC.md
		Frames: func(r relay.Received) {
			if len(r.Text) > 0 && r.Text[0]>>4 == session.KindSegment>>4 { // a session's (PROTOCOL.md §9)
				n.sessions.Receive([]byte(r.Text), r.Reply)
				return
			}
			n.courier.Receive(courier.Received{Text: []byte(r.Text), SentAt: r.SentAt, ReceivedAt: r.ReceivedAt, Reply: r.Reply})
		}}); err != nil {
		return err
	}
	if n.replay, err = n.db.ReplayTags(time.Now); err != nil {
		return &StartupError{Flag: "data", Err: err}
	}
	mix, err := n.mixing(n.settings.Get())
	if err != nil {
		return &StartupError{Flag: "mixDelayMax", Err: err}
	}
	var transport relay.Transport = n.host
	if n.opts.WrapTransport != nil {
		transport = n.opts.WrapTransport(transport)
	}
	cfg := relay.Config{Key: n.id.PrivateKey(), Transport: transport, Replay: n.replay, Deliver: n.inbox.Deliver, ReplyKeyring: n.db.ReplyKeys(),
		MixDelayMin: mix.Min, MixDelayMax: mix.Max, MixDelayMean: mix.Mean, NoMixDelay: mix.Max == 0,
		Logger: n.component("relay"), Registerer: n.reg}
	if n.stream, err = stream.New(stream.Config{Rate: func() float64 { return n.settings.Get().SendRate }, Kick: n.settings.Subscribe(),
		Drop: func(ctx context.Context) (relay.Sent, error) { return n.router.SendDrop(ctx) }, Logger: n.component("stream"),
		ReemitDelay: func() time.Duration { return n.settings.Get().MixDelayMean }, Registerer: n.reg}); err != nil {
		return err
	}
	rt := router.Config{Directory: n.dir, Transport: n.host, Relayers: func() int { return n.settings.Get().Relayers }, Pace: n.stream.Do}
	if c := n.chain; c != nil {
		cfg.Payments, cfg.Layered, rt.Graph, rt.Capacity, rt.Layers = c.ledger, n.layers.ForRelay(), c.graph, c.ledger, n.layers.ForRouter()
	}
	if n.relay, err = relay.New(cfg); err != nil {
		return err
	}
	n.settings.Watch(func(v settings.Values) {
		m, err := n.mixing(v)
		if err == nil {
			err = n.relay.SetMixing(m)
		}
		if err != nil { // Check refused such a mean before it was stored
			n.log.Error("mixing delay setting not applied", "err", err)
		}
	})
	rt.Sender = n.relay
	if n.router, err = router.New(rt); err != nil {
		return err
	}
	toAdmin := admin.MailEvent(n.hub) // the admin console's frames for what the courier reports
	n.courier, err = courier.New(courier.Config{Network: n.router, Store: n.db, Events: func(e courier.Event) {
		n.streams.Event(e.Kind, e.ID, e.Reason, e.Message)
		toAdmin(e.Kind, e.ID, e.Reason, e.Message)
	},
		MaxBody: func() int { return n.settings.Get().MaxMessageBytes }, Capacity: packet.MaxMessageSize,
		ReplyCapacity: packet.MaxReplySize, Logger: n.component("courier"), Registerer: n.reg})
	if err != nil {
		return err
	}
	if n.streams, err = ws.NewAppStreams(n.hub, n.courier, n.component("api")); err != nil {
		return err
	}
	n.inbox.Subscribe(func(m router.Message) { n.courier.Keep([]byte(m.Text), m.SentAt, m.ReceivedAt) })
	return nil
}
