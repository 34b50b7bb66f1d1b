package channels_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
)

// FuzzDecodeMultiaddrs feeds arbitrary announcement multiaddr fields (chain data anybody can
// write) to DecodeMultiaddrs: it never panics, returns either nil or non-empty fields that each
// start with '/' and hold no whitespace, and what it returns re-encodes to a field that decodes
// to the same list.
func FuzzDecodeMultiaddrs(f *testing.F) {
	f.Add([]byte("/ip4/127.0.0.1/tcp/9091/p2p/16Uiu2HAmPLe7Mzm8TsYUubgCAW1aJoeFScxrLj8ppHFivPo97bUZ"))
	f.Add(channels.EncodeMultiaddrs([]string{"/ip4/10.0.0.1/tcp/1", "/ip4/10.0.0.1/udp/1/quic-v1"}))
	f.Add([]byte(" /dns4/a.example/tcp/1 \t\n/ip6/::1/tcp/2 "))
	f.Add([]byte("ip4/1.2.3.4"))
	f.Add([]byte{0x04, 127, 0, 0, 1, 0x06, 0x23, 0x83}) // a binary multiaddr
	f.Add([]byte{})
	f.Add([]byte("/\u00a0/x\u2028/y"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := channels.DecodeMultiaddrs(b)
		if got == nil {
			return
		}
		if !utf8.Valid(b) {
			t.Fatalf("decoded invalid UTF-8 %q", b)
		}
		for _, a := range got {
			if !strings.HasPrefix(a, "/") || strings.IndexFunc(a, isSpace) >= 0 || !bytes.Contains(b, []byte(a)) {
				t.Fatalf("bad multiaddr %q from %q", a, b)
			}
		}
		again := channels.DecodeMultiaddrs(channels.EncodeMultiaddrs(got))
		if !slices.Equal(again, got) {
			t.Fatalf("decode(encode(%q)) = %q", got, again)
		}
	})
}

// isSpace is what strings.Fields splits on.
func isSpace(r rune) bool { return strings.TrimSpace(string(r)) == "" }

// FuzzPublicKeyFromContract feeds arbitrary announced key bytes to PublicKeyFromContract, then
// what it accepts to identity.PeerIDFromPubKey, as the indexer and the node do: it fails only with
// ErrBadPublicKey; an accepted key is 33 compressed bytes that decompress to the announced
// X ‖ Y and always yield a PeerId, which embeds the same key.
func FuzzPublicKeyFromContract(f *testing.F) {
	for i := byte(1); i <= 3; i++ {
		key, err := crypto.ToECDSA(bytes.Repeat([]byte{i}, 32))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(crypto.FromECDSAPub(&key.PublicKey)[1:])
	}
	f.Add(make([]byte, 64))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(make([]byte, 65))
	f.Add([]byte{2, 1, 2, 3})
	f.Fuzz(func(t *testing.T, xy []byte) {
		pub, err := channels.PublicKeyFromContract(xy)
		if err != nil {
			if !errors.Is(err, channels.ErrBadPublicKey) {
				t.Fatalf("error %v does not match ErrBadPublicKey", err)
			}
			return
		}
		if len(pub) != 33 || (pub[0] != 2 && pub[0] != 3) {
			t.Fatalf("key %x is not 33 compressed bytes", pub)
		}
		k, err := crypto.DecompressPubkey(pub)
		if err != nil {
			t.Fatalf("accepted key does not decompress: %v", err)
		}
		if !bytes.Equal(crypto.FromECDSAPub(k)[1:], xy) {
			t.Fatalf("key %x does not decompress to the announced %x", pub, xy)
		}
		id, err := identity.PeerIDFromPubKey(pub)
		if err != nil {
			t.Fatalf("accepted key %x gives no PeerId: %v", pub, err)
		}
		back, err := identity.PubKeyFromPeerID(id)
		if err != nil || !bytes.Equal(back, pub) {
			t.Fatalf("PeerId %s embeds %x (%v), want %x", id, back, err, pub)
		}
	})
}
