package gateway

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestDecodeRequest: the request (PROTOCOL.md §9.8) decodes strictly: a known kind, UTF-8
// without control characters or spaces, a target with a host and a port from 1 to 65535
// without leading zeros, a service name of 1 to 63 letters, digits, '-' and '_', at most 259
// bytes of text.
func TestDecodeRequest(t *testing.T) {
	long := strings.Repeat("a", 253)
	for _, tc := range []struct {
		name string
		in   []byte
		want request // zero: refused
	}{
		{"target name", []byte("\x01example.org:443"), request{target: "example.org:443"}},
		{"target IPv4", []byte("\x01192.0.2.1:80"), request{target: "192.0.2.1:80"}},
		{"target IPv6", []byte("\x01[2001:db8::1]:53"), request{target: "[2001:db8::1]:53"}},
		{"target port 1", []byte("\x01a:1"), request{target: "a:1"}},
		{"target port 65535", []byte("\x01a:65535"), request{target: "a:65535"}},
		{"target of 259 bytes", []byte("\x01" + long + ":65535"), request{target: long + ":65535"}},
		{"target UTF-8 name", []byte("\x01bücher.example:80"), request{target: "bücher.example:80"}},
		{"service", []byte("\x02web"), request{service: "web"}},
		{"service of every character", []byte("\x02Az09-_"), request{service: "Az09-_"}},
		{"service of 63", []byte("\x02" + strings.Repeat("s", 63)), request{service: strings.Repeat("s", 63)}},

		{"empty", nil, request{}},
		{"kind only", []byte{1}, request{}},
		{"kind 0", []byte("\x00a:80"), request{}},
		{"kind 3", []byte("\x03a:80"), request{}},
		{"kind 0x81", []byte("\x81a:80"), request{}},
		{"target of 260 bytes", []byte("\x01" + long + "a:65535"), request{}},
		{"no port", []byte("\x01example.org"), request{}},
		{"empty port", []byte("\x01example.org:"), request{}},
		{"no host", []byte("\x01:80"), request{}},
		{"port 0", []byte("\x01a:0"), request{}},
		{"port 65536", []byte("\x01a:65536"), request{}},
		{"port with a leading zero", []byte("\x01a:080"), request{}},
		{"port 00", []byte("\x01a:00"), request{}},
		{"port with a sign", []byte("\x01a:+80"), request{}},
		{"port not decimal", []byte("\x01a:0x50"), request{}},
		{"port a name", []byte("\x01a:http"), request{}},
		{"IPv6 without brackets", []byte("\x012001:db8::1:53"), request{}},
		{"space", []byte("\x01a b:80"), request{}},
		{"tab", []byte("\x01a\tb:80"), request{}},
		{"NUL", []byte("\x01a\x00:80"), request{}},
		{"newline", []byte("\x01a:80\n"), request{}},
		{"DEL", []byte("\x01a\x7f:80"), request{}},
		{"C1 control", []byte("\x01a\u0085:80"), request{}},
		{"no-break space", []byte("\x01a\u00a0b:80"), request{}},
		{"not UTF-8", []byte("\x01a\xff:80"), request{}},
		{"truncated UTF-8", []byte("\x01a\xc3:80"), request{}},
		{"service empty", []byte{2}, request{}},
		{"service of 64", []byte("\x02" + strings.Repeat("s", 64)), request{}},
		{"service with a dot", []byte("\x02web.site"), request{}},
		{"service with a colon", []byte("\x02web:80"), request{}},
		{"service UTF-8", []byte("\x02bücher"), request{}},
		{"service with a space", []byte("\x02we b"), request{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeRequest(tc.in)
			if tc.want == (request{}) {
				if !errors.Is(err, ErrBadOpen) {
					t.Fatalf("decoded %+v, %v; want ErrBadOpen", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, tc.want)
			}
			if enc := got.encode(); !bytes.Equal(enc, tc.in) {
				t.Fatalf("encoded again %q, want %q", enc, tc.in)
			}
		})
	}
}

// TestEntryChecksAsTheExit: what Open accepts as a target or service is exactly what the exit
// decodes, so that an entry refuses at once (ErrBadOpen) what the exit would refuse.
func TestEntryChecksAsTheExit(t *testing.T) {
	if _, err := NewEntry(EntryConfig{Self: "self"}); err == nil {
		t.Fatal("NewEntry without Dial")
	}
	e, err := NewEntry(EntryConfig{Self: "self", Dial: refuseDial})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a:80", "a b:80", "a\u0085:80", "a\u00a0:80", "a\xff:80", "a:080", "[::1]:1", "web", "we b", ""} {
		for _, kind := range []byte{requestTarget, requestService} {
			o := Open{Destination: "exit", Protocol: TCP}
			if kind == requestTarget {
				o.Target = s
			} else {
				o.Service = s
			}
			req, openErr := e.check(o)
			_, decErr := decodeRequest(append([]byte{kind}, s...))
			if (openErr == nil) != (decErr == nil) {
				t.Errorf("%q as %d: Open says %v, the exit %v", s, kind, openErr, decErr)
			}
			if openErr == nil {
				if got, _ := decodeRequest(req.encode()); got != req {
					t.Errorf("%q: the exit reads %+v, the entry sent %+v", s, got, req)
				}
			}
		}
	}
}

// FuzzDecodeRequest: decodeRequest never panics, what it accepts encodes back to the same bytes
// and is what Open would accept, and exactly one of target and service is set.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{"\x01example.org:443", "\x01[2001:db8::1]:53", "\x02web", "\x01a:080", "\x01a:65536",
		"\x01a b:80", "\x02", "\x03x", "\x01bücher.example:80", "\x01a\xff:1", "\x02" + strings.Repeat("s", 64)} {
		f.Add([]byte(s))
	}
	e, err := NewEntry(EntryConfig{Self: "self", Dial: refuseDial})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRequest(b)
		if err != nil {
			if !errors.Is(err, ErrBadOpen) {
				t.Fatalf("error %v is not ErrBadOpen", err)
			}
			return
		}
		if (r.target == "") == (r.service == "") {
			t.Fatalf("decoded %+v", r)
		}
		if enc := r.encode(); !bytes.Equal(enc, b) {
			t.Fatalf("%q encodes again as %q", b, enc)
		}
		o := Open{Destination: peer.ID("exit"), Protocol: UDP, Target: r.target, Service: r.service}
		if got, err := e.check(o); err != nil || got != r {
			t.Fatalf("Open refuses what the exit accepts (%q): %+v, %v", b, got, err)
		}
	})
}
