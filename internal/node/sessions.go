package node

import (
	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
)

// buildSessions builds the sessions (docs/SESSIONS.md) over the router, with the exit's policy
// from the exitAllow setting and --service; the exit never dials the ports the node bound.
func (n *Node) buildSessions() (err error) {
	svcs, err := n.cfg.ExitServices()
	if err != nil {
		return err
	}
	rules, err := n.settings.Get().ExitRules()
	if err != nil {
		return &StartupError{Flag: "exitAllow", Err: err}
	}
	own := exit.PortsOf(n.APIAddr().String(), n.AdminAddr().String(), n.cfg.Host)
	policy, err := exit.New(exit.Config{Allow: rules, Services: svcs, OwnPorts: own})
	if err != nil {
		return err
	}
	n.sessions, err = gateway.NewStack(gateway.StackConfig{Network: n.router, Self: n.id.PeerID(), Policy: policy,
		SOCKS5Listen: n.settings.Get().SOCKS5Listen, SOCKS5Exit: gateway.ExitNamed(n.dir.Resolve, n.settings.Get().SOCKS5Exit),
		Reason: router.Reason, Logger: n.component("sessions")})
	if err != nil {
		return &StartupError{Flag: "socks5Listen", Err: err}
	}
	n.settings.Watch(func(v settings.Values) {
		if rules, err := v.ExitRules(); err == nil { // the setting refuses bad rules before it stores them
			policy.SetAllow(rules)
		}
		if err := n.sessions.SetSOCKS5(v.SOCKS5Listen, gateway.ExitNamed(n.dir.Resolve, v.SOCKS5Exit)); err != nil {
			n.component("sessions").Warn("socks5Listen not applied: the entry stays where it was", "err", err)
		}
	})
	return gateway.RegisterMetrics(n.reg, n.sessions.Carrier, router.Reasons...)
}
