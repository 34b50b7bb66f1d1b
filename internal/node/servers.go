package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/origin"
	"github.com/relayd/relayd/internal/profile"
	"github.com/relayd/relayd/internal/version"
	"github.com/relayd/relayd/internal/ws"
)

// servers are the node's HTTP servers: the REST API, the admin WebSocket and web console, and
// with --profileAddress Go's profiles.
type servers struct {
	apiLn, adminLn, profileLn    net.Listener
	apiSrv, adminSrv, profileSrv *http.Server
}

// buildServers binds the REST API's and the admin server's listeners and builds the servers over
// the rooms.
func (n *Node) buildServers() error {
	s := &n.servers
	var err error
	if s.apiLn, err = listen("apiPort", n.cfg.APIHost, n.cfg.APIPort); err != nil {
		return err
	}
	if s.adminLn, err = listen("adminPort", n.cfg.AdminHost, n.cfg.AdminPort); err != nil {
		return err
	}
	// The sessions' exit must know the ports bound, which it never dials.
	if err := n.buildSessions(); err != nil {
		return err
	}
	// Both servers answer the same names and origins; the web console (on the admin port, also
	// when --adminPort 0 picked one) calls the REST API from its own origin.
	origins, err := n.cfg.Origins()
	if err != nil {
		return err
	}
	origins.AllowConsole(s.adminLn.Addr().(*net.TCPAddr).Port, origin.ServedHosts(n.cfg.AdminHost)...)
	apiCfg := api.Config{Token: n.cfg.APIToken, DisableAuth: n.cfg.DisableAPIAuth, Version: version.Release, Network: n.cfg.Network,
		Self: n.id, Peers: n.dir, Transport: n.host, Discovery: n.disc, Settings: n.settings, Messenger: n.router,
		Mail: n.courier, Sessions: n.sessions.Entry, Streams: n.streams, Health: []health.Checker{health.Static{{Name: "chain", Ready: true, Detail: "none: started without --provider"}}, n.host, n.relay},
		Metrics: promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), Origins: origins, Logger: n.component("api")}
	adminCfg := admin.Config{Version: version.Release, Network: n.cfg.Network, Self: n.id, Peers: n.dir, Transport: n.host,
		Discovery: n.disc, Settings: n.settings, Messenger: n.router, Mail: n.courier, Sessions: n.sessions.Entry, Quit: quitOnce(n.quit)}
	if c := n.chain; c != nil {
		apiCfg.Chain, apiCfg.Tickets, apiCfg.ChainInfo, apiCfg.Indexer, apiCfg.Graph = c.ops, c.ops, c.client, c.indexer, c.graph
		apiCfg.Health[0] = c.indexer
		adminCfg.Chain, adminCfg.Tickets, adminCfg.ChainInfo, adminCfg.Indexer, adminCfg.Graph = c.ops, c.ops, c.client, c.indexer, c.graph
	}
	apiHandler, err := api.New(apiCfg)
	if err != nil {
		return err
	}
	cmds, err := admin.New(adminCfg)
	if err != nil {
		return err
	}
	// The admin port serves the web console too, which must know the REST port (also when
	// --apiPort 0 picked one).
	adminHandler, err := ws.New(ws.Config{Token: n.cfg.APIToken, DisableAuth: n.cfg.DisableAPIAuth, Hub: n.hub, Commands: cmds,
		APIPort: s.apiLn.Addr().(*net.TCPAddr).Port, Origins: origins, Logger: n.component("admin")})
	if err != nil {
		return err
	}
	s.apiLn = api.Listener(s.apiLn) // net/http's own 431 and 400 in the JSON envelope
	s.apiSrv = &http.Server{Handler: apiHandler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	s.adminSrv = &http.Server{Handler: adminHandler, ReadHeaderTimeout: 10 * time.Second}
	if a := n.cfg.ProfileAddress; a != "" {
		if s.profileLn, err = net.Listen("tcp", a); err != nil {
			return &StartupError{"profileAddress", fmt.Errorf("cannot listen on %s: %w", a, err)}
		}
		s.profileSrv = &http.Server{Handler: profile.Handler(), ReadHeaderTimeout: 10 * time.Second}
	}
	return nil
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

// serve runs the servers in g. Admin connections are hijacked, so the server cannot end them
// itself: their request contexts derive from ctx and end with it.
func (s *servers) serve(g *errgroup.Group, ctx context.Context, log *slog.Logger) {
	s.adminSrv.BaseContext = func(net.Listener) context.Context { return ctx }
	run := func(name string, srv *http.Server, ln net.Listener) {
		g.Go(func() error { return serveErr(name, srv.Serve(ln)) })
	}
	run("api", s.apiSrv, s.apiLn)
	run("admin", s.adminSrv, s.adminLn)
	if s.profileSrv != nil {
		log.Info("serving Go profiles", "url", "http://"+s.profileLn.Addr().String()+"/debug/pprof/")
		run("profile", s.profileSrv, s.profileLn)
	}
}

// shutdown stops the servers gracefully; connections still open when ctx ends (a client that
// never sent a request, a request that will not finish) are closed, which is what a shutdown must
// do anyway. A running profile would hold up a graceful shutdown: that server just closes.
func (s *servers) shutdown(ctx context.Context, log *slog.Logger) {
	for name, srv := range map[string]*http.Server{"api": s.apiSrv, "admin": s.adminSrv} {
		if err := srv.Shutdown(ctx); err != nil {
			log.Warn("closing connections that outlived the shutdown timeout", "server", name, "err", err)
			srv.Close()
		}
	}
	if s.profileSrv != nil {
		s.profileSrv.Close()
	}
}

// close closes the listeners (a failed build, or after Run).
func (s *servers) close() {
	for _, ln := range []net.Listener{s.apiLn, s.adminLn, s.profileLn} {
		if ln != nil {
			ln.Close()
		}
	}
}
