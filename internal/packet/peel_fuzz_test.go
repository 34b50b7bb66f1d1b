package packet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// fuzzNow is the hop's clock in the fuzz targets; the seed packets are created then.
var fuzzNow = time.UnixMilli(1_700_000_000_000)

// recordingReplay accepts every tag and remembers the last call.
type recordingReplay struct {
	calls int
	epoch uint32
	tag   [TagSize]byte
}

func (r *recordingReplay) CheckAndAdd(epoch uint32, tag [TagSize]byte) (bool, error) {
	r.calls++
	r.epoch, r.tag = epoch, tag
	return true, nil
}

// hopView is what a hop holding key sees of pkt under its MAC: the routing information and
// the payload in plaintext, with the keys that encrypt and authenticate them.
type hopView struct {
	eph     []byte
	keys    hopKeys
	routing []byte // RoutingSize bytes, decrypted
	payload []byte // PayloadSize bytes, decrypted
}

// viewAt decrypts pkt with the hop key, as Peel does.
func viewAt(tb testing.TB, key *PrivateKey, pkt []byte) hopView {
	tb.Helper()
	v := hopView{eph: pkt[:EphemeralKeySize]}
	x, y, ok := parseEphemeral(v.eph)
	if !ok {
		tb.Fatal("bad ephemeral key")
	}
	point, ok := ecdh(&key.scalar, x, y)
	if !ok {
		tb.Fatal("ecdh failed")
	}
	secret := sharedSecret(&point, v.eph, &key.pub.compressed)
	v.keys = deriveKeys(&secret)
	c, err := chacha20.NewUnauthenticatedCipher(v.keys.header[:], zeroNonce[:])
	if err != nil {
		tb.Fatal(err)
	}
	v.routing = make([]byte, RoutingSize)
	c.XORKeyStream(v.routing, pkt[offRouting:offMAC])
	aead, err := chacha20poly1305.New(v.keys.payload[:])
	if err != nil {
		tb.Fatal(err)
	}
	sealed := append(append([]byte(nil), pkt[offPayload:]...), pkt[offMAC:offPayload]...)
	if v.payload, err = aead.Open(nil, zeroNonce[:], sealed, pkt[:offMAC]); err != nil {
		tb.Fatal(err)
	}
	return v
}

// seal builds the packet whose plaintext routing information and payload at this hop are
// routing and payload, under a valid MAC.
func (v hopView) seal(routing, payload []byte) []byte {
	pkt := make([]byte, PacketSize)
	copy(pkt, v.eph)
	c, err := chacha20.NewUnauthenticatedCipher(v.keys.header[:], zeroNonce[:])
	if err != nil {
		panic(err)
	}
	c.XORKeyStream(pkt[offRouting:offMAC], routing)
	aead, err := chacha20poly1305.New(v.keys.payload[:])
	if err != nil {
		panic(err)
	}
	sealed := aead.Seal(nil, zeroNonce[:], payload, pkt[:offMAC])
	copy(pkt[offPayload:], sealed[:PayloadSize])
	copy(pkt[offMAC:offPayload], sealed[PayloadSize:])
	return pkt
}

// fit pads b with zeros or truncates it to n bytes.
func fit(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}

// FuzzPeelInner reaches the layers under the MAC: the fuzzer writes the plaintext routing
// information and payload a hop sees, the target encrypts and authenticates them with the
// hop's keys (derived with the package's own functions from packets built by NewRoute and
// Seal for a fixed key), and Peel must then decide exactly as the format says: a packet
// whose epoch is outside the window ErrExpired before its tag is recorded; a relayer's next
// hop, proof-of-relay field and next packet taken unchanged; a recipient's message decoded
// within MaxMessageSize with zero padding; anything else ErrBadPoint or ErrPayload; never a
// panic and never ErrMAC.
func FuzzPeelInner(f *testing.F) {
	rand := newSeededReader("FuzzPeelInner")
	nodes := newNodes(f, rand, 3)
	ts := uint64(fuzzNow.UnixMilli())
	relayed, _ := build(f, rand, nodes, Message{Text: []byte("fuzz relayed"), Timestamp: ts})
	final, _ := build(f, rand, nodes[:1], Message{Text: []byte("fuzz final"), Timestamp: ts})
	key := nodes[0].priv
	rv, fv := viewAt(f, key, relayed), viewAt(f, key, final)
	f.Add(rv.routing, rv.payload)
	f.Add(fv.routing, fv.payload)
	long := append([]byte(nil), fv.payload...)
	long[0], long[1] = 0x01, 0xf5 // 501 bytes of text
	f.Add(fv.routing, long)
	old := append([]byte(nil), fv.routing...)
	binary.BigEndian.PutUint32(old[riEpoch:], Epoch(fuzzNow)-EpochSkew-1)
	f.Add(old, fv.payload)
	f.Add([]byte{4}, []byte{})
	nowEpoch := int64(Epoch(fuzzNow))
	f.Fuzz(func(t *testing.T, routingIn, payloadIn []byte) {
		routing, payload := fit(routingIn, RoutingSize), fit(payloadIn, PayloadSize)
		pkt := rv.seal(routing, payload)
		replay := &recordingReplay{}
		p, err := Peel(key, pkt, fuzzNow, replay)
		if errors.Is(err, ErrMAC) {
			t.Fatal("MAC of a correctly sealed packet refused")
		}
		epoch := binary.BigEndian.Uint32(routing[riEpoch:riPoR])
		if int64(epoch) < nowEpoch-EpochSkew || int64(epoch) > nowEpoch+EpochSkew {
			if !errors.Is(err, ErrExpired) || replay.calls != 0 {
				t.Fatalf("epoch %d at %d: err = %v, %d replay calls; want ErrExpired, none", epoch, nowEpoch, err, replay.calls)
			}
			return
		}
		if replay.calls != 1 || replay.epoch != epoch || replay.tag != rv.keys.tag {
			t.Fatalf("replay check: %+v, want one call with epoch %d and the hop's tag", replay, epoch)
		}
		n := int(binary.BigEndian.Uint16(payload))
		switch routing[riNextHop] {
		case 0:
			if !allZero(routing[:riEpoch]) || !allZero(routing[riPoR:RoutingInfoSize]) ||
				n > MaxMessageSize || !allZero(payload[10+n:]) {
				if !errors.Is(err, ErrPayload) {
					t.Fatalf("malformed final hop: err = %v, want ErrPayload", err)
				}
				return
			}
			if err != nil || !p.Final || p.Next != nil {
				t.Fatalf("final hop: %+v, %v", p, err)
			}
			if len(p.Message.Text) != n || len(p.Message.Text) > MaxMessageSize ||
				!bytes.Equal(p.Message.Text, payload[10:10+n]) ||
				p.Message.Timestamp != binary.BigEndian.Uint64(payload[2:10]) {
				t.Fatalf("message %+v does not match its payload", p.Message)
			}
		case 2, 3:
			if err != nil || p.Final || len(p.Next) != PacketSize {
				t.Fatalf("relayer: %+v, %v", p, err)
			}
			if !bytes.Equal(p.NextHop[:], routing[riNextHop:riEpoch]) || !bytes.Equal(p.PoR[:], routing[riPoR:riMAC]) {
				t.Fatal("next hop or proof-of-relay field altered")
			}
			if !bytes.Equal(p.Next[:EphemeralKeySize], routing[riEph:RoutingInfoSize]) ||
				!bytes.Equal(p.Next[offRouting:offMAC-RoutingInfoSize], routing[RoutingInfoSize:]) ||
				!bytes.Equal(p.Next[offMAC:offPayload], routing[riMAC:riEph]) ||
				!bytes.Equal(p.Next[offPayload:], payload) {
				t.Fatal("next packet is not the shifted routing information, next MAC and peeled payload")
			}
		default:
			if !errors.Is(err, ErrBadPoint) {
				t.Fatalf("next-hop prefix %#x: err = %v, want ErrBadPoint", routing[0], err)
			}
			return
		}
		if p.Tag != rv.keys.tag || p.Epoch != epoch {
			t.Fatalf("tag or epoch %d is not the packet's %d", p.Epoch, epoch)
		}
	})
}

// FuzzParsePublicKey feeds arbitrary bytes to ParsePublicKey and checks it against
// go-ethereum's decoder: it accepts exactly the 33-byte compressed keys go-ethereum accepts,
// and an accepted key keeps its encoding and coordinates that lie on the curve.
func FuzzParsePublicKey(f *testing.F) {
	rand := newSeededReader("FuzzParsePublicKey")
	for _, n := range newNodes(f, rand, 2) {
		b := n.pub.Bytes()
		f.Add(b[:])
	}
	f.Add(append([]byte{2}, make([]byte, 32)...))
	f.Add(append([]byte{3}, bytes.Repeat([]byte{0xff}, 32)...))
	f.Add(append([]byte{4}, make([]byte, 64)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParsePublicKey(b)
		_, gethErr := crypto.DecompressPubkey(b)
		if (err == nil) != (gethErr == nil) {
			t.Fatalf("ParsePublicKey(%x): %v; go-ethereum: %v", b, err, gethErr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadPoint) {
				t.Fatalf("error %v is not ErrBadPoint", err)
			}
			return
		}
		if enc := k.Bytes(); !bytes.Equal(enc[:], b) {
			t.Fatalf("Bytes() = %x, want %x", enc, b)
		}
		uncompressed := append(append([]byte{4}, k.x[:]...), k.y[:]...)
		if _, _, ok := parseEphemeral(uncompressed); !ok || k.y[31]&1 != b[0]&1 {
			t.Fatalf("coordinates of %x are not on the curve with its parity", b)
		}
	})
}
