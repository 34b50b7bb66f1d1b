// Package node is the one place that builds and wires every subsystem of a
// relayd node; Run supervises them until its context ends. Only cmd/ may
// import it.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/ws"
)

// Version is the node's release.
const Version = "0.1.0"

// Node is a built, not yet running, relayd node.
type Node struct {
	cfg      config.Config
	log      *slog.Logger
	id       *identity.Identity
	hub      *ws.Hub
	streams  *ws.AppStreams     // the REST port's WebSocket streams (appapi.go)
	stop     context.CancelFunc // ends Run (the admin quit command); set by Run before it serves
	metrics  *prometheus.Registry
	host     *p2p.Host
	db       *store.DB
	replay   *store.ReplayTags
	chain    *settlement // nil without --provider
	msg      *messaging
	settings *settings
	cover    *coverTraffic
	strategy *strategy.Runner // nil without a chain
	nm       nodeMetrics
	apiLn    net.Listener
	adminLn  net.Listener
	apiSrv   *http.Server
	adminSrv *http.Server
	// With --profileAddress only.
	profileLn  net.Listener
	profileSrv *http.Server
	// wrapTransport, when set (tests), wraps the transport the relay uses.
	wrapTransport func(relay.Transport) relay.Transport
}

// StartupError is a problem a user fixes by changing one flag or the
// environment; its text is a single line that names the flag.
type StartupError struct {
	Flag string
	Err  error
}

func (e *StartupError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *StartupError) Unwrap() error { return e.Err }

// New validates cfg, opens (or with cfg.Init creates) the identity and the
// data directory, and binds the API and admin listeners. Nothing is served
// until Run. logOut receives the node's log lines (they also go to the
// admin WebSocket).
func New(cfg config.Config, logOut *os.File) (*Node, error) {
	return newNode(cfg, logOut, nil)
}

// newNode is New; wrap, when not nil, wraps the transport the relay sends and receives frames
// through (tests record what a node puts on the wire with it).
func newNode(cfg config.Config, logOut *os.File, wrap func(relay.Transport) relay.Transport) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, &StartupError{"logLevel", err}
	}
	hub := ws.NewHub(time.Now)
	log := newLogger(logOut, cfg.LogFormat, level, hub)

	if err := prepareDataDir(cfg); err != nil {
		return nil, err
	}
	params := identity.StandardScrypt
	if cfg.WeakCrypto {
		params = identity.LightScrypt
	}
	id, created, err := identity.LoadOrCreate(cfg.Identity, cfg.Password, cfg.Init, params)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, &StartupError{"identity", fmt.Errorf("%s does not exist (pass --init to create it)", cfg.Identity)}
	case errors.Is(err, identity.ErrWrongPassword):
		flag := "password"
		if cfg.PasswordFile != "" {
			flag = "passwordFile" // the password came from there
		}
		return nil, &StartupError{flag, fmt.Errorf("does not decrypt the keystore %s", cfg.Identity)}
	case err != nil:
		return nil, &StartupError{"identity", err}
	}
	if created {
		log.Info("created new identity", "keystore", cfg.Identity)
	}

	n := &Node{cfg: cfg, log: log, id: id, hub: hub, metrics: prometheus.NewRegistry(), wrapTransport: wrap}
	if err := n.build(); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

func prepareDataDir(cfg config.Config) error {
	st, err := os.Stat(cfg.Data)
	switch {
	case err == nil && !st.IsDir():
		return &StartupError{"data", fmt.Errorf("%s is not a directory", cfg.Data)}
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return &StartupError{"data", err}
	case !cfg.Init:
		return &StartupError{"data", fmt.Errorf("%s does not exist (pass --init to create it)", cfg.Data)}
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return &StartupError{"data", err}
	}
	return nil
}

func (n *Node) buildServers() error {
	cfg := api.Config{
		Token:       n.cfg.APIToken,
		DisableAuth: n.cfg.DisableAPIAuth,
		Node:        apiNode{n},
		Messenger:   n.msg,
		Metrics:     promhttp.HandlerFor(n.metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
		Logger:      n.log.With("component", "api"),
	}
	if n.chain != nil {
		cfg.Chain, cfg.Tickets = chainAPI{n.chain}, ticketsAPI{n.msg}
	}
	if err := n.wireAppAPI(&cfg); err != nil {
		return err
	}
	apiHandler, err := api.New(cfg)
	if err != nil {
		return err
	}
	cmds, err := ws.NewCommands(n.commands()...)
	if err != nil {
		return err
	}
	if n.apiLn, err = listen("apiPort", n.cfg.APIHost, n.cfg.APIPort); err != nil {
		return err
	}
	// The admin port serves the web console too, which must know the REST port (also when
	// --apiPort 0 picked one).
	apiPort := 0
	if a, ok := n.apiLn.Addr().(*net.TCPAddr); ok {
		apiPort = a.Port
	}
	adminHandler, err := ws.New(ws.Config{
		Token:       n.cfg.APIToken,
		DisableAuth: n.cfg.DisableAPIAuth,
		Hub:         n.hub,
		Commands:    cmds,
		APIPort:     apiPort,
		Logger:      n.log.With("component", "admin"),
	})
	if err != nil {
		n.apiLn.Close()
		return err
	}
	n.apiLn = api.Listener(n.apiLn) // net/http's own 431 and 400 in the JSON envelope
	if n.adminLn, err = listen("adminPort", n.cfg.AdminHost, n.cfg.AdminPort); err != nil {
		return err
	}
	n.apiSrv = &http.Server{Handler: apiHandler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	n.adminSrv = &http.Server{Handler: adminHandler, ReadHeaderTimeout: 10 * time.Second}
	if a := n.cfg.ProfileAddress; a != "" {
		if n.profileLn, err = net.Listen("tcp", a); err != nil {
			return &StartupError{"profileAddress", fmt.Errorf("cannot listen on %s: %w", a, err)}
		}
		n.profileSrv = &http.Server{Handler: profileHandler(), ReadHeaderTimeout: 10 * time.Second}
	}
	return nil
}

// profileHandler serves Go's runtime profiles (go tool pprof http://<profileAddress>/debug/pprof/profile).
func profileHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func listen(flag, host string, port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		var se interface{ Unwrap() error }
		if errors.As(err, &se) {
			err = se.Unwrap()
		}
		return nil, &StartupError{flag, fmt.Errorf("cannot listen on %s:%d: %w", host, port, err)}
	}
	return ln, nil
}

// build creates every subsystem; on error the caller closes what exists.
func (n *Node) build() error {
	db, err := store.Open(n.cfg.Data)
	if err != nil {
		return &StartupError{"data", err}
	}
	n.db = db
	if n.settings, err = loadSettings(db, n.cfg); err != nil {
		return err
	}
	if err := n.buildTransport(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.buildSettlement(ctx); err != nil {
		return err
	}
	if err := n.buildMessaging(); err != nil {
		return err
	}
	n.settings.onChange = n.applySettings
	if n.cover, err = n.buildCover(); err != nil {
		return err
	}
	if n.chain != nil {
		if n.strategy, err = n.buildStrategy(); err != nil {
			return err
		}
	}
	n.registerMetrics()
	return n.buildServers()
}

// close releases what build created, after Run or after a failed build.
func (n *Node) close() {
	for _, ln := range []net.Listener{n.apiLn, n.adminLn, n.profileLn} {
		if ln != nil {
			ln.Close()
		}
	}
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
func (n *Node) APIAddr() net.Addr { return n.apiLn.Addr() }

// AdminAddr is the admin WebSocket server's bound address.
func (n *Node) AdminAddr() net.Addr { return n.adminLn.Addr() }

// ProfileAddr is the address of the pprof server, nil without --profileAddress.
func (n *Node) ProfileAddr() net.Addr {
	if n.profileLn == nil {
		return nil
	}
	return n.profileLn.Addr()
}

// Identity is the node's identity.
func (n *Node) Identity() *identity.Identity { return n.id }

// Run serves until ctx ends, then shuts down within the configured timeout.
func (n *Node) Run(ctx context.Context) error {
	defer n.close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	n.stop = stop
	n.log.Info("relayd started", "version", Version,
		"peerId", n.id.PeerID().String(), "address", n.id.Address().Hex(), "p2p", n.cfg.Host,
		"api", "http://"+n.apiLn.Addr().String()+api.Prefix, "admin", "ws://"+n.adminLn.Addr().String(), "console", "http://"+n.adminLn.Addr().String()+"/")
	g, gctx := errgroup.WithContext(ctx)
	// Admin connections are hijacked, so the server cannot end them itself:
	// their request contexts derive from gctx and end with it.
	n.adminSrv.BaseContext = func(net.Listener) context.Context { return gctx }
	serve := func(name string, srv *http.Server, ln net.Listener) {
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("%s server: %w", name, err)
			}
			return nil
		})
	}
	serve("api", n.apiSrv, n.apiLn)
	serve("admin", n.adminSrv, n.adminLn)
	if n.profileSrv != nil {
		n.log.Info("serving Go profiles", "url", "http://"+n.profileLn.Addr().String()+"/debug/pprof/")
		serve("profile", n.profileSrv, n.profileLn)
	}
	g.Go(func() error { return n.host.Run(gctx) })
	g.Go(func() error { return n.streams.Run(gctx) })
	g.Go(func() error { return n.msg.relay.Run(gctx) })
	g.Go(func() error { return n.replay.Run(gctx, 200*time.Millisecond) })
	g.Go(func() error { return n.cover.Run(gctx) })
	if s := n.chain; s != nil {
		g.Go(func() error {
			err := s.indexer.Run(gctx)
			if errors.Is(err, chain.ErrChainReplaced) {
				n.log.Error("stopping: the chain provider serves another chain than the one indexed", "err", err)
				return fmt.Errorf("%w (restart with --reindexOnNewChain to drop the index and re-index)", err)
			}
			return err
		})
		g.Go(func() error { return s.announce(gctx) })
		g.Go(func() error { return n.msg.ledger.Run(gctx) })
		g.Go(func() error {
			// Decisions need the chain as it is now: wait for the indexer first.
			if err := s.waitIndexed(gctx); err != nil {
				return nil
			}
			return n.strategy.Run(gctx)
		})
		auto := &ledger.AutoRedeem{
			Ledger:   n.msg.ledger,
			Redeemer: s.redeemer(),
			Policy:   func() strategy.RedeemPolicy { return n.settings.get().redeemPolicy() },
			GasPrice: s.client.GasPrice,
			Kick:     n.settings.redeemKick,
			Closing:  s.closing,
			Interval: autoRedeemInterval,
			Logger:   n.log.With("component", "tickets"),
		}
		g.Go(func() error { return auto.Run(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		n.log.Info("relayd shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
		defer cancel()
		n.stopServer(sctx, "api", n.apiSrv)
		n.stopServer(sctx, "admin", n.adminSrv)
		if n.profileSrv != nil {
			n.profileSrv.Close() // a running profile would hold up a graceful shutdown
		}
		return nil
	})
	err := g.Wait()
	n.log.Info("relayd stopped")
	return err
}

// stopServer shuts srv down gracefully; connections still open when ctx
// ends (a client that never sent a request, a request that will not
// finish) are closed, which is what a shutdown must do anyway.
func (n *Node) stopServer(ctx context.Context, name string, srv *http.Server) {
	if err := srv.Shutdown(ctx); err != nil {
		n.log.Warn("closing connections that outlived the shutdown timeout", "server", name, "err", err)
		srv.Close()
	}
}
