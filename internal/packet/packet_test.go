package packet

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20"
)

// seededReader is a deterministic randomness source: the ChaCha20 keystream
// of SHA-256(seed).
type seededReader struct{ c *chacha20.Cipher }

func newSeededReader(seed string) *seededReader {
	key := sha256.Sum256([]byte(seed))
	c, err := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, chacha20.NonceSize))
	if err != nil {
		panic(err)
	}
	return &seededReader{c}
}

func (r *seededReader) Read(p []byte) (int, error) {
	clear(p)
	r.c.XORKeyStream(p, p)
	return len(p), nil
}

// memReplay is an in-memory ReplayChecker that counts its calls and
// remembers the epoch of each tag.
type memReplay struct {
	seen  map[[TagSize]byte]uint32
	calls int
	err   error
}

func newMemReplay() *memReplay { return &memReplay{seen: map[[TagSize]byte]uint32{}} }

func (m *memReplay) CheckAndAdd(epoch uint32, tag [TagSize]byte) (bool, error) {
	m.calls++
	if m.err != nil {
		return false, m.err
	}
	if _, ok := m.seen[tag]; ok {
		return false, nil
	}
	m.seen[tag] = epoch
	return true, nil
}

// fresh is a ReplayChecker that accepts everything (benchmarks, fuzzing).
type fresh struct{}

func (fresh) CheckAndAdd(uint32, [TagSize]byte) (bool, error) { return true, nil }

// sentAt is the clock reading of msg's timestamp: a hop whose clock reads it
// is in the packet's epoch.
func sentAt(msg Message) time.Time { return time.UnixMilli(int64(msg.Timestamp)) }

// t0 is the hop clock of tests whose messages carry timestamp 0 (epoch 0).
var t0 = time.UnixMilli(0)

// node is a test node: its prepared private key and its parsed public key.
type node struct {
	priv *PrivateKey
	pub  *PublicKey
}

func newNodes(t testing.TB, rand io.Reader, n int) []node {
	t.Helper()
	nodes := make([]node, n)
	for i := range nodes {
		var b [32]byte
		if _, err := io.ReadFull(rand, b[:]); err != nil {
			t.Fatal(err)
		}
		priv, err := NewPrivateKey(b[:])
		if err != nil {
			t.Fatal(err)
		}
		enc := priv.PublicKey().Bytes()
		pub, err := ParsePublicKey(enc[:])
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node{priv, pub}
	}
	return nodes
}

func pubs(nodes []node) []*PublicKey {
	out := make([]*PublicKey, len(nodes))
	for i, n := range nodes {
		out[i] = n.pub
	}
	return out
}

// testPoR is a recognisable proof-of-relay field for relayer i.
func testPoR(n int) [][PoRSize]byte {
	por := make([][PoRSize]byte, n-1)
	for i := range por {
		for j := range por[i] {
			por[i][j] = byte(0xa0 + i)
		}
		por[i][0] = byte(i)
	}
	return por
}

// build seals msg along a route over nodes and returns the packet and the
// route.
func build(t testing.TB, rand io.Reader, nodes []node, msg Message) ([]byte, *Route) {
	t.Helper()
	r, err := NewRoute(rand, pubs(nodes))
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := r.Seal(msg, testPoR(len(nodes)))
	if err != nil {
		t.Fatal(err)
	}
	return pkt, r
}

func TestSizes(t *testing.T) {
	if MaxMessageSize < 500 {
		t.Errorf("MaxMessageSize = %d, want at least 500", MaxMessageSize)
	}
	if RoutingInfoSize != 190 || HeaderSize != 841 || PayloadSize != 510 || PacketSize != 1351 {
		t.Errorf("sizes changed: routing info %d, header %d, payload %d, packet %d; update PROTOCOL.md §3 and the vectors",
			RoutingInfoSize, HeaderSize, PayloadSize, PacketSize)
	}
}

func TestRoundTrip(t *testing.T) {
	maxText := bytes.Repeat([]byte("m"), MaxMessageSize)
	texts := map[string][]byte{"empty": nil, "short": []byte("hello, mixnet"), "max": maxText}
	for hops := 1; hops <= MaxHops; hops++ {
		for name, text := range texts {
			t.Run(fmt.Sprintf("%dhops/%s", hops, name), func(t *testing.T) {
				rand := newSeededReader(t.Name())
				nodes := newNodes(t, rand, hops)
				msg := Message{Text: text, Timestamp: 1_700_000_000_123}
				pkt, route := build(t, rand, nodes, msg)
				por := testPoR(hops)
				for i, n := range nodes {
					if len(pkt) != PacketSize {
						t.Fatalf("hop %d: packet is %d bytes, want %d", i, len(pkt), PacketSize)
					}
					replay := newMemReplay()
					p, err := Peel(n.priv, pkt, sentAt(msg), replay)
					if err != nil {
						t.Fatalf("hop %d: Peel: %v", i, err)
					}
					if p.Secret != route.Secret(i) {
						t.Errorf("hop %d: secret differs from the sender's", i)
					}
					if e, ok := replay.seen[p.Tag]; !ok || replay.calls != 1 || e != Epoch(sentAt(msg)) || p.Epoch != e {
						t.Errorf("hop %d: tag not recorded once with the packet's epoch", i)
					}
					last := i == hops-1
					if p.Final != last {
						t.Fatalf("hop %d: Final = %v, want %v", i, p.Final, last)
					}
					if last {
						if !bytes.Equal(p.Message.Text, msg.Text) || p.Message.Timestamp != msg.Timestamp {
							t.Errorf("message = %q @%d, want %q @%d", p.Message.Text, p.Message.Timestamp, msg.Text, msg.Timestamp)
						}
						if p.Next != nil || p.NextHop != ([PublicKeySize]byte{}) || p.PoR != ([PoRSize]byte{}) {
							t.Errorf("recipient got relay fields")
						}
						break
					}
					if p.NextHop != nodes[i+1].pub.Bytes() {
						t.Errorf("hop %d: next hop %x, want %x", i, p.NextHop, nodes[i+1].pub.Bytes())
					}
					if p.PoR != por[i] {
						t.Errorf("hop %d: PoR %x, want %x", i, p.PoR, por[i])
					}
					if p.Message.Text != nil || p.Message.Timestamp != 0 {
						t.Errorf("hop %d: relayer got the message", i)
					}
					if len(text) > 4 && bytes.Contains(p.Next, text[:5]) {
						t.Errorf("hop %d: next packet contains message text", i)
					}
					if bytes.Equal(p.Next[offPayload:], pkt[offPayload:]) {
						t.Errorf("hop %d: payload not re-encrypted", i)
					}
					pkt = p.Next
				}
			})
		}
	}
}

// TestRelayersLearnNothingOfTheMessage checks every relayer's Peeled for the
// message text and timestamp, field by field.
func TestRelayersLearnNothingOfTheMessage(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 4)
	text := []byte("a secret meeting at noon, bring the documents")
	msg := Message{Text: text, Timestamp: 0x0000_0192_3456_789a}
	pkt, _ := build(t, rand, nodes, msg)
	ts := []byte{0x01, 0x92, 0x34, 0x56, 0x78, 0x9a}
	for i, n := range nodes[:3] {
		p, err := Peel(n.priv, pkt, sentAt(msg), newMemReplay())
		if err != nil {
			t.Fatal(err)
		}
		if p.Final || p.Message.Text != nil || p.Message.Timestamp != 0 {
			t.Fatalf("relayer %d got %+v", i, p.Message)
		}
		for name, b := range map[string][]byte{"Next": p.Next, "PoR": p.PoR[:], "NextHop": p.NextHop[:], "Secret": p.Secret[:], "Tag": p.Tag[:]} {
			if bytes.Contains(b, text[:8]) || bytes.Contains(b, ts) {
				t.Errorf("relayer %d: %s contains message data", i, name)
			}
		}
		pkt = p.Next
	}
}

func TestWrongKey(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 4)
	pkt, _ := build(t, rand, nodes[:3], Message{Text: []byte("x")})
	for _, who := range []int{1, 2, 3} { // a later hop, the recipient, a stranger
		replay := newMemReplay()
		if _, err := Peel(nodes[who].priv, pkt, t0, replay); !errors.Is(err, ErrMAC) {
			t.Errorf("node %d: err = %v, want ErrMAC", who, err)
		}
		if replay.calls != 0 {
			t.Errorf("node %d: replay store consulted for a packet with a bad MAC", who)
		}
	}
}

// TestBitFlips flips every bit of a 3-hop packet (2 relayers and the
// recipient) and of the packet the first hop forwards. A bit flipped in the
// header (ephemeral key, routing information, MAC) is rejected by the hop that
// receives it, before its replay store is touched. A bit flipped in the
// payload passes the relayers, whose MACs cover the header only (PROTOCOL.md
// §3.4), and is rejected by the recipient, whose end-to-end tag covers the
// payload: ErrPayload, with the packet's header valid (Final set, its tag
// recorded), so that the recipient can still acknowledge it.
func TestBitFlips(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	pkt, _ := build(t, rand, nodes, Message{Text: []byte("flip me"), Timestamp: 42})
	p, err := Peel(nodes[0].priv, pkt, t0, newMemReplay())
	if err != nil {
		t.Fatal(err)
	}
	for hop, in := range [][]byte{pkt, p.Next} {
		bad := bytes.Clone(in)
		replay := newMemReplay()
		for pos := range bad {
			for bit := range 8 {
				bad[pos] ^= 1 << bit
				if pos < HeaderSize {
					_, err := Peel(nodes[hop].priv, bad, t0, replay)
					ok := errors.Is(err, ErrMAC) || (pos < EphemeralKeySize && errors.Is(err, ErrBadPoint))
					if !ok {
						t.Fatalf("hop %d, header byte %d, bit %d: err = %v, want ErrMAC", hop, pos, bit, err)
					}
				} else {
					peelPayloadFlip(t, nodes[hop:], bad, pos, bit)
				}
				bad[pos] ^= 1 << bit
			}
		}
		if replay.calls != 0 {
			t.Errorf("hop %d: replay store consulted %d times for altered headers", hop, replay.calls)
		}
		if _, err := Peel(nodes[hop].priv, bad, t0, replay); err != nil {
			t.Errorf("hop %d: unaltered packet rejected after the loop: %v", hop, err)
		}
	}
}

// peelPayloadFlip peels pkt, whose payload has one bit flipped, along the
// remaining hops: every relayer passes it on, the recipient refuses it with
// ErrPayload after recording its tag.
func peelPayloadFlip(t *testing.T, hops []node, pkt []byte, pos, bit int) {
	t.Helper()
	for i, n := range hops {
		replay := newMemReplay()
		p, err := Peel(n.priv, pkt, t0, replay)
		if i < len(hops)-1 {
			if err != nil {
				t.Fatalf("payload byte %d, bit %d: relayer refused it: %v", pos, bit, err)
			}
			pkt = p.Next
			continue
		}
		if !errors.Is(err, ErrPayload) || !p.Final || replay.calls != 1 || p.Tag == ([TagSize]byte{}) || p.Message.Text != nil {
			t.Fatalf("payload byte %d, bit %d: recipient: err = %v, %+v after %d replay checks; want ErrPayload with the header's tag recorded", pos, bit, err, p, replay.calls)
		}
	}
}

func TestPeelSize(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	pkt, _ := build(t, rand, nodes, Message{Text: []byte("x")})
	for name, b := range map[string][]byte{
		"nil":       nil,
		"empty":     {},
		"header":    pkt[:HeaderSize],
		"truncated": pkt[:PacketSize-1],
		"oversized": append(bytes.Clone(pkt), 0),
		"double":    append(bytes.Clone(pkt), pkt...),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Peel(nodes[0].priv, b, t0, newMemReplay()); !errors.Is(err, ErrSize) {
				t.Errorf("err = %v, want ErrSize", err)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	pkt, _ := build(t, rand, nodes, Message{Text: []byte("once")})
	replay := newMemReplay()
	first, err := Peel(nodes[0].priv, pkt, t0, replay)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Peel(nodes[0].priv, pkt, t0, replay); !errors.Is(err, ErrReplay) {
		t.Fatalf("second Peel: err = %v, want ErrReplay", err)
	}
	// The forwarded packet is new to the next hop, once.
	next := newMemReplay()
	if _, err := Peel(nodes[1].priv, first.Next, t0, next); err != nil {
		t.Fatal(err)
	}
	if _, err := Peel(nodes[1].priv, first.Next, t0, next); !errors.Is(err, ErrReplay) {
		t.Fatalf("recipient: err = %v, want ErrReplay", err)
	}
	// A second packet on the same route has different tags.
	pkt2, _ := build(t, rand, nodes, Message{Text: []byte("once")})
	if _, err := Peel(nodes[0].priv, pkt2, t0, replay); err != nil {
		t.Fatalf("a fresh packet: %v", err)
	}
}

func TestReplayStoreError(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 1)
	pkt, _ := build(t, rand, nodes, Message{Text: []byte("x")})
	storeErr := errors.New("disk full")
	_, err := Peel(nodes[0].priv, pkt, t0, &memReplay{err: storeErr})
	if !errors.Is(err, storeErr) || errors.Is(err, ErrReplay) {
		t.Fatalf("err = %v, want the store's error", err)
	}
}

func TestBadEphemeralKey(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 1)
	pkt, _ := build(t, rand, nodes, Message{Text: []byte("x")})
	for name, mutate := range map[string]func(b []byte){
		"compressed prefix": func(b []byte) { b[0] = 2 },
		"hybrid prefix":     func(b []byte) { b[0] = 6 | (b[64] & 1) },
		"x off curve":       func(b []byte) { b[10] ^= 1 },
		"x = p":             func(b []byte) { copy(b[1:33], bytes.Repeat([]byte{0xff}, 32)) },
		"zero point":        func(b []byte) { clear(b[1:65]) },
	} {
		t.Run(name, func(t *testing.T) {
			bad := bytes.Clone(pkt)
			mutate(bad)
			if _, err := Peel(nodes[0].priv, bad, t0, newMemReplay()); !errors.Is(err, ErrBadPoint) {
				t.Errorf("err = %v, want ErrBadPoint", err)
			}
		})
	}
}

func TestSealErrors(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	newRoute := func() *Route {
		r, err := NewRoute(rand, pubs(nodes))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tooLong := Message{Text: make([]byte, MaxMessageSize+1)}
	_, err := newRoute().Seal(tooLong, testPoR(3))
	if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "500 bytes") {
		t.Errorf("too long: err = %v, want ErrMessageTooLarge stating 500 bytes", err)
	}
	for _, n := range []int{0, 1, 3} {
		if _, err := newRoute().Seal(Message{}, testPoR(n+1)); !errors.Is(err, ErrPoRCount) {
			t.Errorf("%d PoR fields: err = %v, want ErrPoRCount", n, err)
		}
	}
	r := newRoute()
	if _, err := r.Seal(Message{}, testPoR(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seal(Message{}, testPoR(3)); !errors.Is(err, ErrSealed) {
		t.Errorf("second Seal: err = %v, want ErrSealed", err)
	}
	// A refused Seal leaves the route usable.
	r = newRoute()
	if _, err := r.Seal(tooLong, testPoR(3)); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatal(err)
	}
	if _, err := r.Seal(Message{}, testPoR(3)); err != nil {
		t.Errorf("Seal after a refused one: %v", err)
	}
}

func TestNewRouteErrors(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, MaxHops+1)
	if _, err := NewRoute(rand, nil); !errors.Is(err, ErrEmptyRoute) {
		t.Errorf("no hops: err = %v, want ErrEmptyRoute", err)
	}
	if _, err := NewRoute(rand, pubs(nodes)); !errors.Is(err, ErrTooManyHops) {
		t.Errorf("%d hops: err = %v, want ErrTooManyHops", len(nodes), err)
	}
	for name, hops := range map[string][]*PublicKey{"nil": {nodes[0].pub, nil}, "zero": {{}}} {
		if _, err := NewRoute(rand, hops); !errors.Is(err, ErrBadPoint) {
			t.Errorf("%s key: err = %v, want ErrBadPoint", name, err)
		}
	}
	if _, err := NewRoute(bytes.NewReader(make([]byte, 40)), pubs(nodes[:2])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short reader: err = %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := NewRoute(bytes.NewReader(make([]byte, 4096)), pubs(nodes[:1])); !errors.Is(err, errRandom) {
		t.Errorf("all-zero reader: err = %v, want errRandom", err)
	}
}

func TestKeys(t *testing.T) {
	n := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
	var order [32]byte
	fmt.Sscanf(n, "%x", &order)
	for name, b := range map[string][]byte{
		"short": make([]byte, 31), "zero": make([]byte, 32), "n": order[:], "all ones": bytes.Repeat([]byte{0xff}, 32),
	} {
		if _, err := NewPrivateKey(b); !errors.Is(err, ErrBadKey) {
			t.Errorf("private key %s: err = %v, want ErrBadKey", name, err)
		}
	}
	one := make([]byte, 32)
	one[31] = 1
	k, err := NewPrivateKey(one)
	if err != nil {
		t.Fatal(err)
	}
	const g = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	if got := fmt.Sprintf("%x", k.PublicKey().Bytes()); got != g {
		t.Errorf("1·G = %s, want %s", got, g)
	}
	gb := k.PublicKey().Bytes()
	for name, b := range map[string][]byte{
		"empty": nil, "uncompressed": append([]byte{4}, make([]byte, 64)...),
		"prefix 4": append([]byte{4}, gb[1:]...), "not on curve": append([]byte{2}, make([]byte, 32)...),
		"x = p": append([]byte{2}, bytes.Repeat([]byte{0xff}, 32)...),
	} {
		if _, err := ParsePublicKey(b); !errors.Is(err, ErrBadPoint) {
			t.Errorf("public key %s: err = %v, want ErrBadPoint", name, err)
		}
	}
	p, err := ParsePublicKey(gb[:])
	if err != nil || p.Bytes() != gb {
		t.Errorf("ParsePublicKey(G) = %v, %v", p, err)
	}
}

// TestFinalHopDecoding covers a recipient's routing information and payload
// under a valid header MAC: only a faulty sender, or for the payload an
// alteration on the way, produces the bad ones.
func TestFinalHopDecoding(t *testing.T) {
	var keys hopKeys
	for i := range keys.payload {
		keys.payload[i] = byte(i)
	}
	plain := make([]byte, PayloadSize)
	plain[1] = 3
	copy(plain[10:], "abc")
	// final seals plain under the recipient's payload key and returns its
	// routing information (kind forward, the tag) and payload.
	final := func(plain []byte) (ri, payload []byte) {
		ri = make([]byte, RoutingInfoSize)
		copy(ri[riEpoch:riPoR], []byte{0xff, 0xff, 0xff, 0xff})
		ri[riKind] = kindForward
		sealed := newAEAD(&keys.payload).Seal(nil, zeroNonce[:], plain, nil)
		copy(ri[riFinal:riFinalEnd], sealed[PayloadSize:])
		return ri, sealed[:PayloadSize]
	}
	peel := func(ri, payload []byte) (Peeled, error) {
		return finalHop(Peeled{Tag: [TagSize]byte{1}}, &keys, ri, payload, make([]byte, PayloadSize+MACSize))
	}
	ri, payload := final(plain)
	if p, err := peel(ri, payload); err != nil || string(p.Message.Text) != "abc" || !p.Final || p.Reply {
		t.Fatalf("good payload: %v, %+v", err, p)
	}
	tests := map[string]struct {
		plain    func(pl []byte) // before sealing
		ri, wire func(b []byte)  // after
	}{
		"routing info key":       {ri: func(ri []byte) { ri[riEpoch-1] = 1 }},
		"kind 0":                 {ri: func(ri []byte) { ri[riKind] = 0 }},
		"kind 3":                 {ri: func(ri []byte) { ri[riKind] = 3 }},
		"after the tag":          {ri: func(ri []byte) { ri[riFinalEnd] = 1 }},
		"routing info end":       {ri: func(ri []byte) { ri[RoutingInfoSize-1] = 1 }},
		"tag altered":            {ri: func(ri []byte) { ri[riFinal] ^= 0x80 }},
		"payload altered":        {wire: func(pl []byte) { pl[PayloadSize-1] ^= 1 }},
		"length over max":        {plain: func(pl []byte) { pl[0], pl[1] = 0x01, 0xf5 }},
		"length 0xffff":          {plain: func(pl []byte) { pl[0], pl[1] = 0xff, 0xff }},
		"non-zero padding":       {plain: func(pl []byte) { pl[PayloadSize-1] = 1 }},
		"padding after text":     {plain: func(pl []byte) { pl[13] = 'd' }},
		"drop bit with a length": {plain: func(pl []byte) { pl[0] |= 0x80 }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pl := bytes.Clone(plain)
			if tc.plain != nil {
				tc.plain(pl)
			}
			ri, payload := final(pl)
			if tc.ri != nil {
				tc.ri(ri)
			}
			if tc.wire != nil {
				tc.wire(payload)
			}
			p, err := peel(ri, payload)
			if !errors.Is(err, ErrPayload) || !p.Final || p.Tag != ([TagSize]byte{1}) || p.Message.Text != nil {
				t.Errorf("err = %v, %+v; want ErrPayload with the hop's view", err, p)
			}
		})
	}
}

// TestRoutingInfoLooksTheSameAtEveryPosition checks what a hop sees beyond
// its own routing information: ciphertext for later hops at a relayer, random
// fill and filler at the recipient. No block may be zero, or the position and
// the route length would show.
func TestRoutingInfoLooksTheSameAtEveryPosition(t *testing.T) {
	for hops := 1; hops <= MaxHops; hops++ {
		rand := newSeededReader(fmt.Sprint(t.Name(), hops))
		nodes := newNodes(t, rand, hops)
		pkt, _ := build(t, rand, nodes, Message{Text: []byte("x")})
		for i, n := range nodes {
			keys := hopKeysFor(t, n.priv, pkt)
			stream := make([]byte, streamSize)
			c, _ := chacha20.NewUnauthenticatedCipher(keys.header[:], zeroNonce[:])
			c.XORKeyStream(stream[:RoutingSize], pkt[offRouting:offMAC])
			for b := 1; b < MaxHops; b++ {
				blk := stream[b*RoutingInfoSize : (b+1)*RoutingInfoSize]
				if allZero(blk[:16]) {
					t.Errorf("%d hops, hop %d: decrypted block %d starts with zeros", hops, i, b)
				}
			}
			p, err := Peel(n.priv, pkt, t0, newMemReplay())
			if err != nil {
				t.Fatal(err)
			}
			pkt = p.Next
		}
	}
}

func hopKeysFor(t *testing.T, k *PrivateKey, pkt []byte) hopKeys {
	t.Helper()
	x, y, ok := parseEphemeral(pkt[:EphemeralKeySize])
	if !ok {
		t.Fatal("bad ephemeral key")
	}
	point, _ := ecdh(&k.scalar, x, y)
	s := sharedSecret(&point, pkt[:EphemeralKeySize], &k.pub.compressed)
	return deriveKeys(&s)
}

// TestDeriveKeys checks the allocation-free HKDF against crypto/hkdf.
func TestDeriveKeys(t *testing.T) {
	for i := range 32 {
		var s [SecretSize]byte
		for j := range s {
			s[j] = byte(i*37 + j*11)
		}
		okm, err := hkdf.Key(sha256.New, s[:], nil, keysLabel, 128)
		if err != nil {
			t.Fatal(err)
		}
		k := deriveKeys(&s)
		if string(k.header[:]) != string(okm[:32]) || string(k.payload[:]) != string(okm[32:64]) ||
			string(k.mac[:]) != string(okm[64:96]) || string(k.tag[:]) != string(okm[96:]) {
			t.Fatalf("secret %x: keys differ from crypto/hkdf", s)
		}
	}
}

// TestEpochWindow peels a packet at hop clocks around its creation time: a
// hop accepts it while its epoch is within EpochSkew of the packet's, and
// refuses it with ErrExpired, before the replay store is consulted, outside.
// The recipient checks the window too.
func TestEpochWindow(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	sent := time.Date(2026, 11, 24, 5, 13, 0, 0, time.UTC) // 3 minutes into its epoch
	msg := Message{Text: []byte("on time"), Timestamp: uint64(sent.UnixMilli())}
	start := sent.Truncate(EpochLength) // Truncate works on absolute time: the epoch's start
	if Epoch(start) != Epoch(sent) || Epoch(start.Add(-time.Millisecond)) != Epoch(sent)-1 {
		t.Fatalf("test setup: %v does not start the epoch of %v", start, sent)
	}
	tests := []struct {
		name string
		now  time.Time
		ok   bool
	}{
		{"same epoch", sent, true},
		{"next epoch, last millisecond", start.Add(2*EpochLength - time.Millisecond), true},
		{"sender a little ahead, previous epoch", start.Add(-EpochLength), true},
		{"two epochs later", start.Add(2 * EpochLength), false},
		{"a day later", sent.Add(24 * time.Hour), false},
		{"sender two epochs ahead", start.Add(-time.Millisecond - EpochLength), false},
		{"hop clock at 1970", time.Unix(0, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkt, _ := build(t, rand, nodes, msg)
			for hop, n := range nodes {
				replay := newMemReplay()
				p, err := Peel(n.priv, pkt, tt.now, replay)
				if !tt.ok {
					if !errors.Is(err, ErrExpired) || replay.calls != 0 {
						t.Fatalf("hop %d: err = %v after %d replay checks, want ErrExpired before any", hop, err, replay.calls)
					}
					// The packet itself is intact: in its window the same hop takes it.
					if _, err := Peel(n.priv, pkt, sent, replay); err != nil {
						t.Fatalf("hop %d: refused in its window after ErrExpired: %v", hop, err)
					}
					break
				}
				if err != nil {
					t.Fatalf("hop %d: %v", hop, err)
				}
				if p.Epoch != Epoch(sent) {
					t.Errorf("hop %d: epoch %d, want %d", hop, p.Epoch, Epoch(sent))
				}
				pkt = p.Next
			}
		})
	}
}

func TestEpoch(t *testing.T) {
	for _, tt := range []struct {
		t    time.Time
		want uint32
	}{
		{time.UnixMilli(0), 0},
		{time.UnixMilli(-1), 0},
		{time.UnixMilli(599_999), 0},
		{time.UnixMilli(600_000), 1},
		{time.UnixMilli(1_767_225_600_000), 2_945_376},
		{time.UnixMilli(math.MaxInt64), math.MaxUint32},
	} {
		if got := Epoch(tt.t); got != tt.want {
			t.Errorf("Epoch(%d ms) = %d, want %d", tt.t.UnixMilli(), got, tt.want)
		}
	}
	for _, tt := range []struct {
		e, now  uint32
		expired bool
	}{
		{10, 10, false}, {10, 11, false}, {10, 12, true}, {11, 10, false},
		{math.MaxUint32, 0, false}, {0, math.MaxUint32, true}, {math.MaxUint32 - 1, math.MaxUint32, false},
	} {
		if got := Expired(tt.e, tt.now); got != tt.expired {
			t.Errorf("Expired(%d, %d) = %v, want %v", tt.e, tt.now, got, tt.expired)
		}
	}
}

// TestSealTimestampRange: a timestamp whose epoch a header cannot carry is
// refused before anything is built; the last one it can carry is sealed.
func TestSealTimestampRange(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	lastMs := uint64(math.MaxUint32)*uint64(EpochLength/time.Millisecond) + uint64(EpochLength/time.Millisecond) - 1
	for _, ts := range []uint64{lastMs + 1, math.MaxUint64} {
		r, err := NewRoute(rand, pubs(nodes))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Seal(Message{Timestamp: ts}, testPoR(2)); !errors.Is(err, ErrTimestamp) {
			t.Errorf("timestamp %d: err = %v, want ErrTimestamp", ts, err)
		}
	}
	msg := Message{Text: []byte("far future"), Timestamp: lastMs}
	pkt, _ := build(t, rand, nodes, msg)
	p, err := Peel(nodes[0].priv, pkt, time.UnixMilli(int64(lastMs)), newMemReplay())
	if err != nil || p.Epoch != math.MaxUint32 {
		t.Fatalf("last epoch: %d, %v", p.Epoch, err)
	}
}

// TestDrop: a drop reaches its recipient marked as one, without text; relayers see nothing of
// the mark (their packets are the same size and their peel the same); a drop with text is
// refused before anything is built; a payload whose length field has the drop bit and a length
// is malformed.
func TestDrop(t *testing.T) {
	for hops := 1; hops <= MaxHops; hops++ {
		rand := newSeededReader(fmt.Sprintf("drop %d", hops))
		nodes := newNodes(t, rand, hops)
		msg := Message{Timestamp: 1_700_000_000_123, Drop: true}
		pkt, _ := build(t, rand, nodes, msg)
		for i, n := range nodes {
			p, err := Peel(n.priv, pkt, sentAt(msg), newMemReplay())
			if err != nil {
				t.Fatalf("%d hops, hop %d: %v", hops, i, err)
			}
			if i < hops-1 {
				if p.Final || p.Message.Drop {
					t.Fatalf("%d hops: relayer %d sees the drop", hops, i)
				}
				pkt = p.Next
				continue
			}
			if !p.Final || !p.Message.Drop || len(p.Message.Text) != 0 || p.Message.Timestamp != msg.Timestamp {
				t.Fatalf("%d hops: recipient got %+v", hops, p.Message)
			}
		}
	}
	rand := newSeededReader("drop with text")
	nodes := newNodes(t, rand, 2)
	r, err := NewRoute(rand, pubs(nodes))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seal(Message{Text: []byte("x"), Drop: true}, testPoR(2)); !errors.Is(err, ErrDropText) {
		t.Fatalf("drop with text: %v", err)
	}
	payload := make([]byte, PayloadSize)
	binary.BigEndian.PutUint16(payload[0:2], dropFlag|1)
	payload[10] = 'x'
	if _, err := decodeMessage(payload); !errors.Is(err, ErrPayload) {
		t.Fatalf("drop bit with a length: %v", err)
	}
	binary.BigEndian.PutUint16(payload[0:2], dropFlag)
	payload[10] = 0
	if m, err := decodeMessage(payload); err != nil || !m.Drop {
		t.Fatalf("a well-formed drop payload: %+v %v", m, err)
	}
}

// TestFramed: the framed mark reaches the recipient with the text, on a forward packet and on a
// reply; a relayer's packet is the same size either way; a framed drop is refused and a payload
// with both bits is malformed.
func TestFramed(t *testing.T) {
	rand := newSeededReader("framed")
	nodes := newNodes(t, rand, 3)
	msg := Message{Timestamp: 1_700_000_000_123, Text: []byte("\x11frame"), Framed: true}
	pkt, _ := build(t, rand, nodes, msg)
	for i, n := range nodes {
		p, err := Peel(n.priv, pkt, sentAt(msg), newMemReplay())
		if err != nil {
			t.Fatalf("hop %d: %v", i, err)
		}
		if i < len(nodes)-1 {
			if len(p.Next) != PacketSize {
				t.Fatalf("relayer %d forwards %d bytes", i, len(p.Next))
			}
			pkt = p.Next
			continue
		}
		if !p.Message.Framed || string(p.Message.Text) != "\x11frame" || p.Message.Drop {
			t.Fatalf("recipient got %+v", p.Message)
		}
	}
	plain := Message{Timestamp: 1, Text: []byte("x")}
	payload := make([]byte, PayloadSize)
	encodeMessage(payload, plain)
	if m, err := decodeMessage(payload); err != nil || m.Framed {
		t.Fatalf("a plain text decodes as %+v, %v", m, err)
	}
	r, err := NewRoute(rand, pubs(nodes))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seal(Message{Drop: true, Framed: true}, testPoR(3)); !errors.Is(err, ErrDropText) {
		t.Fatalf("a framed drop: %v", err)
	}
	clear(payload)
	binary.BigEndian.PutUint16(payload[0:2], dropFlag|framedFlag)
	if _, err := decodeMessage(payload); !errors.Is(err, ErrPayload) {
		t.Fatalf("drop and framed bits together: %v", err)
	}
}
