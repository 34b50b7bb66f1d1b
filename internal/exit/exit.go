// Package exit owns an exit's policy (issue 28, docs/SESSIONS.md): the exitAllow rules that say
// which destinations a node connects to for the sessions that reach it, the named services it
// offers without being an exit, the address ranges and ports it never dials unless a rule names
// them, the limits on its connections, and a dialer that applies all of them to the address it
// actually connects to.
//
// A node is no exit until a rule allows something (default deny). The dialer resolves a name
// itself, checks every address the name resolves to and dials only those it allows, and checks
// again, in the socket's Control hook, the address the connection is made to: a name that
// resolves to a loopback or private address (DNS rebinding) is refused like that address.
//
// It imports no relayd package. The settings and configuration packages import it to read the
// exitAllow setting and the --service flags; node builds the Policy from them.
package exit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"
)

// DefaultDialTimeout bounds each dial of an address when Config.DialTimeout is 0.
const DefaultDialTimeout = 10 * time.Second

// ErrConfig is a Config that New refuses; the error names the field.
var ErrConfig = errors.New("exit: bad config")

// Resolver resolves host names; *net.Resolver implements it. network is "ip", "ip4" or "ip6".
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures New. Every field may be left zero.
type Config struct {
	// Allow are the exitAllow rules (ParseRules); none: the node is no exit.
	Allow []Rule
	// Services are the named services DialService dials (ParseServices); their names differ.
	Services []Service
	// OwnPorts are the ports the node itself listens on (REST, admin, p2p, as bound): refused on
	// every address unless a rule names that one port (127.0.0.1:3001, *:9091; not a range, not
	// *), since behind NAT the exit cannot tell its own public address from others. 0 is ignored.
	OwnPorts []uint16
	// Resolver resolves the names Dial and DialService are given; nil: net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds the dial of each address; 0: DefaultDialTimeout.
	DialTimeout time.Duration
	// MaxConns is the most connections open at once (of Dial and DialService together); 0:
	// DefaultMaxConns.
	MaxConns int
	// ConnRate is the most new connections a second, in bursts of ConnBurst; 0:
	// DefaultConnRate, DefaultConnBurst.
	ConnRate  float64
	ConnBurst int
	// SessionRate is the most bytes a second each connection carries, both ways together, in
	// bursts of SessionBurst (a session dials one connection); 0: DefaultSessionRate,
	// DefaultSessionBurst.
	SessionRate  float64
	SessionBurst int
	// Now is the clock of the new-connection rate; nil: time.Now.
	Now func() time.Time
}

// Policy is an exit's policy and its dialer. Its methods are safe for concurrent use.
type Policy struct {
	allow        atomic.Pointer[[]Rule]
	services     map[string]Service
	own          map[uint16]bool
	resolver     Resolver
	dialTimeout  time.Duration
	limits       *limits
	sessionRate  rate.Limit
	sessionBurst int
}

// New builds a Policy. It refuses negative limits and services named twice (ErrConfig).
func New(cfg Config) (*Policy, error) {
	for _, f := range []struct {
		name string
		neg  bool
	}{
		{"DialTimeout", cfg.DialTimeout < 0}, {"MaxConns", cfg.MaxConns < 0}, {"ConnRate", !(cfg.ConnRate >= 0)},
		{"ConnBurst", cfg.ConnBurst < 0}, {"SessionRate", !(cfg.SessionRate >= 0)}, {"SessionBurst", cfg.SessionBurst < 0},
	} {
		if f.neg {
			return nil, fmt.Errorf("%w: %s must not be negative", ErrConfig, f.name)
		}
	}
	p := &Policy{
		services:     map[string]Service{},
		own:          map[uint16]bool{},
		resolver:     cfg.Resolver,
		dialTimeout:  cmp.Or(cfg.DialTimeout, DefaultDialTimeout),
		sessionRate:  rate.Limit(cmp.Or(cfg.SessionRate, DefaultSessionRate)),
		sessionBurst: cmp.Or(cfg.SessionBurst, DefaultSessionBurst),
		limits: &limits{
			now:      cfg.Now,
			maxConns: cmp.Or(cfg.MaxConns, DefaultMaxConns),
			newConns: rate.NewLimiter(rate.Limit(cmp.Or(cfg.ConnRate, DefaultConnRate)), cmp.Or(cfg.ConnBurst, DefaultConnBurst)),
		},
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.limits.now == nil {
		p.limits.now = time.Now
	}
	for _, s := range cfg.Services {
		if _, dup := p.services[s.Name]; dup {
			return nil, fmt.Errorf("%w: Services name %s twice", ErrConfig, s.Name)
		}
		p.services[s.Name] = s
	}
	for _, port := range cfg.OwnPorts {
		if port != 0 {
			p.own[port] = true
		}
	}
	p.SetAllow(cfg.Allow)
	return p, nil
}

// SetAllow replaces the exitAllow rules (the setting changed): the connections dialled from
// then on follow them; those open stay.
func (p *Policy) SetAllow(rules []Rule) {
	rs := slices.Clone(rules)
	p.allow.Store(&rs)
}

// Allow returns the exitAllow rules.
func (p *Policy) Allow() []Rule { return slices.Clone(*p.allow.Load()) }

// IsExit reports whether the node is an exit: whether it has a rule.
func (p *Policy) IsExit() bool { return len(*p.allow.Load()) > 0 }

// Service returns the service of that name.
func (p *Policy) Service(name string) (Service, bool) {
	s, ok := p.services[strings.ToLower(name)]
	return s, ok
}

// Conns is how many connections of Dial and DialService are open.
func (p *Policy) Conns() int {
	p.limits.mu.Lock()
	defer p.limits.mu.Unlock()
	return p.limits.open
}

// Check decides on a destination before it is resolved, without dialling: for an IP address it
// is the whole decision; for a name it refuses when no rule could allow it (no * or matching name
// rule, no address rule for the port), and Dial then checks each address the name resolves to.
// The error is a *Refusal.
func (p *Policy) Check(host string, port uint16) error {
	if port == 0 {
		return refuse(ErrNotAllowed, "port 0")
	}
	name, addr, err := target(host)
	if err != nil {
		return err
	}
	return p.check(*p.allow.Load(), name, addr, port)
}

func (p *Policy) check(rules []Rule, name string, addr netip.Addr, port uint16) error {
	if addr.IsValid() {
		return p.allowed(rules, "", addr, port)
	}
	if len(rules) == 0 {
		return refuse(ErrNotAllowed, "this node is not an exit")
	}
	own, may := p.own[port], false
	for _, r := range rules {
		if r.mayMatchName(name, port) {
			if !own || r.names(port) {
				return nil
			}
			may = true
		}
	}
	if may {
		return refuse(ErrForbiddenAddress, "a port of the node itself")
	}
	return refuse(ErrNotAllowed, "no exitAllow rule allows it")
}

// allowed is the decision on the address a connection goes to, asked for by name (empty: by
// address): a rule must allow it; for a forbidden address it must be an address rule inside the
// forbidden block, for an own port a rule naming that one port.
func (p *Policy) allowed(rules []Rule, name string, addr netip.Addr, port uint16) error {
	addr = addr.Unmap().WithZone("")
	b, reserved := forbiddenBlock(addr)
	own, opened := p.own[port], false
	for _, r := range rules {
		if !r.matches(name, addr, port) {
			continue
		}
		if reserved && !(r.isAddr() && r.prefix.Bits() >= b.prefix.Bits() && b.prefix.Contains(r.prefix.Addr())) {
			continue
		}
		opened = true
		if own && !r.names(port) {
			continue
		}
		return nil
	}
	switch {
	case len(rules) == 0:
		return refuse(ErrNotAllowed, "this node is not an exit")
	case reserved && !opened:
		return refuse(ErrForbiddenAddress, b.what)
	case own:
		return refuse(ErrForbiddenAddress, "a port of the node itself")
	}
	return refuse(ErrNotAllowed, "no exitAllow rule allows it")
}

// target reads a destination's host: an IP address (unmapped) or a host name (lower case,
// without a trailing dot).
func target(host string) (string, netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", netip.Addr{}, refuse(ErrForbiddenAddress, "an address with a zone")
		}
		return "", a.Unmap(), nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.ContainsFunc(host, func(c rune) bool { return c >= 0x7f }) || !hostName(name) {
		return "", netip.Addr{}, refuse(ErrUnresolvable, "not a host name")
	}
	return name, netip.Addr{}, nil
}

// Dial connects to address (host:port, the port a number) over network (tcp, tcp4, tcp6,
// udp, udp4, udp6) when the exitAllow rules allow it: it resolves a name itself with the
// Resolver, dials in turn each address the rules allow (skipping those they do not), checks the
// address again as the socket connects (Control), and holds the connection to the limits. The
// error is a *Refusal (ReasonOf: what to tell the entry); the connection, once closed, gives its
// place back.
func (p *Policy) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	family, err := ipFamily(network)
	if err != nil {
		return nil, err
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, refuse(ErrUnresolvable, "not host:port")
	}
	port, ok := parsePort(portText)
	if !ok {
		return nil, refuse(ErrNotAllowed, "not a port from 1 to 65535")
	}
	name, addr, err := target(host)
	if err != nil {
		return nil, err
	}
	rules := *p.allow.Load()
	if err := p.check(rules, name, addr, port); err != nil {
		return nil, err
	}
	return p.dial(ctx, network, family, name, addr, port, func(a netip.Addr) error { return p.allowed(rules, name, a, port) })
}

// DialService connects to the service of that name over network (as Dial's), whatever range its
// address lies in: the operator named it. It holds the connection to the limits, and the
// address the socket connects to must be one the service's host resolved to.
func (p *Policy) DialService(ctx context.Context, network, name string) (net.Conn, error) {
	family, err := ipFamily(network)
	if err != nil {
		return nil, err
	}
	svc, ok := p.Service(name)
	if !ok {
		return nil, refuse(ErrNotAllowed, "no service of that name")
	}
	name, addr, err := target(svc.Host)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, network, family, name, addr, svc.Port, func(netip.Addr) error { return nil })
}

// dial takes a place in the limits, resolves name (or takes addr), and dials the addresses ok
// allows in turn; the connection it returns gives the place back when closed.
func (p *Policy) dial(ctx context.Context, network, family, name string, addr netip.Addr, port uint16,
	ok func(netip.Addr) error) (net.Conn, error) {
	release, err := p.limits.acquire()
	if err != nil {
		return nil, err
	}
	c, err := p.connect(ctx, network, family, name, addr, port, ok)
	if err != nil {
		release()
		return nil, err
	}
	return limitConn(c, rate.NewLimiter(p.sessionRate, p.sessionBurst), release), nil
}

func (p *Policy) connect(ctx context.Context, network, family, name string, addr netip.Addr, port uint16,
	ok func(netip.Addr) error) (net.Conn, error) {
	candidates := []netip.Addr{addr}
	if name != "" {
		found, err := p.resolver.LookupNetIP(ctx, family, name)
		if err != nil || len(found) == 0 {
			return nil, &Refusal{Reason: ReasonUnreachable, Detail: "the name does not resolve", kind: ErrUnresolvable, cause: err}
		}
		candidates = found
	}
	var allowed []netip.Addr
	var refusal error
	for _, a := range candidates {
		a = a.Unmap().WithZone("")
		if (family == "ip4" && !a.Is4()) || (family == "ip6" && !a.Is6()) || slices.Contains(allowed, a) {
			continue
		}
		if err := ok(a); err != nil {
			if refusal == nil || errors.Is(err, ErrForbiddenAddress) && !errors.Is(refusal, ErrForbiddenAddress) {
				refusal = err
			}
			continue
		}
		allowed = append(allowed, a)
	}
	if len(allowed) == 0 {
		if refusal == nil {
			refusal = refuse(ErrUnresolvable, "no address of the network's family")
		}
		return nil, refusal
	}
	d := net.Dialer{Timeout: p.dialTimeout, Control: control(allowed, port, ok)}
	var first error
	for _, a := range allowed {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = unreachable(err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control is the dialer's Control hook: the address the socket connects to must be one of those
// checked, on the port asked for, and ok must allow it still.
func control(checked []netip.Addr, port uint16, ok func(netip.Addr) error) func(string, string, syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refuse(ErrForbiddenAddress, "an address the exit cannot read")
		}
		a := ap.Addr().Unmap().WithZone("")
		if ap.Port() != port || !slices.Contains(checked, a) {
			return refuse(ErrForbiddenAddress, "not the address the exit checked")
		}
		return ok(a)
	}
}

// ipFamily is the resolver's network for a dial's network.
func ipFamily(network string) (string, error) {
	switch network {
	case "tcp", "udp":
		return "ip", nil
	case "tcp4", "udp4":
		return "ip4", nil
	case "tcp6", "udp6":
		return "ip6", nil
	}
	return "", refuse(ErrNotAllowed, "not tcp or udp")
}

// PortsOf is the ports of host:port addresses (Config.OwnPorts); an address without a port
// is skipped.
func PortsOf(addrs ...string) []uint16 {
	var ports []uint16
	for _, a := range addrs {
		if _, p, err := net.SplitHostPort(a); err == nil {
			if v, err := strconv.ParseUint(p, 10, 16); err == nil {
				ports = append(ports, uint16(v))
			}
		}
	}
	return ports
}
