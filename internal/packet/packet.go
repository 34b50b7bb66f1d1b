package packet

import (
	"math"
	"time"
)

// Sizes of the packet format (docs/PROTOCOL.md §3). Every packet is PacketSize
// bytes whatever its path length.
const (
	// MaxHops is the longest route: three relayers and the recipient.
	MaxHops = 4

	// PublicKeySize is the size of a node public key: SEC1 compressed.
	PublicKeySize = 33

	// EphemeralKeySize is the size of a per-hop ephemeral public key: SEC1
	// uncompressed (0x04 ‖ X ‖ Y), so a hop needs no square root to use it.
	EphemeralKeySize = 65

	// MACSize is the size of a hop's header MAC and of an end-to-end payload
	// tag (Poly1305 tags).
	MACSize = 16

	// EpochSize is the size of the epoch field in a hop's routing
	// information: the packet's creation epoch (Epoch), big-endian.
	EpochSize = 4

	// PoRSize is the size of the opaque proof-of-relay field a relayer finds
	// in its routing information: the 20-byte challenge T_i its own ticket
	// must carry, the 32-byte commitment H(ack_{i+1}) the next hop's
	// acknowledgement must open, and the 20-byte challenge T_{i+1} of the
	// ticket it issues (PROTOCOL.md §2). The caller fills it; this package
	// does not read it.
	PoRSize = 72

	// SecretSize is the size of the secret a hop shares with the sender.
	SecretSize = 32

	// TagSize is the size of a replay tag.
	TagSize = 32

	// RoutingInfoSize is the size of one hop's routing information: next
	// hop's public key, creation epoch, proof-of-relay field, next MAC, next
	// ephemeral key.
	RoutingInfoSize = PublicKeySize + EpochSize + PoRSize + MACSize + EphemeralKeySize

	// RoutingSize is the size of a header's encrypted routing information.
	RoutingSize = MaxHops * RoutingInfoSize

	// HeaderSize is the size of a header: ephemeral key, routing
	// information, MAC.
	HeaderSize = EphemeralKeySize + RoutingSize + MACSize

	// MaxMessageSize is the longest message text a packet carries, in bytes.
	MaxMessageSize = 500

	// PayloadSize is the size of the payload: text length (2 bytes),
	// timestamp (8 bytes), text padded with zeros to MaxMessageSize.
	PayloadSize = 2 + 8 + MaxMessageSize

	// PacketSize is the size of every packet: header then payload.
	PacketSize = HeaderSize + PayloadSize

	// ReplyIDSize is the size of a reply block's id, which its creator finds
	// in the final routing information of the reply.
	ReplyIDSize = 16

	// ReplyKeySize is the size of the end-to-end key a replier seals a reply
	// with (ChaCha20-Poly1305).
	ReplyKeySize = 32

	// replyNonceSize is the size of the random nonce of a reply's end-to-end
	// seal, the first bytes of the payload the replier sends.
	replyNonceSize = 12

	// MaxReplySize is the longest text a reply carries, in bytes: the payload
	// less the end-to-end seal's nonce and tag, the length and the timestamp.
	MaxReplySize = PayloadSize - replyNonceSize - MACSize - 2 - 8
)

// Offsets inside a packet and inside one hop's routing information.
const (
	offRouting = EphemeralKeySize
	offMAC     = offRouting + RoutingSize
	offPayload = HeaderSize

	riNextHop = 0
	riEpoch   = riNextHop + PublicKeySize
	riPoR     = riEpoch + EpochSize
	riMAC     = riPoR + PoRSize
	riEph     = riMAC + MACSize

	// The final hop's routing information: 33 zero bytes, the epoch, a kind
	// byte, 16 bytes (a forward packet's end-to-end tag, a reply's block id),
	// zeros to the end.
	riKind     = riPoR
	riFinal    = riKind + 1
	riFinalEnd = riFinal + MACSize

	// streamSize is the header keystream a hop uses: it decrypts the
	// routing information extended by one zero RoutingInfoSize block.
	streamSize = RoutingSize + RoutingInfoSize
)

// Final-slot kinds: what the recipient finds after the epoch.
const (
	kindForward = 1 // a forward packet: the end-to-end tag of the payload follows
	kindReply   = 2 // a reply: the reply block's id follows
)

// Message is what a packet carries to its recipient.
type Message struct {
	// Text is the message, at most MaxMessageSize bytes (MaxReplySize in a
	// reply), opaque to this package (UTF-8 by convention).
	Text []byte
	// Timestamp is the sender's clock when it sent the message, in unix
	// milliseconds.
	Timestamp uint64
	// Drop marks drop cover (docs/TRAFFIC.md): the recipient discards the
	// packet. Only the recipient can see it; a drop carries no text.
	Drop bool
	// Framed marks a text that is a relayd frame (a fragment, an
	// acknowledgement block's part, an acknowledgement or an answer,
	// docs/PROTOCOL.md §8), not an app's message. Only the recipient sees
	// it. A drop is never framed.
	Framed bool
}

// dropFlag is the payload length field's bit that marks drop cover,
// framedFlag the bit that marks a relayd frame (docs/PROTOCOL.md §8).
const (
	dropFlag   = 0x8000
	framedFlag = 0x4000
)

// The replay window (docs/PROTOCOL.md §3.8). Every hop's routing information
// carries the packet's creation time as an epoch number; a hop accepts the
// packet only while that epoch is within EpochSkew of its own, so it needs a
// packet's replay tag only that long.
const (
	// EpochLength is the unit of the creation time a header carries.
	EpochLength = 10 * time.Minute

	// EpochSkew is how many epochs a packet's epoch may lie before or after
	// the hop's current epoch: 1 accepts 3 epochs, at least EpochLength of
	// clock skew plus transit time, at most 2·EpochLength.
	EpochSkew = 1

	epochMillis = uint64(EpochLength / time.Millisecond)
)

// Epoch returns the epoch of t: whole EpochLengths since the Unix epoch. Times
// before 1970 give 0, times past the last epoch a header can carry (in the
// year 83,000) give math.MaxUint32.
func Epoch(t time.Time) uint32 {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	return epochOfMillis(uint64(ms))
}

func epochOfMillis(ms uint64) uint32 {
	return uint32(min(ms/epochMillis, math.MaxUint32))
}

// Expired reports whether a hop whose current epoch is now refuses packets of
// epoch e as too old (ErrExpired). From then on a replay store may forget the
// tags it recorded for epoch e.
func Expired(e, now uint32) bool {
	return uint64(e)+EpochSkew < uint64(now)
}

// inWindow reports whether a hop at epoch now accepts a packet of epoch e.
func inWindow(e, now uint32) bool {
	return !Expired(e, now) && uint64(e) <= uint64(now)+EpochSkew
}
