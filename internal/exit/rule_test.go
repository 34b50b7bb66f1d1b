package exit

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestParseRule: good rules read to their canonical form (which reads back to itself); bad
// ones are ErrBadRule with a reason that never repeats the rule.
func TestParseRule(t *testing.T) {
	good := []struct{ in, want string }{
		{"*.example.org:443", "*.example.org:443"},
		{"*.Example.ORG:443", "*.example.org:443"},
		{"example.org:*", "example.org:*"},
		{"*:80", "*:80"},
		{"*:*", "*:*"},
		{"example.org:8000-8100", "example.org:8000-8100"},
		{"example.org:80-80", "example.org:80"},
		{"example.org:1-65535", "example.org:*"},
		{"intranet:443", "intranet:443"},
		{"_srv.example.org:443", "_srv.example.org:443"},
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.0.0.0/8:*", "10.0.0.0/8"},
		{"192.0.2.0/24:53", "192.0.2.0/24:53"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"127.0.0.1/32:8080", "127.0.0.1:8080"},
		{"203.0.113.7", "203.0.113.7"},
		{"0.0.0.0/0:443", "0.0.0.0/0:443"},
		{"[2001:db8::/32]:443", "[2001:db8::/32]:443"},
		{"[2001:DB8::/32]:443", "[2001:db8::/32]:443"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"[2001:db8::/32]", "2001:db8::/32"},
		{"[::1]:8080", "[::1]:8080"},
		{"::1", "::1"},
		{"[::1]:*", "::1"},
		{"2001:db8::1:443", "2001:db8::1:443"}, // a whole IPv6 address: any port (a port goes after brackets)
		{"[fc00::/7]:1000-2000", "[fc00::/7]:1000-2000"},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRule(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(); got != tc.want {
				t.Fatalf("reads as %q, want %q", got, tc.want)
			}
			again, err := ParseRule(r.String())
			if err != nil || again != r {
				t.Fatalf("%q reads back as %+v, %v; want %+v", r.String(), again, err, r)
			}
		})
	}
	bad := []struct{ in, why string }{
		{"", whyEmpty},
		{strings.Repeat("a", 300) + ":1", whyLong},
		{" example.org:443", whySpace},
		{"example.org :443", whySpace},
		{"exam\tple.org:443", whySpace},
		{"exampl\u212a.org:443", whySpace}, // the Kelvin sign, which strings.ToLower makes a k
		{"example.org", whyNoPort},
		{"*", whyNoPort},
		{"*.example.org", whyNoPort},
		{"example.org:", whyPort},
		{"example.org:0", whyPort},
		{"example.org:65536", whyPort},
		{"example.org:080", whyPort},
		{"example.org:+80", whyPort},
		{"example.org:http", whyPort},
		{"example.org:100-99", whyPort},
		{"example.org:1-", whyPort},
		{"example.org:-1", whyPort},
		{"example.org:1-2-3", whyPort},
		{"example.org:**", whyPort},
		{"10.0.0.0/8:0", whyPort},
		{"[::1]:", whyPort},
		{"[::1", whyBracket},
		{"[::1]443", whyBracket},
		{"[10.0.0.1]:80", whyInBrackets},
		{"[example.org]:80", whyName},
		{"fe80::1:80:80:80:80:80:80", whyIPv6Port},
		{"::1:80:x", whyIPv6Port},
		{"::ffff:127.0.0.1", whyMapped},
		{"[::ffff:127.0.0.1]:80", whyMapped},
		{"[::ffff:0:0/96]:80", whyMapped},
		{"fe80::1%eth0", whyZone},
		{"[fe80::1%eth0]:80", whyZone},
		{"fe80::%eth0/64", whyZone},
		{"10.0.0.1/8", whyHostBits},
		{"10.0.0.1/8:80", whyHostBits},
		{"[2001:db8::1/32]:443", whyHostBits},
		{"10.0.0.0/33", whyRange},
		{"10.0.0.0/33:80", whyRange},
		{"[2001:db8::/129]:80", whyRange},
		{"10.0.0.0/x:80", whyName},
		{"010.0.0.1:80", whyName},
		{"127.1:80", whyName},
		{"1.2.3.4.5:80", whyName},
		{"-example.org:443", whyName},
		{"example-.org:443", whyName},
		{"exa..mple.org:443", whyName},
		{".example.org:443", whyName},
		{"*.:443", whyName},
		{"ex$ample.org:443", whyName},
		{":443", whyName},
		{strings.Repeat("a", 64) + ".org:443", whyName},
		{strings.Repeat("abcdefg.", 32) + "org:443", whyName},
		{"example.org.:443", whyDot},
		{"*.example.org.:443", whyDot},
		{"*.*.example.org:443", whyWildcard},
		{"www.*.org:443", whyWildcard},
		{"*example.org:443", whyWildcard},
		{"ex*.org:443", whyWildcard},
		{"**:443", whyWildcard},
	}
	for _, tc := range bad {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRule(tc.in)
			var re *RuleError
			if !errors.Is(err, ErrBadRule) || !errors.As(err, &re) {
				t.Fatalf("reads as %q, %v; want ErrBadRule", r.String(), err)
			}
			if re.Reason != tc.why {
				t.Fatalf("reason %q, want %q", re.Reason, tc.why)
			}
			if re.Input != tc.in || !strings.HasPrefix(err.Error(), "rule "+strconv.Quote(tc.in)[:min(len(tc.in), 20)]) {
				t.Fatalf("the error %q does not name the rule", err)
			}
		})
	}
}

// TestParseRules: a list is read whole or refused at its first bad rule, named by position;
// an empty list is no rule; a list longer than MaxRules is refused.
func TestParseRules(t *testing.T) {
	rules, err := ParseRules([]string{"*:443", "10.0.0.0/8"})
	if err != nil || len(rules) != 2 || rules[1].String() != "10.0.0.0/8" {
		t.Fatalf("%v, %v", rules, err)
	}
	if rules, err := ParseRules(nil); err != nil || len(rules) != 0 {
		t.Fatalf("no rule: %v, %v", rules, err)
	}
	_, err = ParseRules([]string{"*:443", "*:443", "example.org"})
	var re *RuleError
	if !errors.As(err, &re) || re.Index != 3 || re.Input != "example.org" || re.Reason != whyNoPort {
		t.Fatalf("a bad third rule: %v", err)
	}
	long := make([]string, MaxRules+1)
	for i := range long {
		long[i] = "*:443"
	}
	if _, err := ParseRules(long[:MaxRules]); err != nil {
		t.Fatalf("%d rules: %v", MaxRules, err)
	}
	if _, err := ParseRules(long); !errors.As(err, &re) || re.Index != MaxRules+1 {
		t.Fatalf("%d rules: %v", MaxRules+1, err)
	}
}

// TestParseService: name=host:port with one port; names differ within a list.
func TestParseService(t *testing.T) {
	good := []struct{ in, want string }{
		{"web=127.0.0.1:8080", "web=127.0.0.1:8080"},
		{"Web=LocalHost:8080", "web=localhost:8080"},
		{"db-1=[::1]:5432", "db-1=[::1]:5432"},
		{"api=backend.internal:443", "api=backend.internal:443"},
	}
	for _, tc := range good {
		s, err := ParseService(tc.in)
		if err != nil || s.String() != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, s.String(), err, tc.want)
		}
		if again, err := ParseService(s.String()); err != nil || again != s {
			t.Errorf("%q reads back as %+v, %v", s.String(), again, err)
		}
	}
	bad := []struct{ in, why string }{
		{"", whyServiceForm},
		{"web", whyServiceForm},
		{"web=127.0.0.1", whyServiceForm},
		{"=127.0.0.1:80", whyServiceName},
		{"we.b=127.0.0.1:80", whyServiceName},
		{"we_b=127.0.0.1:80", whyServiceName},
		{"-web=127.0.0.1:80", whyServiceName},
		{"web=127.0.0.1:*", whyServicePort},
		{"web=127.0.0.1:80-81", whyServicePort},
		{"web=127.0.0.1:0", whyServicePort},
		{"web=[127.0.0.1]:80", whyServiceHost},
		{"web=[example.org]:80", whyServiceHost},
		{"web=[::ffff:127.0.0.1]:80", whyServiceHost},
		{"web=[fe80::1%eth0]:80", whyServiceHost},
		{"web=*.example.org:80", whyServiceHost},
		{"web=127.1:80", whyServiceHost},
		{"web= 127.0.0.1:80", whySpace},
	}
	for _, tc := range bad {
		_, err := ParseService(tc.in)
		var re *RuleError
		if !errors.Is(err, ErrBadService) || !errors.As(err, &re) || re.Reason != tc.why {
			t.Errorf("%q: %v; want ErrBadService %q", tc.in, err, tc.why)
		}
	}
	if _, err := ParseServices([]string{"web=127.0.0.1:80", "WEB=127.0.0.1:81"}); !errors.Is(err, ErrBadService) {
		t.Fatalf("a name twice: %v", err)
	}
	list, err := ParseServices([]string{"web=127.0.0.1:80", "db=[::1]:5432"})
	if err != nil || len(list) != 2 || list[1].Port != 5432 {
		t.Fatalf("%v, %v", list, err)
	}
}

// FuzzParseRule: the parser never panics; what it accepts has a canonical form that reads back
// to the same rule, and what it refuses is ErrBadRule.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"*.example.org:443", "example.org:*", "*:80", "example.org:8000-8100", "10.0.0.0/8",
		"192.0.2.0/24:53", "[2001:db8::/32]:443", "127.0.0.1:8080", "::1", "[::ffff:127.0.0.1]:80", "fe80::1%eth0",
		"10.0.0.1/8", "*.*.x:1", "a.b.:1", "[::1]:0", "web=127.0.0.1:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if !errors.Is(err, ErrBadRule) {
				t.Fatalf("%q: %v is not ErrBadRule", s, err)
			}
			return
		}
		again, err := ParseRule(r.String())
		if err != nil || again != r || again.String() != r.String() {
			t.Fatalf("%q reads as %q, which reads back as %+v, %v", s, r.String(), again, err)
		}
		if r.lo < 1 || r.hi < r.lo || (r.anyHost && (r.name != "" || r.prefix.IsValid())) {
			t.Fatalf("%q reads as an impossible rule %+v", s, r)
		}
		if _, err := ParseService("svc=" + s); err == nil && strings.Contains(s, "*") {
			t.Fatalf("a service with a wildcard %q", s)
		}
	})
}
