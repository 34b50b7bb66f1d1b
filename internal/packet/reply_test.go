package packet

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// replyAt is the creation time of the tests' reply blocks.
var replyAt = time.Date(2026, 11, 24, 5, 13, 0, 0, time.UTC)

// newReplyBlock has the last of nodes build a reply block over the others and
// returns it encoded and decoded, with the creator's keys.
func newReplyBlock(t testing.TB, rand *seededReader, nodes []node) (*ReplyBlock, *ReplyKeys) {
	t.Helper()
	r, err := NewRoute(rand, pubs(nodes))
	if err != nil {
		t.Fatal(err)
	}
	b, k, err := r.SealReply(rand, replyAt, testPoR(len(nodes)))
	if err != nil {
		t.Fatal(err)
	}
	b.Amount = uint8(len(nodes) - 1)
	rand.Read(b.Challenge[:])
	rand.Read(b.AckCommitment[:])
	enc, err := b.MarshalBinary()
	if err != nil || len(enc) != ReplyBlockSize {
		t.Fatalf("block of %d bytes: %v", len(enc), err)
	}
	var got ReplyBlock
	if err := got.UnmarshalBinary(enc); err != nil || got != *b {
		t.Fatalf("block does not survive its encoding: %v", err)
	}
	kb, err := k.MarshalBinary()
	if err != nil || len(kb) != ReplyKeysSize {
		t.Fatalf("keys of %d bytes: %v", len(kb), err)
	}
	var keys ReplyKeys
	if err := keys.UnmarshalBinary(kb); err != nil || keys != *k {
		t.Fatalf("keys do not survive their encoding: %v", err)
	}
	return &got, &keys
}

func TestReplySizes(t *testing.T) {
	if ReplyBlockSize != 964 || ReplyKeysSize != 150 || MaxReplySize != 472 {
		t.Errorf("reply sizes changed: block %d, keys %d, text %d; update PROTOCOL.md §3.9 and the vectors",
			ReplyBlockSize, ReplyKeysSize, MaxReplySize)
	}
}

// TestReplyRoundTrip: over 1 to 3 relayers, a replier seals a message with the
// decoded block; every relayer peels it like a forward packet (a next hop, a
// next packet of the same size, no message), and the creator gets a reply
// with the block's id, which OpenReply reads byte for byte.
func TestReplyRoundTrip(t *testing.T) {
	texts := map[string]Message{
		"empty": {Timestamp: 1}, "short": {Text: []byte("a reply"), Timestamp: 1_700_000_000_123},
		"max": {Text: bytes.Repeat([]byte("r"), MaxReplySize), Timestamp: 7}, "drop": {Drop: true, Timestamp: 9},
	}
	for relayers := 1; relayers < MaxHops; relayers++ {
		for name, msg := range texts {
			t.Run(fmt.Sprintf("%d relayers/%s", relayers, name), func(t *testing.T) {
				rand := newSeededReader(t.Name())
				nodes := newNodes(t, rand, relayers+1)
				block, keys := newReplyBlock(t, rand, nodes)
				if block.FirstHop != nodes[0].pub.Bytes() || block.Epoch != Epoch(replyAt) || keys.Epoch() != block.Epoch {
					t.Fatalf("block names first hop %x, epoch %d", block.FirstHop, block.Epoch)
				}
				pkt, err := block.Seal(rand, msg)
				if err != nil {
					t.Fatal(err)
				}
				if len(pkt) != PacketSize || !bytes.Equal(pkt[:HeaderSize], block.Header[:]) {
					t.Fatal("the reply is not the block's header and a payload")
				}
				if len(msg.Text) > 4 && bytes.Contains(pkt, msg.Text[:5]) {
					t.Fatal("reply text in the clear")
				}
				por := testPoR(relayers + 1)
				now := replyAt.Add(5 * time.Minute)
				for i, n := range nodes {
					p, err := Peel(n.priv, pkt, now, newMemReplay())
					if err != nil {
						t.Fatalf("hop %d: %v", i, err)
					}
					if i < relayers {
						if p.Final || p.Reply || p.Payload != nil || len(p.Next) != PacketSize || p.PoR != por[i] ||
							p.NextHop != nodes[i+1].pub.Bytes() || p.Epoch != block.Epoch {
							t.Fatalf("relayer %d: %+v", i, p)
						}
						pkt = p.Next
						continue
					}
					if !p.Final || !p.Reply || p.ReplyID != keys.ID() || p.Message.Text != nil || len(p.Payload) != PayloadSize {
						t.Fatalf("creator: %+v", p)
					}
					got, err := OpenReply(keys, &p)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Text, msg.Text) || got.Timestamp != msg.Timestamp || got.Drop != msg.Drop {
						t.Fatalf("opened %+v, want %+v", got, msg)
					}
				}
			})
		}
	}
}

// TestReplyAltered: a bit flipped in a reply's payload on its way passes the
// relayers and is refused by OpenReply at the creator; a bit flipped in its
// header is refused by the first hop.
func TestReplyAltered(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	block, keys := newReplyBlock(t, rand, nodes)
	pkt, err := block.Seal(rand, Message{Text: []byte("do not touch"), Timestamp: 3})
	if err != nil {
		t.Fatal(err)
	}
	for pos := range PacketSize {
		for bit := range 8 {
			bad := bytes.Clone(pkt)
			bad[pos] ^= 1 << bit
			p, err := Peel(nodes[0].priv, bad, replyAt, newMemReplay())
			if pos < HeaderSize {
				if !errors.Is(err, ErrMAC) && !(pos < EphemeralKeySize && errors.Is(err, ErrBadPoint)) {
					t.Fatalf("header byte %d, bit %d: err = %v, want ErrMAC", pos, bit, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("payload byte %d, bit %d: the relayer refused it: %v", pos, bit, err)
			}
			if p, err = Peel(nodes[1].priv, p.Next, replyAt, newMemReplay()); err != nil || !p.Reply {
				t.Fatalf("payload byte %d, bit %d: the creator: %v", pos, bit, err)
			}
			if _, err := OpenReply(keys, &p); !errors.Is(err, ErrPayload) {
				t.Fatalf("payload byte %d, bit %d: OpenReply: %v, want ErrPayload", pos, bit, err)
			}
		}
	}
}

// TestReplySingleUse: two replies sealed with one block carry the same header,
// so the first hop takes the first and refuses the second as a replay; their
// payloads differ (each seal draws its own nonce).
func TestReplySingleUse(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	block, _ := newReplyBlock(t, rand, nodes)
	first, err := block.Seal(rand, Message{Text: []byte("once"), Timestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := block.Seal(rand, Message{Text: []byte("once"), Timestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first[HeaderSize:], second[HeaderSize:]) {
		t.Fatal("two seals of one block share a payload")
	}
	replay := newMemReplay()
	if _, err := Peel(nodes[0].priv, first, replyAt, replay); err != nil {
		t.Fatal(err)
	}
	if _, err := Peel(nodes[0].priv, second, replyAt, replay); !errors.Is(err, ErrReplay) {
		t.Fatalf("second reply: %v, want ErrReplay", err)
	}
}

// TestReplyWindow: the block's header carries its creation epoch, so a reply
// is accepted while the hops' clocks are within EpochSkew of it (InWindow
// says so beforehand) and refused as expired after.
func TestReplyWindow(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 2)
	start := replyAt.Truncate(EpochLength)
	for _, tt := range []struct {
		now time.Time
		ok  bool
	}{
		{replyAt, true}, {start.Add(2*EpochLength - time.Millisecond), true}, {start.Add(-EpochLength), true},
		{start.Add(2 * EpochLength), false}, {replyAt.Add(time.Hour), false}, {start.Add(-EpochLength - time.Millisecond), false},
	} {
		block, _ := newReplyBlock(t, rand, nodes)
		if got := block.InWindow(tt.now); got != tt.ok {
			t.Errorf("at %v: InWindow = %v, want %v", tt.now, got, tt.ok)
		}
		pkt, err := block.Seal(rand, Message{Text: []byte("late?")})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Peel(nodes[0].priv, pkt, tt.now, newMemReplay())
		if tt.ok != (err == nil) || !tt.ok && !errors.Is(err, ErrExpired) {
			t.Errorf("at %v: Peel: %v", tt.now, err)
		}
	}
}

func TestReplyErrors(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	route := func(n int) *Route {
		r, err := NewRoute(rand, pubs(nodes[:n]))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, _, err := route(1).SealReply(rand, replyAt, nil); !errors.Is(err, ErrReplyRoute) {
		t.Errorf("no relayer: %v", err)
	}
	if _, _, err := route(3).SealReply(rand, replyAt, testPoR(2)); !errors.Is(err, ErrPoRCount) {
		t.Errorf("one PoR field for two relayers: %v", err)
	}
	if _, _, err := route(2).SealReply(rand, time.UnixMilli(-1), testPoR(2)); !errors.Is(err, ErrTimestamp) {
		t.Errorf("before 1970: %v", err)
	}
	r := route(3)
	if _, _, err := r.SealReply(rand, replyAt, testPoR(3)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.SealReply(rand, replyAt, testPoR(3)); !errors.Is(err, ErrSealed) {
		t.Errorf("second SealReply: %v", err)
	}
	if _, err := r.Seal(Message{}, testPoR(3)); !errors.Is(err, ErrSealed) {
		t.Errorf("Seal after SealReply: %v", err)
	}
	if _, _, err := route(2).SealReply(failingReader{}, replyAt, testPoR(2)); err == nil {
		t.Error("SealReply without randomness")
	}

	block, keys := newReplyBlock(t, rand, nodes)
	_, err := block.Seal(rand, Message{Text: make([]byte, MaxReplySize+1)})
	if !errors.Is(err, ErrReplyTooLarge) || !errors.Is(err, ErrMessageTooLarge) {
		t.Errorf("long reply: %v, want ErrReplyTooLarge, also ErrMessageTooLarge", err)
	}
	if _, err := block.Seal(rand, Message{Text: []byte("x"), Drop: true}); !errors.Is(err, ErrDropText) {
		t.Errorf("drop with text: %v", err)
	}
	if _, err := block.Seal(failingReader{}, Message{}); err == nil {
		t.Error("Seal without randomness")
	}

	// OpenReply with the wrong keys, or on what is not this block's reply.
	pkt, err := block.Seal(rand, Message{Text: []byte("for the right keys")})
	if err != nil {
		t.Fatal(err)
	}
	var p Peeled
	for _, n := range nodes {
		if p, err = Peel(n.priv, pkt, replyAt, newMemReplay()); err != nil {
			t.Fatal(err)
		}
		pkt = p.Next
	}
	_, other := newReplyBlock(t, rand, nodes)
	forward := Peeled{Final: true, Epoch: p.Epoch}
	wrongEpoch := p
	wrongEpoch.Epoch++
	short := p
	short.Payload = p.Payload[:PayloadSize-1]
	for name, tc := range map[string]struct {
		k *ReplyKeys
		p *Peeled
	}{"other block's keys": {other, &p}, "a forward packet": {keys, &forward}, "another epoch": {keys, &wrongEpoch}, "short payload": {keys, &short}} {
		if _, err := OpenReply(tc.k, tc.p); !errors.Is(err, ErrPayload) {
			t.Errorf("%s: %v, want ErrPayload", name, err)
		}
	}
	if m, err := OpenReply(keys, &p); err != nil || string(m.Text) != "for the right keys" {
		t.Fatalf("OpenReply after the refusals: %q, %v", m.Text, err)
	}
}

func TestReplyDecoding(t *testing.T) {
	rand := newSeededReader(t.Name())
	nodes := newNodes(t, rand, 3)
	block, keys := newReplyBlock(t, rand, nodes)
	good, _ := block.MarshalBinary()
	for name, mutate := range map[string]func([]byte) []byte{
		"empty":          func([]byte) []byte { return nil },
		"short":          func(b []byte) []byte { return b[:ReplyBlockSize-1] },
		"long":           func(b []byte) []byte { return append(b, 0) },
		"version 0":      func(b []byte) []byte { b[0] = 0; return b },
		"version 2":      func(b []byte) []byte { b[0] = 2; return b },
		"first hop 04":   func(b []byte) []byte { b[5] = 4; return b },
		"first hop zero": func(b []byte) []byte { clear(b[6:38]); return b },
		"ephemeral 02":   func(b []byte) []byte { b[ReplyBlockSize-HeaderSize] = 2; return b },
		"ephemeral off":  func(b []byte) []byte { b[ReplyBlockSize-HeaderSize+5] ^= 1; return b },
	} {
		var b ReplyBlock
		if err := b.UnmarshalBinary(mutate(bytes.Clone(good))); !errors.Is(err, ErrBadReplyBlock) {
			t.Errorf("block %s: %v, want ErrBadReplyBlock", name, err)
		}
		if b != (ReplyBlock{}) {
			t.Errorf("block %s: a refused decoding filled the block", name)
		}
	}
	kb, _ := keys.MarshalBinary()
	for name, mutate := range map[string]func([]byte) []byte{
		"empty":         func([]byte) []byte { return nil },
		"short":         func(b []byte) []byte { return b[:ReplyKeysSize-1] },
		"version 2":     func(b []byte) []byte { b[0] = 2; return b },
		"no relayer":    func(b []byte) []byte { b[21] = 0; return b },
		"four relayers": func(b []byte) []byte { b[21] = 4; return b },
		"unused key":    func(b []byte) []byte { b[21] = 1; return b }, // the second and third keys are set
	} {
		var k ReplyKeys
		if err := k.UnmarshalBinary(mutate(bytes.Clone(kb))); !errors.Is(err, ErrBadReplyKeys) {
			t.Errorf("keys %s: %v, want ErrBadReplyKeys", name, err)
		}
	}
}

// FuzzReplyBlock feeds arbitrary bytes to ReplyBlock.UnmarshalBinary, the
// decoder of what a replier receives from strangers: it never panics, and
// whatever it accepts re-encodes to the same bytes.
func FuzzReplyBlock(f *testing.F) {
	rand := newSeededReader("FuzzReplyBlock")
	nodes := newNodes(f, rand, 3)
	block, _ := newReplyBlock(f, rand, nodes)
	good, _ := block.MarshalBinary()
	f.Add(good)
	f.Add(good[:100])
	f.Add(make([]byte, ReplyBlockSize))
	v2 := bytes.Clone(good)
	v2[0] = 2
	f.Add(v2)
	f.Fuzz(func(t *testing.T, data []byte) {
		var b ReplyBlock
		if err := b.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrBadReplyBlock) {
				t.Fatalf("error %v is not ErrBadReplyBlock", err)
			}
			return
		}
		again, err := b.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, %v", again, err)
		}
	})
}

// FuzzReplyKeys does the same for ReplyKeys, which a node reads back from its
// store.
func FuzzReplyKeys(f *testing.F) {
	rand := newSeededReader("FuzzReplyKeys")
	for n := 2; n <= MaxHops; n++ {
		_, keys := newReplyBlock(f, rand, newNodes(f, rand, n))
		kb, _ := keys.MarshalBinary()
		f.Add(kb)
	}
	f.Add(make([]byte, ReplyKeysSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		var k ReplyKeys
		if err := k.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrBadReplyKeys) {
				t.Fatalf("error %v is not ErrBadReplyKeys", err)
			}
			return
		}
		again, err := k.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, %v", again, err)
		}
	})
}
