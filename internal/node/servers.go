package node

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/origin"
	"github.com/relayd/relayd/internal/profile"
	"github.com/relayd/relayd/internal/servers"
	"github.com/relayd/relayd/internal/version"
	"github.com/relayd/relayd/internal/ws"
)

// buildServers binds the REST API's and the admin server's listeners and builds the servers over
// the rooms.
func (n *Node) buildServers() error {
	s := &n.servers
	apiLn, err := s.Listen("api", net.JoinHostPort(n.cfg.APIHost, strconv.Itoa(n.cfg.APIPort)))
	if err != nil {
		return &StartupError{Flag: "apiPort", Err: err}
	}
	adminLn, err := s.Listen("admin", net.JoinHostPort(n.cfg.AdminHost, strconv.Itoa(n.cfg.AdminPort)))
	if err != nil {
		return &StartupError{Flag: "adminPort", Err: err}
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
	origins.AllowConsole(adminLn.Addr().(*net.TCPAddr).Port, origin.ServedHosts(n.cfg.AdminHost)...)
	apiCfg := api.Config{Token: n.cfg.APIToken, DisableAuth: n.cfg.DisableAPIAuth, Version: version.Release, Network: n.cfg.Network,
		Self: n.id, Peers: n.dir, Transport: n.host, Discovery: n.disc, Settings: n.settings, Messenger: n.router,
		Mail: n.courier, Sessions: n.sessions.Entry, Streams: n.streams, Backup: n.db, BackupDir: n.cfg.Data, Health: []health.Checker{health.Static{{Name: "chain", Ready: true, Detail: "none: started without --provider"}}, n.host, n.relay},
		Metrics: promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), Origins: origins, Logger: n.component("api")}
	adminCfg := admin.Config{Version: version.Release, Network: n.cfg.Network, Self: n.id, Peers: n.dir, Transport: n.host,
		Discovery: n.disc, Settings: n.settings, Messenger: n.router, Mail: n.courier, Sessions: n.sessions.Entry, Quit: quitOnce(n.quit)}
	if c := n.chain; c != nil {
		apiCfg.Chain, apiCfg.Tickets, apiCfg.ChainInfo, apiCfg.Indexer, apiCfg.Graph, apiCfg.Layers = c.ops, c.ops, c.client, c.indexer, c.graph, n.layers
		apiCfg.Health[0] = c.indexer
		adminCfg.Chain, adminCfg.Tickets, adminCfg.ChainInfo, adminCfg.Indexer, adminCfg.Graph, adminCfg.Layers = c.ops, c.ops, c.client, c.indexer, c.graph, n.layers
	}
	apiCfg.History, apiCfg.Alerts, apiCfg.Health = n.history, n.alerts, append(apiCfg.Health, n.alerts)
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
		APIPort: apiLn.Addr().(*net.TCPAddr).Port, Origins: origins, Logger: n.component("admin")})
	if err != nil {
		return err
	}
	s.Handle("api", &http.Server{Handler: apiHandler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute},
		servers.Graceful, api.Listener) // net/http's own 431 and 400 in the JSON envelope
	s.Handle("admin", &http.Server{Handler: adminHandler, ReadHeaderTimeout: 10 * time.Second}, servers.Hijacking, nil)
	if a := n.cfg.ProfileAddress; a != "" {
		if _, err := s.Listen("profile", a); err != nil {
			return &StartupError{Flag: "profileAddress", Err: err}
		}
		s.Handle("profile", &http.Server{Handler: profile.Handler(), ReadHeaderTimeout: 10 * time.Second}, servers.Closing, nil)
	}
	return nil
}
