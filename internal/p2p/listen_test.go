package p2p

import "testing"

func TestListenAddrsFor(t *testing.T) {
	for in, want := range map[string][2]string{
		"127.0.0.1:9091":   {"/ip4/127.0.0.1/tcp/9091", "/ip4/127.0.0.1/udp/9091/quic-v1"},
		"[::1]:9091":       {"/ip6/::1/tcp/9091", "/ip6/::1/udp/9091/quic-v1"},
		"relay.example:80": {"/dns/relay.example/tcp/80", "/dns/relay.example/udp/80/quic-v1"},
	} {
		got, err := ListenAddrsFor(in)
		if err != nil || len(got) != 2 || got[0].String() != want[0] || got[1].String() != want[1] {
			t.Errorf("ListenAddrsFor(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"nope", "1.2.3.4", ":x:y"} {
		if _, err := ListenAddrsFor(bad); err == nil {
			t.Errorf("ListenAddrsFor(%q) accepted", bad)
		}
	}
}
