package exit

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Service is a named service: one backend (Host:Port) a node offers under Name without being an
// exit (--service name=host:port). The operator names its address, so it is dialled whatever
// range it lies in, even loopback or a port of the node itself.
type Service struct {
	// Name is what an entry asks for: a lower-case label of letters, digits and -.
	Name string
	// Host is a host name (lower case) or an IP address.
	Host string
	Port uint16
}

// ParseService reads name=host:port: a lower-case or upper-case label, then a host name or an
// IP address (IPv6 in brackets) and one port. The error is a *RuleError of ErrBadService.
func ParseService(s string) (Service, error) {
	svc, reason := parseService(s)
	if reason != "" {
		return Service{}, &RuleError{Input: s, Reason: reason, kind: ErrBadService}
	}
	return svc, nil
}

// ParseServices reads a list of services, whose names must differ; the error is the first bad
// one's *RuleError, with its Index.
func ParseServices(list []string) ([]Service, error) {
	out := make([]Service, 0, len(list))
	seen := map[string]bool{}
	for i, s := range list {
		svc, reason := parseService(s)
		if reason == "" && seen[svc.Name] {
			reason = "names a service already named before"
		}
		if reason != "" {
			return nil, &RuleError{Input: s, Index: i + 1, Reason: reason, kind: ErrBadService}
		}
		seen[svc.Name] = true
		out = append(out, svc)
	}
	return out, nil
}

const (
	whyServiceForm = "is not name=host:port"
	whyServiceName = "has a bad name: want a label of letters, digits and - (at most 63, not starting or ending with -)"
	whyServiceHost = "has a host that is neither a host name nor an IP address (IPv6 in brackets, no zone, not IPv4-mapped)"
	whyServicePort = "has a bad port: want one number from 1 to 65535"
)

func parseService(s string) (Service, string) {
	switch {
	case len(s) > MaxRuleLen:
		return Service{}, whyLong
	case strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c >= 0x7f }):
		return Service{}, whySpace
	}
	name, target, ok := strings.Cut(s, "=")
	if !ok {
		return Service{}, whyServiceForm
	}
	name = strings.ToLower(name)
	if !hostName(name) || strings.ContainsAny(name, "._") {
		return Service{}, whyServiceName
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return Service{}, whyServiceForm
	}
	p, ok := parsePort(port)
	if !ok {
		return Service{}, whyServicePort
	}
	bracketed := strings.HasPrefix(target, "[")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" || a.Is4In6() || a.Is6() != bracketed {
			return Service{}, whyServiceHost
		}
		return Service{Name: name, Host: a.String(), Port: p}, ""
	}
	if host = strings.ToLower(host); bracketed || !hostName(host) {
		return Service{}, whyServiceHost
	}
	return Service{Name: name, Host: host, Port: p}, ""
}

// String is the service as ParseService reads it: name=host:port.
func (s Service) String() string {
	return s.Name + "=" + net.JoinHostPort(s.Host, strconv.Itoa(int(s.Port)))
}
