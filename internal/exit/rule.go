package exit

import (
	"net/netip"
	"strconv"
	"strings"
)

// MaxRules is the most exitAllow rules ParseRules takes; MaxRuleLen the longest rule.
const (
	MaxRules   = 256
	MaxRuleLen = 300
)

// Rule is one exitAllow rule: the destinations an exit connects to, on which ports. Its host is
// one of
//
//   - a name: example.org allows that name, *.example.org any name below it (not example.org
//     itself);
//   - an address or range: 203.0.113.7, 10.0.0.0/8, [2001:db8::/32], [::1];
//   - *: any name or address.
//
// Its port is a number (443), a range (8000-8100) or * (any); an address rule without a port
// allows any port. Names and * never allow a forbidden address (loopback, private, … see
// Policy) nor the node's own ports: only an address rule inside the forbidden range does, and
// only a rule naming that one port opens an own port. The zero Rule allows nothing.
type Rule struct {
	anyHost bool
	// name is a name rule's host: "example.org", or ".example.org" for *.example.org.
	name string
	// prefix is an address rule's range (a /32 or /128 for one address).
	prefix netip.Prefix
	lo, hi uint16
}

// ParseRule reads one exitAllow rule (see Rule). It is strict: no spaces, lower or upper case
// names, no trailing dot, a prefix without host bits, no IPv4-mapped IPv6 address, no zone, an
// IPv6 address with a port in brackets. The error is a *RuleError of ErrBadRule.
func ParseRule(s string) (Rule, error) {
	r, reason := parseRule(s)
	if reason != "" {
		return Rule{}, &RuleError{Input: s, Reason: reason, kind: ErrBadRule}
	}
	return r, nil
}

// ParseRules reads a list of rules (the exitAllow setting), at most MaxRules; an empty list is
// no rule (the node is no exit). The error is the first bad rule's *RuleError, with its Index.
func ParseRules(list []string) ([]Rule, error) {
	if len(list) > MaxRules {
		return nil, &RuleError{Input: list[MaxRules], Index: MaxRules + 1, kind: ErrBadRule,
			Reason: "is one rule more than the " + strconv.Itoa(MaxRules) + " a list may hold"}
	}
	out := make([]Rule, 0, len(list))
	for i, s := range list {
		r, reason := parseRule(s)
		if reason != "" {
			return nil, &RuleError{Input: s, Index: i + 1, Reason: reason, kind: ErrBadRule}
		}
		out = append(out, r)
	}
	return out, nil
}

// The parser's reasons: fixed words, never the input.
const (
	whyEmpty      = "is empty"
	whyLong       = "is longer than 300 characters"
	whySpace      = "holds a space, a control character or a character beyond ASCII"
	whyNoPort     = "has no port: write host:port, host:8000-8100 or host:* (a port is optional only after an address or range)"
	whyPort       = "has a bad port: want a number from 1 to 65535, a range such as 8000-8100, or *"
	whyBracket    = "has an unclosed [ or something other than :port after ]"
	whyInBrackets = "holds something other than an IPv6 address or range in brackets"
	whyIPv6Port   = "is an IPv6 address with a port outside brackets: write [2001:db8::1]:443"
	whyMapped     = "is an IPv4-mapped IPv6 address: write the IPv4 address"
	whyZone       = "has a zone (%…): zones are not allowed"
	whyRange      = "has a range whose prefix length is not a number from 0 to 32 (IPv4) or 128 (IPv6)"
	whyHostBits   = "is a range with bits set past its prefix length: write 10.0.0.0/8, not 10.0.0.1/8"
	whyName       = "has a host that is neither *, an address, a range, nor a host name (letters, digits, - and _ in dot-separated labels of at most 63, at most 253 in all, the last not all digits)"
	whyWildcard   = "has a * that is not the whole host nor the first label (*.example.org)"
	whyDot        = "has a host name ending in a dot: leave it out"
)

func parseRule(s string) (Rule, string) {
	switch {
	case s == "":
		return Rule{}, whyEmpty
	case len(s) > MaxRuleLen:
		return Rule{}, whyLong
	case strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c >= 0x7f }):
		return Rule{}, whySpace
	}
	var r Rule
	var host, port string
	hasPort := false
	if rest, ok := strings.CutPrefix(s, "["); ok {
		inner, after, ok := strings.Cut(rest, "]")
		if !ok || (after != "" && after[0] != ':') {
			return Rule{}, whyBracket
		}
		if why := r.setAddr(inner); why != "" {
			return Rule{}, why
		}
		if !r.prefix.Addr().Is6() {
			return Rule{}, whyInBrackets
		}
		port, hasPort = strings.CutPrefix(after, ":")
	} else if why := r.setAddr(s); why == "" {
		// A whole address or range: any port.
	} else if why != whyName {
		return Rule{}, why
	} else {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return Rule{}, whyNoPort
		}
		host, port, hasPort = s[:i], s[i+1:], true
		switch why := r.setAddr(host); {
		case strings.Contains(host, ":"):
			return Rule{}, whyIPv6Port
		case why == "":
		case why != whyName:
			return Rule{}, why
		case host == "*":
			r.anyHost = true
		default:
			name, why := namePattern(host)
			if why != "" {
				return Rule{}, why
			}
			r.name = name
		}
	}
	r.lo, r.hi = 1, 65535
	if hasPort {
		lo, hi, ok := parsePorts(port)
		if !ok {
			return Rule{}, whyPort
		}
		r.lo, r.hi = lo, hi
	}
	return r, ""
}

// setAddr sets r's range from an address or range s, or says why s is not one (whyName: it
// is not an address at all).
func (r *Rule) setAddr(s string) string {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			addr, bits, _ := strings.Cut(s, "/")
			switch a, err := netip.ParseAddr(addr); {
			case err != nil:
				return whyName
			case a.Zone() != "":
				return whyZone
			case bits != "" && strings.Trim(bits, "0123456789") == "":
				return whyRange
			}
			return whyName
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return whyName
		}
		if a.Zone() != "" {
			return whyZone
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	switch {
	case p.Addr().Is4In6():
		return whyMapped
	case p != p.Masked():
		return whyHostBits
	}
	r.prefix = p
	return ""
}

// namePattern reads a name rule's host: a host name, or *. and a host name. It returns the name
// in lower case, with a leading dot for *.
func namePattern(s string) (string, string) {
	s = strings.ToLower(s)
	wild := strings.HasPrefix(s, "*.")
	if wild {
		s = s[1:]
	}
	if strings.Contains(s, "*") {
		return "", whyWildcard
	}
	if strings.HasSuffix(s, ".") && len(s) > 1 {
		if wild || hostName(s[:len(s)-1]) {
			return "", whyDot
		}
	}
	if wild {
		if !hostName(s[1:]) {
			return "", whyName
		}
		return s, ""
	}
	if !hostName(s) {
		return "", whyName
	}
	return s, ""
}

// hostName reports whether s is a lower-case host name: dot-separated labels of letters,
// digits, - and _, each 1 to 63 long and not starting or ending with -, at most 253 in all, the
// last not all digits (which would read as a number, not a name).
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// parsePorts reads *, a port or a range lo-hi of ports from 1 to 65535 written without sign or
// leading zero.
func parsePorts(s string) (lo, hi uint16, ok bool) {
	if s == "*" {
		return 1, 65535, true
	}
	a, b, isRange := strings.Cut(s, "-")
	if lo, ok = parsePort(a); !ok {
		return 0, 0, false
	}
	if !isRange {
		return lo, lo, true
	}
	if hi, ok = parsePort(b); !ok || hi < lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// parsePort reads a port from 1 to 65535 in decimal, without sign or leading zero.
func parsePort(s string) (uint16, bool) {
	if s == "" || s[0] == '0' || strings.Trim(s, "0123456789") != "" || len(s) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// String is the rule in its canonical form, which ParseRule reads back to the same rule:
// names in lower case, an address rule's port left out when it is any, an IPv6 host in
// brackets when a port follows.
func (r Rule) String() string {
	var host string
	switch {
	case r.anyHost:
		host = "*"
	case r.name != "":
		host = r.name
		if host[0] == '.' {
			host = "*" + host
		}
	case r.prefix.IsValid():
		host = r.prefix.String()
		if r.prefix.IsSingleIP() {
			host = r.prefix.Addr().String()
		}
		if r.lo == 1 && r.hi == 65535 {
			return host
		}
		if r.prefix.Addr().Is6() {
			host = "[" + host + "]"
		}
	default:
		return ""
	}
	switch {
	case r.lo == 1 && r.hi == 65535:
		return host + ":*"
	case r.lo == r.hi:
		return host + ":" + strconv.Itoa(int(r.lo))
	}
	return host + ":" + strconv.Itoa(int(r.lo)) + "-" + strconv.Itoa(int(r.hi))
}

// isAddr reports whether r is an address rule.
func (r Rule) isAddr() bool { return r.prefix.IsValid() }

// names reports whether r names the one port p: the only rules that open an own port.
func (r Rule) names(p uint16) bool { return r.lo == p && r.hi == p }

// matches reports whether r allows a connection to addr on port, asked for by name (empty when
// asked for by address). It does not look at forbidden ranges or own ports.
func (r Rule) matches(name string, addr netip.Addr, port uint16) bool {
	if port < r.lo || port > r.hi {
		return false
	}
	switch {
	case r.anyHost:
		return true
	case r.name != "":
		return name != "" && nameMatches(r.name, name)
	case r.prefix.IsValid():
		return addr.IsValid() && r.prefix.Contains(addr)
	}
	return false
}

// mayMatchName reports whether r may allow a connection asked for by this name on port, before
// the name is resolved: a * or matching name rule, or an address rule covering the port (for
// the addresses the name resolves to).
func (r Rule) mayMatchName(name string, port uint16) bool {
	if port < r.lo || port > r.hi {
		return false
	}
	return r.anyHost || r.prefix.IsValid() || (r.name != "" && nameMatches(r.name, name))
}

// nameMatches reports whether a lower-case host name matches a name rule's host (a leading dot:
// any name below it).
func nameMatches(pattern, name string) bool {
	if pattern[0] == '.' {
		return len(name) > len(pattern) && strings.HasSuffix(name, pattern)
	}
	return name == pattern
}
