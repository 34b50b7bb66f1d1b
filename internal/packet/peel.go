package packet

import (
	"crypto/cipher"
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

	// Message is the message a forward packet carried (recipient only). Its
	// Text is at most MaxMessageSize bytes.
	Message Message

	// Reply is true at the final hop of a reply: a packet a replier made
	// with a ReplyBlock this node created. ReplyID names the block, and
	// Payload (PayloadSize bytes) is still under the relayers' layers and the
	// replier's end-to-end seal: OpenReply reads it with the block's
	// ReplyKeys. Message is empty.
	Reply   bool
	ReplyID [ReplyIDSize]byte
	Payload []byte

	// Secret is s_i, the secret this hop shares with the sender: the input
	// of its proof-of-relay scalars.
	Secret [SecretSize]byte
	// Tag is the packet's replay tag at this hop, already recorded with the
	// ReplayChecker.
	Tag [TagSize]byte
	// Epoch is the packet's creation epoch as its header states it (Epoch
	// of the message timestamp, or a reply block's creation), within
	// EpochSkew of the hop's.
	Epoch uint32
}

// Buffer layout of Peel's one allocation: the decrypted routing stream
// (routing information + one extension block), the next MAC, the payload
// and room for a forward packet's end-to-end tag, so that the next packet
// (ephemeral key ‖ routing ‖ MAC ‖ payload) is a contiguous slice starting
// inside the first decrypted block.
const (
	peelMAC     = streamSize
	peelPayload = peelMAC + MACSize
	peelSize    = peelPayload + PayloadSize + MACSize
	peelNext    = RoutingInfoSize - EphemeralKeySize // = riEph
)

// Peel processes pkt at the hop holding key, whose clock reads now: it derives
// the hop's secret, verifies the header MAC (over the ephemeral key and the
// routing information), checks that the packet's creation epoch is within
// EpochSkew of Epoch(now), records the replay tag with replay (which must not
// be nil) and removes one layer: a relayer gets the next packet, its payload
// under one ChaCha20 layer less; a forward packet's recipient gets the
// message, its payload authenticated end to end; a reply's creator gets the
// block id and the payload as it came (Peeled.Reply, OpenReply). pkt is not
// modified or retained.
//
// Errors: ErrSize, ErrBadPoint (ephemeral key), ErrMAC (altered header or not
// for this key), ErrExpired, ErrReplay, a wrapped error of replay itself, and
// ErrBadPoint (next hop) for a header a faulty sender authenticated. At the
// final hop, ErrPayload reports contents that do not open or decode: a
// payload altered on the way (the relayers' layers carry no MAC, so only the
// recipient notices), or a faulty sender. With that ErrPayload, and only
// with it, Peel also returns the Peeled with Final, Secret, Tag and Epoch
// set (the header was valid and its tag is recorded), so that the recipient
// can acknowledge the packet like any other: withholding the acknowledgement
// would tell the last relayer that the payload was altered. The result's
// slices share one fresh allocation. Peel is safe for concurrent use, also
// with one key.
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
	defer keys.clear()
	p.Tag = keys.tag

	// The header MAC: a Poly1305 tag over E_i ‖ β_i, before anything else is
	// read.
	if !headerMACValid(&keys.mac, pkt[:offMAC], pkt[offMAC:offPayload]) {
		return Peeled{}, ErrMAC
	}

	// Routing information: decrypt it extended by one zero block.
	buf := make([]byte, peelSize)
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
		return finalHop(p, &keys, ri, pkt[offPayload:], buf[peelPayload:])
	case 2, 3:
	default:
		return Peeled{}, ErrBadPoint
	}
	copy(p.NextHop[:], ri[riNextHop:riPoR])
	copy(p.PoR[:], ri[riPoR:riMAC])
	copy(buf[peelMAC:peelPayload], ri[riMAC:riEph])
	// The payload layer: ChaCha20 under k_pay, the same at every relayer
	// whatever the packet (a forward packet loses a layer, a reply gains one).
	xorPayload(&keys.payload, buf[peelPayload:peelPayload+PayloadSize], pkt[offPayload:])
	p.Next = buf[peelNext : peelNext+PacketSize : peelNext+PacketSize]
	return p, nil
}

// finalHop reads the recipient's routing information (33 zero bytes, the
// epoch, a kind, 16 bytes, zeros) and its payload: a forward packet's opens
// under the recipient's ChaCha20-Poly1305 layer with the tag from the
// routing information; a reply's is copied as it is. dst is PayloadSize +
// MACSize bytes. On ErrPayload it returns p marked Final (Peel's doc).
func finalHop(p Peeled, keys *hopKeys, ri, payload, dst []byte) (Peeled, error) {
	p.Final = true
	if !allZero(ri[:riEpoch]) || !allZero(ri[riFinalEnd:]) {
		return p, ErrPayload
	}
	switch ri[riKind] {
	case kindForward:
		copy(dst, payload)
		copy(dst[PayloadSize:], ri[riFinal:riFinalEnd])
		plain, err := newAEAD(&keys.payload).Open(dst[:0], zeroNonce[:], dst[:PayloadSize+MACSize], nil)
		if err != nil {
			return p, ErrPayload
		}
		msg, err := decodeMessage(plain)
		if err != nil {
			return p, err
		}
		p.Message = msg
		return p, nil
	case kindReply:
		p.Reply = true
		copy(p.ReplyID[:], ri[riFinal:riFinalEnd])
		p.Payload = dst[:PayloadSize:PayloadSize]
		copy(p.Payload, payload)
		return p, nil
	}
	return p, ErrPayload
}

// decodeMessage decodes a payload plaintext: text length (with the drop
// and framed flags), timestamp, text, zero padding to the end; the text may fill all but
// the first 10 bytes. Text aliases plain.
func decodeMessage(plain []byte) (Message, error) {
	field := binary.BigEndian.Uint16(plain[0:2])
	drop, framed, n := field&dropFlag != 0, field&framedFlag != 0, int(field&^(dropFlag|framedFlag))
	if n > len(plain)-10 || drop && (n != 0 || framed) || !allZero(plain[10+n:]) {
		return Message{}, ErrPayload
	}
	return Message{
		Text:      plain[10 : 10+n : 10+n],
		Timestamp: binary.BigEndian.Uint64(plain[2:10]),
		Drop:      drop,
		Framed:    framed,
	}, nil
}

// encodeMessage writes msg's payload plaintext into plain (zeroed by the
// caller); the text must fit.
func encodeMessage(plain []byte, msg Message) {
	field := uint16(len(msg.Text))
	if msg.Drop {
		field |= dropFlag
	}
	if msg.Framed {
		field |= framedFlag
	}
	binary.BigEndian.PutUint16(plain[0:2], field)
	binary.BigEndian.PutUint64(plain[2:10], msg.Timestamp)
	copy(plain[10:], msg.Text)
}

// newAEAD returns ChaCha20-Poly1305 under key.
func newAEAD(key *[32]byte) cipher.AEAD {
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		panic("packet: chacha20poly1305: " + err.Error())
	}
	return aead
}

// headerMAC returns a header's MAC γ: the tag of ChaCha20-Poly1305 under the
// hop's MAC key, nonce 0, over an empty plaintext with the ephemeral key and
// routing information as additional data (a Poly1305 tag under a one-time
// key derived from k_mac).
func headerMAC(key *[32]byte, header []byte) [MACSize]byte {
	var tag [MACSize]byte
	newAEAD(key).Seal(tag[:0], zeroNonce[:], nil, header)
	return tag
}

// headerMACValid checks gamma against header in constant time.
func headerMACValid(key *[32]byte, header, gamma []byte) bool {
	_, err := newAEAD(key).Open(nil, zeroNonce[:], gamma, header)
	return err == nil
}

// xorPayload writes src XOR ChaCha20(key, nonce 0, counter 0) to dst: one
// hop's payload layer, its own inverse.
func xorPayload(key *[32]byte, dst, src []byte) {
	c, err := chacha20.NewUnauthenticatedCipher(key[:], zeroNonce[:])
	if err != nil {
		panic("packet: chacha20: " + err.Error())
	}
	c.XORKeyStream(dst, src)
}

func allZero(b []byte) bool {
	var acc byte
	for _, v := range b {
		acc |= v
	}
	return acc == 0
}
