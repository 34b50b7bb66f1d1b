// Package origin decides which requests a node's HTTP servers (the REST API and the admin server
// with its web console) take from a browser: the names a request may address the node by (its
// Host header), and the other origins whose pages may call the REST API (CORS).
//
// A web page the operator visits must not drive the node. Two ways it could: a cross-origin
// request (refused unless its Origin is one the node allows), and DNS rebinding, where the page's
// own name is made to resolve to the node's address so that the browser takes the node for the
// page's origin (refused because the request's Host then names the attacker's domain, which is
// not one the node answers to). The node answers to IP literals, to localhost, and to the names
// the operator configures (--allowedHosts); it allows the origins of its own web console (its
// admin port on the addresses it serves) and those the operator configures (--corsOrigins).
//
// It imports no other relayd package; the REST API (internal/api), the admin server
// (internal/ws) and the configuration (internal/config) import it.
package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Any is the --corsOrigins value that allows every origin; a node takes it only when its API
// requires a token.
const Any = "*"

var (
	// ErrAnyWithoutToken: Any was configured for a node that serves without a token, which would
	// let every web page drive it.
	ErrAnyWithoutToken = errors.New(`"*" lets every web page call the API and cannot be used without a token`)
	// ErrBadOrigin: a configured origin is not scheme://host[:port].
	ErrBadOrigin = errors.New("not an origin (want http://host:port or https://host:port)")
	// ErrBadHost: a configured host name is not a name.
	ErrBadHost = errors.New("not a host name")
)

// Config is what the operator allows beside the node's own addresses.
type Config struct {
	// Hosts are names the node also answers to (e.g. its DNS name behind a reverse proxy), without
	// port.
	Hosts []string
	// Origins are other origins whose pages may call the REST API (scheme://host[:port]), or Any.
	Origins []string
	// TokenRequired: the API requires a token (Any is refused otherwise).
	TokenRequired bool
}

// Policy answers the two questions of the package. It is safe for concurrent use once built;
// AllowConsole must be called before the servers serve.
type Policy struct {
	hosts   map[string]bool
	origins map[string]bool
	any     bool
}

// New checks cfg and returns its Policy.
func New(cfg Config) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range cfg.Hosts {
		n := normalHost(h)
		if n == "" || strings.ContainsAny(h, "/:@ []") {
			return nil, fmt.Errorf("%q: %w", h, ErrBadHost)
		}
		p.hosts[n] = true
	}
	for _, o := range cfg.Origins {
		if o == Any {
			if !cfg.TokenRequired {
				return nil, ErrAnyWithoutToken
			}
			p.any = true
			continue
		}
		n, ok := Normal(o)
		if !ok {
			return nil, fmt.Errorf("%q: %w", o, ErrBadOrigin)
		}
		p.origins[n] = true
	}
	return p, nil
}

// AllowConsole allows the origins of the node's web console: http on port on each of hosts.
func (p *Policy) AllowConsole(port int, hosts ...string) {
	for _, h := range hosts {
		if n, ok := Normal("http://" + net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(port))); ok {
			p.origins[n] = true
		}
	}
}

// ServedHosts lists the hosts a listener bound to host serves, as a browser would name them:
// the loopback names for a loopback or unspecified address, every interface address for an
// unspecified one, else host itself.
func ServedHosts(host string) []string {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if strings.EqualFold(host, "localhost") || ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		hosts := []string{"localhost", "127.0.0.1", "::1"}
		if ip != nil && ip.IsUnspecified() {
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, a := range addrs {
					if n, ok := a.(*net.IPNet); ok {
						hosts = append(hosts, n.IP.String())
					}
				}
			}
		}
		return hosts
	}
	return []string{host}
}

// Host reports whether a request addressed to hostport (its Host header) is for this node: an
// IP literal, localhost (or a name under .localhost), or a configured name. A browser sends the
// attacker's own name after DNS rebinding, never one of these.
func (p *Policy) Host(hostport string) bool {
	h := normalHost(hostport)
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	return p.hosts[h]
}

// Origin reports whether pages of origin (an Origin header) may call the API.
func (p *Policy) Origin(origin string) bool {
	if p.any && origin != "null" {
		return true
	}
	n, ok := Normal(origin)
	return ok && p.origins[n]
}

// SameOrigin reports whether r's Origin header names the server r was sent to (the node's own
// page), comparing with r's Host; a request without Origin is not a browser's cross-origin one.
func SameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// Normal returns origin in one spelling (lower-case scheme and host, default port dropped) and
// whether it is an origin at all: http or https, a host, no path, query, fragment or user.
func Normal(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", false
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return "", false
		}
	}
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// normalHost is hostport's host, lower case, without brackets, port or a trailing dot; "" when
// it has none.
func normalHost(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if slices.Contains([]string{"", "."}, h) {
		return ""
	}
	return h
}
