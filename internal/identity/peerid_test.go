package identity

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// secp256k1PeerIDWithPrefix generates keys until one's PeerId starts with prefix.
// About 16 % of secp256k1 PeerIds start 16Uiu2HAk and 84 % 16Uiu2HAm, so a few
// hundred tries are plenty.
func secp256k1PeerIDWithPrefix(t *testing.T, prefix string) peer.ID {
	t.Helper()
	for range 1000 {
		k, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.IDFromPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(id.String(), prefix) {
			return id
		}
	}
	t.Fatalf("no PeerId with prefix %s in 1000 keys", prefix)
	return ""
}

func TestParsePeerID(t *testing.T) {
	idM := secp256k1PeerIDWithPrefix(t, "16Uiu2HAm")
	idK := secp256k1PeerIDWithPrefix(t, "16Uiu2HAk")
	edKey, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edID, err := peer.IDFromPrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   string
		want peer.ID // empty: expect ErrInvalidPeerID
	}{
		{"secp256k1 16Uiu2HAm", idM.String(), idM},
		{"secp256k1 16Uiu2HAk", idK.String(), idK},
		{"secp256k1 as CIDv1", peer.ToCid(idM).String(), idM},
		{"ed25519", edID.String(), ""},
		{"garbage", "not-a-peer-id", ""},
		{"empty", "", ""},
		{"truncated", idM.String()[:20], ""},
		{"chain address", "0x8ba1f109551bD432803012645Ac136ddd64DBA72", ""},
		// A sha256-multihash PeerId (RSA-style): decodes, but has no embedded key.
		{"no embedded key", "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePeerID(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidPeerID) {
					t.Errorf("ParsePeerID(%q) = %v, %v; want ErrInvalidPeerID", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParsePeerID(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestPubKeyPeerIDRoundTrip(t *testing.T) {
	k, pub, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	want, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pub.Raw()
	if err != nil {
		t.Fatal(err)
	}
	id, err := PeerIDFromPubKey(raw)
	if err != nil || id != want {
		t.Fatalf("PeerIDFromPubKey = %v, %v; want %v", id, err, want)
	}
	back, err := PubKeyFromPeerID(id)
	if err != nil || !bytes.Equal(back, raw) || len(back) != CompressedPubKeySize {
		t.Fatalf("PubKeyFromPeerID = %x, %v; want %x", back, err, raw)
	}

	edKey, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edID, err := peer.IDFromPrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PubKeyFromPeerID(edID); !errors.Is(err, ErrInvalidPeerID) {
		t.Errorf("PubKeyFromPeerID(ed25519) = %v, want ErrInvalidPeerID", err)
	}

	notOnCurve := bytes.Repeat([]byte{0xff}, CompressedPubKeySize)
	notOnCurve[0] = 0x02
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short", raw[:32]},
		{"uncompressed prefix", append([]byte{0x04}, raw[1:]...)},
		{"not on curve", notOnCurve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := PeerIDFromPubKey(tc.in); !errors.Is(err, ErrInvalidPubKey) {
				t.Errorf("PeerIDFromPubKey = %v, want ErrInvalidPubKey", err)
			}
		})
	}
}
