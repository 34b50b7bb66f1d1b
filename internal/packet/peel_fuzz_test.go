package packet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/crypto/chacha20"
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

// hopView is what a hop holding key sees of pkt: the routing information in
// plaintext under its header MAC, and the keys that encrypt and authenticate it.
type hopView struct {
	eph     []byte
	keys    hopKeys
	routing []byte // RoutingSize bytes, decrypted
}

// viewAt decrypts pkt's routing information with the hop key, as Peel does.
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
	if !headerMACValid(&v.keys.mac, pkt[:offMAC], pkt[offMAC:offPayload]) {
		tb.Fatal("header MAC")
	}
	c, err := chacha20.NewUnauthenticatedCipher(v.keys.header[:], zeroNonce[:])
	if err != nil {
		tb.Fatal(err)
	}
	v.routing = make([]byte, RoutingSize)
	c.XORKeyStream(v.routing, pkt[offRouting:offMAC])
	return v
}

// seal builds the packet whose plaintext routing information at this hop is
// routing, under a valid header MAC, with payload as it travels. A final
// forward slot (next hop zero, kind forward) gets the true end-to-end tag of
// payload taken as plaintext, which is sealed under the hop's payload key.
func (v hopView) seal(routing, payload []byte) []byte {
	pkt := make([]byte, PacketSize)
	copy(pkt, v.eph)
	copy(pkt[offPayload:], payload)
	if routing[riNextHop] == 0 && routing[riKind] == kindForward {
		routing = bytes.Clone(routing)
		sealed := newAEAD(&v.keys.payload).Seal(nil, zeroNonce[:], payload, nil)
		copy(pkt[offPayload:], sealed[:PayloadSize])
		copy(routing[riFinal:riFinalEnd], sealed[PayloadSize:])
	}
	c, err := chacha20.NewUnauthenticatedCipher(v.keys.header[:], zeroNonce[:])
	if err != nil {
		panic(err)
	}
	c.XORKeyStream(pkt[offRouting:offMAC], routing)
	mac := headerMAC(&v.keys.mac, pkt[:offMAC])
	copy(pkt[offMAC:], mac[:])
	return pkt
}

// fit pads b with zeros or truncates it to n bytes.
func fit(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}

// FuzzPeelInner reaches the layers under the header MAC: the fuzzer writes the plaintext
// routing information a hop sees and a payload, the target encrypts and authenticates them
// with the hop's keys (derived with the package's own functions from packets built by
// NewRoute and Seal for a fixed key; a final forward slot gets the payload's true end-to-end
// tag, the payload taken as the plaintext), and Peel must then decide exactly as the format
// says: a packet whose epoch is outside the window ErrExpired before its tag is recorded; a
// relayer's next hop, proof-of-relay field and next header taken unchanged and its payload
// under one more ChaCha20 layer; a forward recipient's message decoded within
// MaxMessageSize with zero padding; a reply's id and payload handed over as they are;
// anything else ErrBadPoint or ErrPayload (at the final hop with the hop's view); never a
// panic and never ErrMAC.
func FuzzPeelInner(f *testing.F) {
	rand := newSeededReader("FuzzPeelInner")
	nodes := newNodes(f, rand, 3)
	ts := uint64(fuzzNow.UnixMilli())
	relayed, _ := build(f, rand, nodes, Message{Text: []byte("fuzz relayed"), Timestamp: ts})
	final, _ := build(f, rand, nodes[:1], Message{Text: []byte("fuzz final"), Timestamp: ts})
	key := nodes[0].priv
	rv, fv := viewAt(f, key, relayed), viewAt(f, key, final)
	plain := make([]byte, PayloadSize)
	encodeMessage(plain, Message{Text: []byte("fuzz final"), Timestamp: ts})
	f.Add(rv.routing, relayed[offPayload:])
	f.Add(fv.routing, plain)
	long := bytes.Clone(plain)
	long[0], long[1] = 0x01, 0xf5 // 501 bytes of text
	f.Add(fv.routing, long)
	reply := bytes.Clone(fv.routing)
	reply[riKind] = kindReply
	f.Add(reply, relayed[offPayload:])
	old := bytes.Clone(fv.routing)
	binary.BigEndian.PutUint32(old[riEpoch:], Epoch(fuzzNow)-EpochSkew-1)
	f.Add(old, plain)
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
		n := int(binary.BigEndian.Uint16(payload)) &^ dropFlag
		drop := payload[0]&0x80 != 0
		switch routing[riNextHop] {
		case 0:
			kind := routing[riKind]
			canonical := allZero(routing[:riEpoch]) && allZero(routing[riFinalEnd:RoutingInfoSize])
			if !canonical || kind != kindForward && kind != kindReply ||
				kind == kindForward && (n > MaxMessageSize || drop && n != 0 || !allZero(payload[10+n:])) {
				if !errors.Is(err, ErrPayload) || !p.Final || p.Tag != rv.keys.tag || p.Epoch != epoch {
					t.Fatalf("malformed final hop: err = %v, %+v; want ErrPayload with the hop's view", err, p)
				}
				return
			}
			if err != nil || !p.Final || p.Next != nil {
				t.Fatalf("final hop: %+v, %v", p, err)
			}
			if kind == kindReply {
				if !p.Reply || !bytes.Equal(p.ReplyID[:], routing[riFinal:riFinalEnd]) || !bytes.Equal(p.Payload, payload) || p.Message.Text != nil {
					t.Fatalf("reply %+v does not match its routing information and payload", p)
				}
				break
			}
			if p.Reply || len(p.Message.Text) != n || len(p.Message.Text) > MaxMessageSize ||
				!bytes.Equal(p.Message.Text, payload[10:10+n]) || p.Message.Drop != drop ||
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
			layered := make([]byte, PayloadSize)
			xorPayload(&rv.keys.payload, layered, payload)
			if !bytes.Equal(p.Next[:EphemeralKeySize], routing[riEph:RoutingInfoSize]) ||
				!bytes.Equal(p.Next[offRouting:offMAC-RoutingInfoSize], routing[RoutingInfoSize:]) ||
				!bytes.Equal(p.Next[offMAC:offPayload], routing[riMAC:riEph]) ||
				!bytes.Equal(p.Next[offPayload:], layered) {
				t.Fatal("next packet is not the shifted routing information, next MAC and the payload under the hop's layer")
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
