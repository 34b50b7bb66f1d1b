// Package node only builds and wires: from a config.Config it opens the store and the identity,
// builds every room of a relayd node (settings, transport, names, chain and ledger, discovery,
// the relay pipeline, the router and its inbox, cover traffic and the stream, the channel strategy, the REST
// API, the admin console and its WebSocket server), hands each the small interfaces and funcs it
// declares, and runs them (Run) until its context ends. No room holds the Node or reaches
// another through it: what a room needs comes in its Config, checked by its New. Only
// cmd/relayd may import it.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/alerts"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/cover"
	"github.com/relayd/relayd/internal/datadir"
	"github.com/relayd/relayd/internal/discovery"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/history"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/logs"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/servers"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/stream"
	"github.com/relayd/relayd/internal/version"
	"github.com/relayd/relayd/internal/ws"
)

// Options are what tests change of a node beyond its config; the zero value is a production
// node.
type Options struct {
	// WrapTransport, when set, wraps the transport the relay sends and receives frames through
	// (tests record what a node puts on the wire with it).
	WrapTransport func(relay.Transport) relay.Transport
	// RedeemOptions are passed to every batched redemption (tests make batches small).
	RedeemOptions []chain.RedeemOption
	// AnnounceRetry is how an unfunded node checks its balance again (zero: the default).
	AnnounceRetry chain.Retry
	// AutoRedeemInterval is how often the auto-redeem strategy looks (zero: the default).
	AutoRedeemInterval time.Duration
	// HistoryTicks, when set, makes the history sample at each value received (nil: its period).
	HistoryTicks <-chan time.Time
}

// Node is a built, not yet running, relayd node: its rooms, and the servers that face users.
type Node struct {
	cfg  config.Config
	opts Options
	log  *slog.Logger
	id   *identity.Identity
	hub  *ws.Hub
	reg  *prometheus.Registry
	quit chan struct{} // closed by the admin quit command

	db       *store.DB
	settings *settings.Settings
	host     *p2p.Host
	dir      *peers.Directory
	disc     *discovery.Discovery
	replay   *store.ReplayTags
	relay    *relay.Relay
	inbox    *router.Inbox
	courier  *courier.Courier
	router   *router.Router
	cover    *cover.Cover
	stream   *stream.Stream
	streams  *ws.AppStreams
	chain    *chainRooms  // nil without --provider
	layers   *layers.View // nil: free routes (or no chain)
	sessions *gateway.Stack
	history  *history.History
	alerts   *alerts.Alerts
	servers  servers.Set
}

// chainRooms are the rooms of a node with a chain.
type chainRooms struct {
	client   *chain.Client
	graph    *channels.Graph
	indexer  *chain.Indexer
	ledger   *ledger.Ledger
	ops      *ledger.Operations
	strategy *strategy.Runner
	redeem   *ledger.AutoRedeem
}

// StartupError is a problem a user fixes by changing one flag or the environment; its text is a
// single line that names the flag.
type StartupError = datadir.FlagError

// New validates cfg, opens (or with cfg.Init creates) the identity and the data directory, builds
// every room and binds the API and admin listeners. Nothing is served until Run. logOut receives
// the node's log lines (they also go to the admin WebSocket).
func New(cfg config.Config, logOut io.Writer, opts Options) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, &StartupError{Flag: "logLevel", Err: err}
	}
	hub := ws.NewHub(time.Now)
	log := logs.New(logOut, cfg.LogFormat == config.LogJSON, level, ws.NewLogHandler(hub, level))
	id, err := datadir.Open(datadir.Config{Data: cfg.Data, Identity: cfg.Identity, Password: cfg.Password,
		PasswordFile: cfg.PasswordFile, Init: cfg.Init, WeakCrypto: cfg.WeakCrypto, Logger: log})
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, opts: opts, log: log, id: id, hub: hub, reg: prometheus.NewRegistry(), quit: make(chan struct{})}
	if err := n.build(); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

// component is a logger for one room.
func (n *Node) component(name string) *slog.Logger { return n.log.With("component", name) }

// close releases what build created, after Run or after a failed build.
func (n *Node) close() {
	if n.sessions != nil {
		n.sessions.Close()
	}
	n.servers.Close()
	if n.host != nil {
		n.host.Close()
	}
	if n.chain != nil {
		n.chain.client.Close()
	}
	if n.db != nil {
		n.db.Close()
	}
}

// APIAddr is the REST server's bound address (useful with port 0).
func (n *Node) APIAddr() net.Addr { return n.servers.Addr("api") }

// AdminAddr is the admin WebSocket server's bound address.
func (n *Node) AdminAddr() net.Addr { return n.servers.Addr("admin") }

// ProfileAddr is the address of the pprof server, nil without --profileAddress.
func (n *Node) ProfileAddr() net.Addr { return n.servers.Addr("profile") }

// Identity is the node's identity.
func (n *Node) Identity() *identity.Identity { return n.id }

// Run serves until ctx ends or an admin client sends quit, then shuts down within the configured
// timeout.
func (n *Node) Run(ctx context.Context) error {
	defer n.close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	n.log.Info("relayd started", "version", version.Release,
		"peerId", n.id.PeerID().String(), "address", n.id.Address().Hex(), "p2p", n.cfg.Host,
		"api", "http://"+n.APIAddr().String()+"/api/v2", "admin", "ws://"+n.AdminAddr().String(), "console", "http://"+n.AdminAddr().String()+"/")
	g, gctx := errgroup.WithContext(ctx)
	if a := n.ProfileAddr(); a != nil {
		n.log.Info("serving Go profiles", "url", "http://"+a.String()+"/debug/pprof/")
	}
	n.servers.Serve(gctx, g)
	g.Go(func() error { return n.host.Run(gctx) })
	g.Go(func() error { return n.streams.Run(gctx) })
	g.Go(func() error { return n.relay.Run(gctx) })
	g.Go(func() error { return n.replay.Run(gctx, 200*time.Millisecond) })
	g.Go(func() error { return n.cover.Run(gctx, n.router.SendLoop) })
	g.Go(func() error { return n.stream.Run(gctx) })
	g.Go(func() error { return n.courier.Run(gctx) })
	g.Go(func() error { return n.disc.Run(gctx) })
	g.Go(func() error { return n.sessions.Run(gctx) })
	g.Go(func() error { return n.history.Run(gctx) })
	g.Go(func() error { return n.alerts.Run(gctx) })
	if c := n.chain; c != nil {
		g.Go(func() error {
			err := c.indexer.Run(gctx)
			if errors.Is(err, chain.ErrChainReplaced) {
				n.log.Error("stopping: the chain provider serves another chain than the one indexed", "err", err)
				return fmt.Errorf("%w (restart with --reindexOnNewChain to drop the index and re-index)", err)
			}
			return err
		})
		g.Go(func() error { return c.ledger.Run(gctx) })
		g.Go(func() error {
			// Decisions need the chain as it is now: wait for the indexer first.
			if err := c.indexer.WaitCaughtUp(gctx, chain.ProviderRetry); err != nil {
				return nil
			}
			return c.strategy.Run(gctx)
		})
		g.Go(func() error { return c.redeem.Run(gctx) })
		g.Go(func() error { return n.layers.Run(gctx) })
	}
	g.Go(func() error {
		select {
		case <-gctx.Done():
		case <-n.quit:
			n.log.Info("stopping: an admin client sent quit")
			stop()
		}
		n.log.Info("relayd shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
		defer cancel()
		n.servers.Shutdown(sctx, n.log)
		return nil
	})
	err := g.Wait()
	n.log.Info("relayd stopped")
	return err
}

// quitOnce closes quit once: the admin quit command's After.
func quitOnce(quit chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(quit) }) }
}
