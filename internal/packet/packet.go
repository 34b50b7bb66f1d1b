package packet

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

	// MACSize is the size of a hop's MAC (a Poly1305 tag).
	MACSize = 16

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
	// hop's public key, proof-of-relay field, next MAC, next ephemeral key.
	RoutingInfoSize = PublicKeySize + PoRSize + MACSize + EphemeralKeySize

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
)

// Offsets inside a packet and inside one hop's routing information.
const (
	offRouting = EphemeralKeySize
	offMAC     = offRouting + RoutingSize
	offPayload = HeaderSize

	riNextHop = 0
	riPoR     = riNextHop + PublicKeySize
	riMAC     = riPoR + PoRSize
	riEph     = riMAC + MACSize

	// streamSize is the header keystream a hop uses: it decrypts the
	// routing information extended by one zero RoutingInfoSize block.
	streamSize = RoutingSize + RoutingInfoSize
)

// Message is what a packet carries to its recipient.
type Message struct {
	// Text is the message, at most MaxMessageSize bytes, opaque to this
	// package (UTF-8 by convention).
	Text []byte
	// Timestamp is the sender's clock when it sent the message, in unix
	// milliseconds.
	Timestamp uint64
}
