package packet

import (
	"crypto/subtle"
	"encoding/binary"
	"io"
	"math"

	"golang.org/x/crypto/chacha20"
)

// zeroNonce is the nonce of every per-hop cipher: each key is used for one
// message only.
var zeroNonce [chacha20.NonceSize]byte

// Route is a sender's half-built packet: one fresh ephemeral key per hop and
// the secret each hop will derive. Build it with NewRoute, read the secrets to
// compute proof-of-relay data, then Seal it once. A Route is not safe for
// concurrent use.
type Route struct {
	n      int
	hops   [MaxHops]routeHop
	fill   [RoutingSize]byte // random bytes for the unused routing slots
	sealed bool
}

type routeHop struct {
	pub    [PublicKeySize]byte
	eph    [EphemeralKeySize]byte
	secret [SecretSize]byte
	keys   hopKeys
}

// NewRoute draws a fresh ephemeral key for every hop from rand and computes
// the secret each hop shares with the sender. hops lists the relayers in
// order and then the recipient: 1 to MaxHops keys (1 is a direct message to
// the recipient). It returns ErrEmptyRoute or ErrTooManyHops for other
// lengths, or the reader's error. The hops are not otherwise checked: path
// selection decides who may appear on a route.
func NewRoute(rand io.Reader, hops []*PublicKey) (*Route, error) {
	return newRoute(rand, hops, nil)
}

// newRoute is NewRoute taking what ephemeral keys it can from pool (nil: none).
func newRoute(rand io.Reader, hops []*PublicKey, pool *EphemeralPool) (*Route, error) {
	switch {
	case len(hops) == 0:
		return nil, ErrEmptyRoute
	case len(hops) > MaxHops:
		return nil, ErrTooManyHops
	}
	for _, p := range hops {
		if p == nil || (p.compressed[0] != 2 && p.compressed[0] != 3) {
			return nil, ErrBadPoint // not from ParsePublicKey or PrivateKey.PublicKey
		}
	}
	r := &Route{n: len(hops)}
	var scalars [MaxHops][32]byte
	defer clear(scalars[:])
	ephs, err := ephemerals(rand, pool, scalars[:len(hops)])
	if err != nil {
		return nil, err
	}
	for i, p := range hops {
		point, ok := ecdh(&scalars[i], &p.x, &p.y)
		if !ok {
			return nil, errRandom // unreachable: drawScalar checked the scalar
		}
		h := &r.hops[i]
		h.pub = p.compressed
		h.eph = ephs[i]
		h.secret = sharedSecret(&point, h.eph[:], &p.compressed)
		h.keys = deriveKeys(&h.secret)
	}
	// The recipient must not tell the route length from its routing
	// information, so the slots no hop uses are random, not zero or derived.
	if _, err := io.ReadFull(rand, r.fill[:(MaxHops-r.n)*RoutingInfoSize]); err != nil {
		return nil, err
	}
	return r, nil
}

// Len returns the number of hops: relayers plus the recipient.
func (r *Route) Len() int { return r.n }

// Secret returns s_i, the secret hop i (0-based; the recipient is Len()-1)
// will derive when it peels the packet: the input of its proof-of-relay
// scalars (PROTOCOL.md §2). It panics if i is out of range.
func (r *Route) Secret(i int) [SecretSize]byte {
	if i < 0 || i >= r.n {
		panic("packet: Route.Secret index out of range")
	}
	return r.hops[i].secret
}

// Seal builds the packet carrying msg along the route. por holds one
// proof-of-relay field per relayer, in route order (Len()-1 fields; none for a
// direct message); relayer i finds por[i] in Peeled.PoR. Every hop's routing
// information carries Epoch of msg.Timestamp, the packet's creation time: hops
// accept the packet while their clock is within EpochSkew epochs of it. The
// payload is sealed end to end under the recipient's key (its tag travels in
// the recipient's routing information), then layered once per relayer. Seal
// returns ErrMessageTooLarge for a text over MaxMessageSize bytes,
// ErrTimestamp for a timestamp past the last epoch and ErrPoRCount for a wrong
// number of fields, before building anything, and ErrSealed when called a
// second time (or after SealReply). The packet is PacketSize bytes.
func (r *Route) Seal(msg Message, por [][PoRSize]byte) ([]byte, error) {
	switch {
	case len(msg.Text) > MaxMessageSize:
		return nil, ErrMessageTooLarge
	case msg.Drop && (len(msg.Text) > 0 || msg.Framed):
		return nil, ErrDropText
	case msg.Timestamp/epochMillis > math.MaxUint32:
		return nil, ErrTimestamp
	case len(por) != r.n-1:
		return nil, ErrPoRCount
	case r.sealed:
		return nil, ErrSealed
	}
	r.sealed = true
	defer r.clearKeys()
	last := r.n - 1

	// The payload: the plaintext sealed with ChaCha20-Poly1305 under the
	// recipient's payload key, its tag for the recipient's routing
	// information, then one ChaCha20 layer per relayer (the order does not
	// matter: the layers are XORed).
	pkt := make([]byte, PacketSize+MACSize)
	plain := pkt[offPayload : offPayload+PayloadSize]
	encodeMessage(plain, msg)
	sealed := newAEAD(&r.hops[last].keys.payload).Seal(plain[:0], zeroNonce[:], plain, nil)
	var final [MACSize]byte
	copy(final[:], sealed[PayloadSize:])
	payload := pkt[offPayload:PacketSize]
	for i := range last {
		xorPayload(&r.hops[i].keys.payload, payload, payload)
	}
	r.sealHeader(pkt[:HeaderSize], epochOfMillis(msg.Timestamp), kindForward, &final, por)
	return pkt[:PacketSize:PacketSize], nil
}

// sealHeader writes the header E_0 ‖ β_0 ‖ γ_0 (HeaderSize bytes) into hdr:
// every hop's routing information carries epoch, relayer i's carries por[i],
// and the last hop's carries kind and final after the epoch.
func (r *Route) sealHeader(hdr []byte, epoch uint32, kind byte, final *[MACSize]byte, por [][PoRSize]byte) {
	n := r.n
	var ep [EpochSize]byte
	binary.BigEndian.PutUint32(ep[:], epoch)

	// Each hop decrypts its routing information extended by one zero block
	// with its header stream; the sender needs the same keystreams.
	var streams [MaxHops][streamSize]byte
	for i := range n {
		c, err := chacha20.NewUnauthenticatedCipher(r.hops[i].keys.header[:], zeroNonce[:])
		if err != nil {
			panic("packet: chacha20: " + err.Error())
		}
		c.XORKeyStream(streams[i][:], streams[i][:])
	}

	// Filler: what hops 0..n-2 append to the routing information, as the
	// last hop will see it (Sphinx). It grows by one block per hop.
	var filler [RoutingSize]byte
	fl := 0
	for i := range n - 1 {
		fl += RoutingInfoSize
		subtle.XORBytes(filler[:fl], filler[:fl], streams[i][RoutingSize-fl+RoutingInfoSize:])
	}

	routing := hdr[offRouting:offMAC]

	// Last hop: final routing information (zero but for the epoch, the kind
	// and its 16 bytes), random unused slots, all encrypted, then the filler
	// in place of the tail.
	last := n - 1
	clear(routing[:RoutingInfoSize])
	copy(routing[riEpoch:riPoR], ep[:])
	routing[riKind] = kind
	copy(routing[riFinal:riFinalEnd], final[:])
	copy(routing[RoutingInfoSize:], r.fill[:(MaxHops-n)*RoutingInfoSize])
	subtle.XORBytes(routing, routing, streams[last][:RoutingSize])
	copy(routing[RoutingSize-fl:], filler[:fl])

	// From the last hop to the first: hop i's MAC over E_i ‖ β_i, then hop
	// i-1's routing information.
	var block [RoutingInfoSize]byte
	for i := last; i >= 0; i-- {
		h := &r.hops[i]
		copy(hdr[:EphemeralKeySize], h.eph[:])
		mac := headerMAC(&h.keys.mac, hdr[:offMAC])
		if i == 0 {
			copy(hdr[offMAC:HeaderSize], mac[:])
			break
		}
		// Hop i-1's routing information: next hop i, the epoch, its PoR
		// field, hop i's MAC and ephemeral key; then hop i's routing info
		// shifted by one block (its tail falls off: the filler regenerates
		// it).
		copy(block[riNextHop:], h.pub[:])
		copy(block[riEpoch:], ep[:])
		copy(block[riPoR:], por[i-1][:])
		copy(block[riMAC:], mac[:])
		copy(block[riEph:], h.eph[:])
		copy(routing[RoutingInfoSize:], routing[:RoutingSize-RoutingInfoSize])
		copy(routing, block[:])
		subtle.XORBytes(routing, routing, streams[i-1][:RoutingSize])
	}
}

// clearKeys wipes the route's symmetric keys once it is sealed.
func (r *Route) clearKeys() {
	for i := range r.n {
		r.hops[i].keys.clear()
	}
}

// ephemerals fills scalars with one ephemeral key each, taken from pool where it has them and
// computed with newEphemerals otherwise, and returns their public keys.
func ephemerals(rand io.Reader, pool *EphemeralPool, scalars [][32]byte) ([MaxHops][EphemeralKeySize]byte, error) {
	if pool == nil {
		return newEphemerals(rand, scalars)
	}
	var pubs [MaxHops][EphemeralKeySize]byte
	var e ephemeral
	defer clear(e.scalar[:])
	taken := 0
	for taken < len(scalars) && pool.take(&e) {
		scalars[taken] = e.scalar
		pubs[taken] = e.pub
		taken++
	}
	if taken == len(scalars) {
		return pubs, nil
	}
	rest, err := newEphemerals(rand, scalars[taken:])
	if err != nil {
		return pubs, err
	}
	copy(pubs[taken:], rest[:len(scalars)-taken])
	return pubs, nil
}
