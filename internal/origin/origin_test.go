package origin

import (
	"errors"
	"net/http"
	"testing"
)

func TestHost(t *testing.T) {
	p, err := New(Config{Hosts: []string{"Node.Example.org."}, TokenRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:3001": true, "[::1]:3001": true, "::1": true, "[fe80::1]": true, "10.0.0.7:80": true,
		"localhost": true, "LocalHost:3000": true, "localhost.": true, "a.b.localhost:1": true,
		"node.example.org": true, "node.example.org.:443": true, "NODE.EXAMPLE.ORG": true,
		"": false, ":3001": false, ".": false, "example.org": false, "evil-localhost": false, "localhost.evil.example": false,
		"node.example.org.evil.example": false, "127.0.0.1.nip.io": false,
	} {
		if got := p.Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestOrigin(t *testing.T) {
	p, err := New(Config{Origins: []string{"https://App.Example:443", "http://10.0.0.2:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	p.AllowConsole(3000, ServedHosts("127.0.0.1")...)
	for o, want := range map[string]bool{
		"https://app.example": true, "https://APP.example:443": true, "http://10.0.0.2:8080": true,
		"http://127.0.0.1:3000": true, "http://localhost:3000": true, "http://[::1]:3000": true,
		"http://app.example": false, "https://app.example:8443": false, "http://127.0.0.1:3001": false,
		"http://127.0.0.1": false, "https://127.0.0.1:3000": false, "null": false, "": false,
		"http://localhost:3000/path": false, "http://user@localhost:3000": false, "file://": false,
	} {
		if got := p.Origin(o); got != want {
			t.Errorf("Origin(%q) = %v, want %v", o, got, want)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{Origins: []string{Any}}, ErrAnyWithoutToken},
		{Config{Origins: []string{"app.example"}, TokenRequired: true}, ErrBadOrigin},
		{Config{Origins: []string{"http://app.example/x"}, TokenRequired: true}, ErrBadOrigin},
		{Config{Origins: []string{"ftp://app.example"}, TokenRequired: true}, ErrBadOrigin},
		{Config{Hosts: []string{"http://node.example"}}, ErrBadHost},
		{Config{Hosts: []string{""}}, ErrBadHost},
	} {
		if _, err := New(tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("New(%+v): %v, want %v", tc.cfg, err, tc.want)
		}
	}
	if p, err := New(Config{Origins: []string{Any}, TokenRequired: true}); err != nil || !p.Origin("https://anything.example") || p.Origin("null") {
		t.Fatalf("Any with a token: %v", err)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		host, origin string
		want         bool
	}{
		{"127.0.0.1:3001", "", true},
		{"127.0.0.1:3001", "http://127.0.0.1:3001", true},
		{"localhost:3001", "http://LOCALHOST:3001", true},
		{"127.0.0.1:3001", "http://127.0.0.1:3000", false},
		{"127.0.0.1:3001", "null", false},
	} {
		r := &http.Request{Host: tc.host, Header: http.Header{}}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := SameOrigin(r); got != tc.want {
			t.Errorf("SameOrigin(Host %q, Origin %q) = %v", tc.host, tc.origin, got)
		}
	}
}

func TestServedHosts(t *testing.T) {
	if h := ServedHosts("10.0.0.5"); len(h) != 1 || h[0] != "10.0.0.5" {
		t.Fatalf("specific address: %v", h)
	}
	loop := ServedHosts("127.0.0.1")
	if len(loop) != 3 {
		t.Fatalf("loopback: %v", loop)
	}
	if all := ServedHosts("0.0.0.0"); len(all) < len(loop)+1 {
		t.Fatalf("unspecified: %v, want the loopback names and the interfaces' addresses", all)
	}
}
