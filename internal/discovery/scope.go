package discovery

import (
	"net"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Scope is which addresses a node may announce without --announce: which addresses the other
// nodes of its network can reach (docs/NAT.md).
type Scope uint8

// The scopes, from the widest.
const (
	// ScopeLocal keeps every address, loopback and link-local included: a development network on
	// one machine (`relayd cluster`).
	ScopeLocal Scope = iota
	// ScopePrivate keeps private ranges (RFC 1918, RFC 6598 shared space, IPv6 ULA) besides public
	// addresses, but no loopback, link-local or unspecified address: a network inside one
	// organisation or one test bridge.
	ScopePrivate
	// ScopePublic keeps only addresses routable on the internet (and DNS names): every other
	// network.
	ScopePublic
)

// LocalNetwork is the network name of development networks (the --network default): ScopeFor
// gives it ScopeLocal.
const LocalNetwork = "local"

// ScopeFor is the scope of a network: ScopeLocal for LocalNetwork, ScopePrivate when the network
// says its nodes reach each other on private addresses (privateAddrs), ScopePublic otherwise.
func ScopeFor(network string, privateAddrs bool) Scope {
	switch {
	case network == LocalNetwork:
		return ScopeLocal
	case privateAddrs:
		return ScopePrivate
	}
	return ScopePublic
}

// ScopeOfNode is the scope of a node of network that listens on listen (--host, host:port): one
// bound to a loopback address is reached from its own machine only, so every address is what it
// has to announce (ScopeLocal, as on a local network: tests and nodes on one machine); otherwise
// ScopeFor(network, privateAddrs).
func ScopeOfNode(listen, network string, privateAddrs bool) Scope {
	if host, _, err := net.SplitHostPort(listen); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
			return ScopeLocal
		}
	}
	return ScopeFor(network, privateAddrs)
}

// String names the scope (local, private, public).
func (s Scope) String() string {
	switch s {
	case ScopeLocal:
		return "local"
	case ScopePrivate:
		return "private"
	case ScopePublic:
		return "public"
	}
	return "unknown"
}

// Allows reports whether an address in scope s may be announced. A circuit relay address is
// judged by its relay's address (what others dial); a DNS name by its form (.local, .localhost
// and the like are not public).
func (s Scope) Allows(a ma.Multiaddr) bool {
	if s == ScopeLocal {
		return true
	}
	first := a
	if len(a) > 0 {
		first = ma.Multiaddr{a[0]}
	}
	ip, err := manet.ToIP(first)
	if err != nil { // not an IP: a DNS name, or no address at all
		return len(a) > 0 && (s == ScopePrivate || manet.IsPublicAddr(a))
	}
	if ip.IsUnspecified() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.Equal(net.IPv4bcast) {
		return false
	}
	if s == ScopePrivate {
		return true
	}
	return manet.IsPublicAddr(first)
}
