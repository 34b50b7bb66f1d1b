package identity

import (
	"bytes"
	"errors"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// fixedSecp256k1ID is the PeerId of a fixed secp256k1 key (scalar 0x0101…01).
func fixedSecp256k1ID(tb testing.TB) (peer.ID, []byte) {
	tb.Helper()
	k, err := crypto.UnmarshalSecp256k1PrivateKey(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		tb.Fatal(err)
	}
	pub, err := k.GetPublic().Raw()
	if err != nil {
		tb.Fatal(err)
	}
	return id, pub
}

// FuzzParsePeerID feeds arbitrary strings (API input, aliases, announcements) to ParsePeerID:
// it fails only with ErrInvalidPeerID, and an accepted PeerId is the one canonical PeerId of
// the secp256k1 key it embeds, so one key never has two accepted PeerIds.
func FuzzParsePeerID(f *testing.F) {
	id, _ := fixedSecp256k1ID(f)
	f.Add(id.String())
	f.Add(peer.ToCid(id).String())
	f.Add("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA") // Ed25519
	f.Add("QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N")       // RSA (sha256 multihash)
	f.Add("")
	f.Add("16Uiu2HA")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParsePeerID(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidPeerID) {
				t.Fatalf("ParsePeerID(%q): %v, want ErrInvalidPeerID", s, err)
			}
			return
		}
		pub, err := PubKeyFromPeerID(got)
		if err != nil {
			t.Fatalf("accepted %q embeds no key: %v", s, err)
		}
		canon, err := PeerIDFromPubKey(pub)
		if err != nil || canon != got {
			t.Fatalf("accepted %q is PeerId %x, but its key %x has PeerId %x (%v)", s, []byte(got), pub, []byte(canon), err)
		}
		again, err := ParsePeerID(got.String())
		if err != nil || again != got {
			t.Fatalf("%s does not parse back: %v", got, err)
		}
	})
}

// FuzzPeerIDFromPubKey feeds arbitrary key bytes to PeerIDFromPubKey: it fails only with
// ErrInvalidPubKey, accepts only 33-byte compressed keys, and an accepted key round-trips
// through its PeerId and that PeerId's text form.
func FuzzPeerIDFromPubKey(f *testing.F) {
	_, pub := fixedSecp256k1ID(f)
	f.Add(pub)
	f.Add(append([]byte{2}, make([]byte, 32)...))
	f.Add(append([]byte{4}, make([]byte, 64)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := PeerIDFromPubKey(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidPubKey) {
				t.Fatalf("PeerIDFromPubKey(%x): %v, want ErrInvalidPubKey", b, err)
			}
			return
		}
		if len(b) != CompressedPubKeySize || (b[0] != 2 && b[0] != 3) {
			t.Fatalf("accepted %x", b)
		}
		back, err := PubKeyFromPeerID(id)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("PeerId %s embeds %x (%v), want %x", id, back, err, b)
		}
		if parsed, err := ParsePeerID(id.String()); err != nil || parsed != id {
			t.Fatalf("%s does not parse: %v", id, err)
		}
	})
}
