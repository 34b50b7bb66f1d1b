package packet

import (
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// ReplayChecker is the caller's replay store. CheckAndAdd records tag, the
// replay tag of a packet created in epoch, and reports whether it was new; it
// must do both atomically, so that of two copies of a packet peeled at once
// only one is fresh. Peel calls it only for an epoch within EpochSkew of its
// current one; the store must remember the tag until Expired(epoch, current
// epoch) and may forget it then, so it holds the tags of at most
// 2·EpochSkew+1 epochs. An error means the store failed; Peel then drops the
// packet.
type ReplayChecker interface {
	CheckAndAdd(epoch uint32, tag [TagSize]byte) (fresh bool, err error)
}

// Peeled is one hop's view of a packet it has peeled.
type Peeled struct {
	// Final is true at the recipient, false at a relayer.
	Final bool

	// NextHop is the SEC1 compressed public key of the node to forward Next
	// to (relayers only). It is authenticated by the MAC but not parsed:
	// look it up among known peers.
	NextHop [PublicKeySize]byte
	// Next is the packet to forward, PacketSize bytes (relayers only).
	Next []byte
	// PoR is the proof-of-relay field the sender put here for this relayer
	// (relayers only).
	PoR [PoRSize]byte

	// Message is the message the packet carried (recipient only). Its Text
	// is at most MaxMessageSize bytes.
	Message Message

	// Secret is s_i, the secret this hop shares with the sender: the input
	// of its proof-of-relay scalars.
	Secret [SecretSize]byte
	// Tag is the packet's replay tag at this hop, already recorded with the
	// ReplayChecker.
	Tag [TagSize]byte
	// Epoch is the packet's creation epoch as its header states it (Epoch
	// of the message timestamp), within EpochSkew of the hop's.
	Epoch uint32
}

// Buffer layout of Peel's one allocation: the decrypted routing stream
// (routing information + one extension block), the next MAC, the payload
// and room for the incoming MAC, so that the next packet (ephemeral key ‖
// routing ‖ MAC ‖ payload) is a contiguous slice starting inside the first
// decrypted block.
const (
	peelMAC     = streamSize
	peelPayload = peelMAC + MACSize
	peelSize    = peelPayload + PayloadSize + MACSize
	peelNext    = RoutingInfoSize - EphemeralKeySize // = riEph
)

// Peel processes pkt at the hop holding key, whose clock reads now: it derives
// the hop's secret, verifies the MAC over the whole packet, checks that the
// packet's creation epoch is within EpochSkew of Epoch(now), records the
// replay tag with replay (which must not be nil) and removes one layer. pkt is
// not modified or retained. Errors: ErrSize, ErrBadPoint (ephemeral key),
// ErrMAC (altered packet or not for this key), ErrExpired, ErrReplay, a
// wrapped error of replay itself, and, for packets a faulty sender
// authenticated, ErrBadPoint (next hop) or ErrPayload. The result's slices
// share one fresh allocation. Peel is safe for concurrent use, also with one
// key.
func Peel(key *PrivateKey, pkt []byte, now time.Time, replay ReplayChecker) (Peeled, error) {
	if len(pkt) != PacketSize {
		return Peeled{}, ErrSize
	}
	eph := pkt[:EphemeralKeySize]
	x, y, ok := parseEphemeral(eph)
	if !ok {
		return Peeled{}, ErrBadPoint
	}
	point, ok := ecdh(&key.scalar, x, y)
	if !ok {
		return Peeled{}, ErrBadPoint
	}
	var p Peeled
	p.Secret = sharedSecret(&point, eph, &key.pub.compressed)
	keys := deriveKeys(&p.Secret)
	p.Tag = keys.tag

	// MAC and payload layer: one ChaCha20-Poly1305 open, in place.
	buf := make([]byte, peelSize)
	body := buf[peelPayload:]
	copy(body, pkt[offPayload:])
	copy(body[PayloadSize:], pkt[offMAC:offPayload])
	aead, err := chacha20poly1305.New(keys.payload[:])
	if err != nil {
		panic("packet: chacha20poly1305: " + err.Error())
	}
	if _, err := aead.Open(body[:0], zeroNonce[:], body, pkt[:offMAC]); err != nil {
		return Peeled{}, ErrMAC
	}

	// Routing information: decrypt it extended by one zero block.
	stream := buf[:streamSize]
	c, err := chacha20.NewUnauthenticatedCipher(keys.header[:], zeroNonce[:])
	if err != nil {
		panic("packet: chacha20: " + err.Error())
	}
	c.XORKeyStream(stream[:RoutingSize], pkt[offRouting:offMAC])
	c.XORKeyStream(stream[RoutingSize:], stream[RoutingSize:])
	ri := stream[:RoutingInfoSize]

	// The window, then the replay tag: a tag is only kept while its epoch
	// is accepted.
	p.Epoch = binary.BigEndian.Uint32(ri[riEpoch:riPoR])
	if !inWindow(p.Epoch, Epoch(now)) {
		return Peeled{}, ErrExpired
	}
	fresh, err := replay.CheckAndAdd(p.Epoch, keys.tag)
	if err != nil {
		return Peeled{}, fmt.Errorf("packet: replay check: %w", err)
	}
	if !fresh {
		return Peeled{}, ErrReplay
	}

	switch ri[riNextHop] {
	case 0:
		return finalHop(p, ri, body[:PayloadSize])
	case 2, 3:
	default:
		return Peeled{}, ErrBadPoint
	}
	copy(p.NextHop[:], ri[riNextHop:riPoR])
	copy(p.PoR[:], ri[riPoR:riMAC])
	copy(buf[peelMAC:peelPayload], ri[riMAC:riEph])
	p.Next = buf[peelNext : peelNext+PacketSize : peelNext+PacketSize]
	return p, nil
}

// finalHop decodes the recipient's routing information (zero but for the
// epoch) and payload.
func finalHop(p Peeled, ri, payload []byte) (Peeled, error) {
	if !allZero(ri[:riEpoch]) || !allZero(ri[riPoR:]) {
		return Peeled{}, ErrPayload
	}
	field := binary.BigEndian.Uint16(payload[0:2])
	drop, n := field&dropFlag != 0, int(field&^dropFlag)
	if n > MaxMessageSize || drop && n != 0 || !allZero(payload[10+n:]) {
		return Peeled{}, ErrPayload
	}
	p.Final = true
	p.Message = Message{
		Text:      payload[10 : 10+n : 10+n],
		Timestamp: binary.BigEndian.Uint64(payload[2:10]),
		Drop:      drop,
	}
	return p, nil
}

func allZero(b []byte) bool {
	var acc byte
	for _, v := range b {
		acc |= v
	}
	return acc == 0
}
