package packet

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/relayd/relayd/internal/por"
)

// Reply blocks (docs/PROTOCOL.md §3.9). A node C that wants an answer without
// telling the replier R who it is builds a ReplyBlock over a return path of
// relayers ending at itself (Route.SealReply) and keeps the ReplyKeys; R seals
// one message with the block (ReplyBlock.Seal) into an ordinary packet that it
// sends to the block's first hop; the relayers peel it like any other packet;
// at C, Peel reports a reply (Peeled.Reply, Peeled.ReplyID) and OpenReply
// reads it with the keys.

// Encoded sizes of a reply block and of the creator's keys.
const (
	// ReplyBlockVersion is the first byte of an encoded ReplyBlock.
	ReplyBlockVersion = 1

	// ReplyBlockSize is the size of an encoded ReplyBlock: version, epoch,
	// first hop, ticket challenge, ack commitment, amount, end-to-end key,
	// header.
	ReplyBlockSize = 1 + EpochSize + PublicKeySize + len(por.Challenge{}) + len(por.AckCommitment{}) + 1 + ReplyKeySize + HeaderSize

	// ReplyKeysVersion is the first byte of encoded ReplyKeys.
	ReplyKeysVersion = 1

	// ReplyKeysSize is the size of encoded ReplyKeys: version, block id,
	// epoch, relayer count, one payload key per possible relayer, end-to-end
	// key.
	ReplyKeysSize = 1 + ReplyIDSize + EpochSize + 1 + (MaxHops-1)*32 + ReplyKeySize
)

// ReplyBlock is what a replier needs to send one reply to the block's creator,
// and nothing more: where to send it, the header that routes it, what the
// first hop's ticket must carry and be worth, the key that seals the text,
// and when the block was made. It does not name the creator or the path
// beyond the first hop.
type ReplyBlock struct {
	// Epoch is the block's creation epoch, which its header carries to every
	// hop: the block is usable while InWindow.
	Epoch uint32
	// FirstHop is the SEC1 compressed key of the relayer the reply goes to.
	FirstHop [PublicKeySize]byte
	// Challenge is T_0, the proof-of-relay challenge of the replier's ticket
	// to the first hop (PROTOCOL.md §2).
	Challenge por.Challenge
	// AckCommitment is H(ack_0): the first hop's acknowledgement is the
	// reply's iff it hashes to it (por.CommitAck).
	AckCommitment por.AckCommitment
	// Amount is the value of the replier's ticket to the first hop in units of
	// tickets.PricePerRelayer (0.01): relayers plus the creator's padding,
	// PROTOCOL.md §4.5; 0 on an unpaid network.
	Amount uint8
	// Key is the end-to-end key the replier seals the reply's text with.
	Key [ReplyKeySize]byte
	// Header is the reply packet's header E_0 ‖ β_0 ‖ γ_0.
	Header [HeaderSize]byte
}

// ReplyKeys is what a block's creator keeps to read the reply: the block id,
// its epoch, every relayer's payload key and the end-to-end key. It is secret;
// the creator forgets it once the reply came (a block makes one reply).
type ReplyKeys struct {
	id       [ReplyIDSize]byte
	epoch    uint32
	relayers int
	payload  [MaxHops - 1][32]byte
	key      [ReplyKeySize]byte
}

// ID returns the id of the block the keys belong to (Peeled.ReplyID).
func (k *ReplyKeys) ID() [ReplyIDSize]byte { return k.id }

// Epoch returns the block's creation epoch.
func (k *ReplyKeys) Epoch() uint32 { return k.epoch }

// SealReply builds a reply block over the route instead of a packet: the route
// is the return path, relayers then the creator itself as the final hop, so it
// needs 2 to MaxHops hops (ErrReplyRoute otherwise). por holds one
// proof-of-relay field per relayer, as for Seal. The block's header carries
// Epoch(created); its id and end-to-end key are drawn from rand. SealReply
// fills the block's Epoch, FirstHop, Key and Header and leaves Challenge,
// AckCommitment and Amount to the caller, which computes them with the
// proof-of-relay data. It returns ErrPoRCount, ErrTimestamp (a time before
// 1970 or past the last epoch) or ErrSealed (the route was sealed) before
// building anything.
func (r *Route) SealReply(rand io.Reader, created time.Time, por [][PoRSize]byte) (*ReplyBlock, *ReplyKeys, error) {
	ms := created.UnixMilli()
	switch {
	case r.n < 2:
		return nil, nil, ErrReplyRoute
	case ms < 0 || uint64(ms)/epochMillis > math.MaxUint32:
		return nil, nil, ErrTimestamp
	case len(por) != r.n-1:
		return nil, nil, ErrPoRCount
	case r.sealed:
		return nil, nil, ErrSealed
	}
	b := &ReplyBlock{Epoch: epochOfMillis(uint64(ms)), FirstHop: r.hops[0].pub}
	k := &ReplyKeys{epoch: b.Epoch, relayers: r.n - 1}
	if _, err := io.ReadFull(rand, k.id[:]); err != nil {
		return nil, nil, err
	}
	if _, err := io.ReadFull(rand, k.key[:]); err != nil {
		return nil, nil, err
	}
	r.sealed = true
	defer r.clearKeys()
	b.Key = k.key
	for i := range r.n - 1 {
		k.payload[i] = r.hops[i].keys.payload
	}
	r.sealHeader(b.Header[:], b.Epoch, kindReply, &k.id, por)
	return b, k, nil
}

// InWindow reports whether a hop whose clock reads now accepts the block's
// header: its epoch is within EpochSkew of Epoch(now) (PROTOCOL.md §3.8).
// Outside, every hop refuses the reply as expired.
func (b *ReplyBlock) InWindow(now time.Time) bool { return inWindow(b.Epoch, Epoch(now)) }

// Seal builds the one reply packet of the block: msg's payload sealed with
// ChaCha20-Poly1305 under the block's key and a random 12-byte nonce from
// rand (so that two messages sealed with one block by mistake share no
// keystream), behind the block's header. It returns ErrReplyTooLarge for a
// text over MaxReplySize bytes and ErrDropText for a drop with text. The
// header's epoch is the block's; msg.Timestamp travels only inside the seal.
// A block makes one reply: the first hop refuses a second packet with the
// same header (ErrReplay), and the creator has forgotten the keys.
func (b *ReplyBlock) Seal(rand io.Reader, msg Message) ([]byte, error) {
	switch {
	case len(msg.Text) > MaxReplySize:
		return nil, ErrReplyTooLarge
	case msg.Drop && (len(msg.Text) > 0 || msg.Framed):
		return nil, ErrDropText
	}
	pkt := make([]byte, PacketSize)
	copy(pkt, b.Header[:])
	nonce := pkt[offPayload : offPayload+replyNonceSize]
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, err
	}
	plain := pkt[offPayload+replyNonceSize : PacketSize-MACSize]
	encodeMessage(plain, msg)
	newAEAD(&b.Key).Seal(plain[:0], nonce, plain, nil)
	return pkt, nil
}

// OpenReply reads a reply that Peel returned at its creator (p.Reply) with
// the block's keys: it removes every relayer's payload layer and the
// replier's end-to-end seal and decodes the message, whose Text is at most
// MaxReplySize bytes. It returns ErrPayload when p is not a reply of this
// block (another id or epoch) or the payload does not open or decode: it was
// altered on the way, or the replier is faulty. p is not modified.
func OpenReply(keys *ReplyKeys, p *Peeled) (Message, error) {
	switch {
	case !p.Reply || p.ReplyID != keys.id || p.Epoch != keys.epoch:
		return Message{}, fmt.Errorf("%w: not a reply of this block", ErrPayload)
	case len(p.Payload) != PayloadSize:
		return Message{}, fmt.Errorf("%w: reply payload of %d bytes", ErrPayload, len(p.Payload))
	}
	payload := make([]byte, PayloadSize)
	copy(payload, p.Payload)
	for i := range keys.relayers {
		xorPayload(&keys.payload[i], payload, payload)
	}
	plain, err := newAEAD(&keys.key).Open(payload[replyNonceSize:replyNonceSize], payload[:replyNonceSize], payload[replyNonceSize:], nil)
	if err != nil {
		return Message{}, ErrPayload
	}
	return decodeMessage(plain)
}

// MarshalBinary encodes the block in ReplyBlockSize bytes: version
// (ReplyBlockVersion) ‖ epoch (4, big-endian) ‖ first hop (33) ‖ challenge
// (20) ‖ ack commitment (32) ‖ amount (1) ‖ key (32) ‖ header (841).
func (b *ReplyBlock) MarshalBinary() ([]byte, error) {
	out := make([]byte, 0, ReplyBlockSize)
	out = append(out, ReplyBlockVersion)
	out = binary.BigEndian.AppendUint32(out, b.Epoch)
	out = append(out, b.FirstHop[:]...)
	out = append(out, b.Challenge[:]...)
	out = append(out, b.AckCommitment[:]...)
	out = append(out, b.Amount)
	out = append(out, b.Key[:]...)
	out = append(out, b.Header[:]...)
	return out, nil
}

// UnmarshalBinary decodes a block from MarshalBinary's bytes. It returns
// ErrBadReplyBlock for another length or version, a first hop that is not a
// compressed secp256k1 key or a header whose ephemeral key is not a point;
// whatever it accepts re-encodes to the same bytes. It does not check what
// only the creator can know (the header's routing and MAC) or judge the
// amount and epoch: the replier checks those against its own rules and clock.
func (b *ReplyBlock) UnmarshalBinary(data []byte) error {
	if len(data) != ReplyBlockSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadReplyBlock, len(data), ReplyBlockSize)
	}
	if data[0] != ReplyBlockVersion {
		return fmt.Errorf("%w: version %d", ErrBadReplyBlock, data[0])
	}
	var d ReplyBlock
	rest := data[1:]
	take := func(n int) []byte { out := rest[:n]; rest = rest[n:]; return out }
	d.Epoch = binary.BigEndian.Uint32(take(EpochSize))
	copy(d.FirstHop[:], take(PublicKeySize))
	copy(d.Challenge[:], take(len(d.Challenge)))
	copy(d.AckCommitment[:], take(len(d.AckCommitment)))
	d.Amount = take(1)[0]
	copy(d.Key[:], take(ReplyKeySize))
	copy(d.Header[:], take(HeaderSize))
	if _, err := ParsePublicKey(d.FirstHop[:]); err != nil {
		return fmt.Errorf("%w: first hop: %w", ErrBadReplyBlock, err)
	}
	if _, _, ok := parseEphemeral(d.Header[:EphemeralKeySize]); !ok {
		return fmt.Errorf("%w: header: %w", ErrBadReplyBlock, ErrBadPoint)
	}
	*b = d
	return nil
}

// MarshalBinary encodes the keys in ReplyKeysSize bytes: version
// (ReplyKeysVersion) ‖ id (16) ‖ epoch (4, big-endian) ‖ relayer count (1) ‖
// the relayers' payload keys (32 each, in path order, zeros for the unused
// ones up to MaxHops-1) ‖ end-to-end key (32). The bytes are secret.
func (k *ReplyKeys) MarshalBinary() ([]byte, error) {
	out := make([]byte, 0, ReplyKeysSize)
	out = append(out, ReplyKeysVersion)
	out = append(out, k.id[:]...)
	out = binary.BigEndian.AppendUint32(out, k.epoch)
	out = append(out, byte(k.relayers))
	for i := range k.payload {
		out = append(out, k.payload[i][:]...)
	}
	out = append(out, k.key[:]...)
	return out, nil
}

// UnmarshalBinary decodes keys from MarshalBinary's bytes. It returns
// ErrBadReplyKeys for another length or version, a relayer count outside 1 to
// MaxHops-1 or a non-zero unused key slot, so whatever it accepts re-encodes
// to the same bytes.
func (k *ReplyKeys) UnmarshalBinary(data []byte) error {
	if len(data) != ReplyKeysSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadReplyKeys, len(data), ReplyKeysSize)
	}
	if data[0] != ReplyKeysVersion {
		return fmt.Errorf("%w: version %d", ErrBadReplyKeys, data[0])
	}
	var d ReplyKeys
	rest := data[1:]
	take := func(n int) []byte { out := rest[:n]; rest = rest[n:]; return out }
	copy(d.id[:], take(ReplyIDSize))
	d.epoch = binary.BigEndian.Uint32(take(EpochSize))
	d.relayers = int(take(1)[0])
	if d.relayers < 1 || d.relayers > MaxHops-1 {
		return fmt.Errorf("%w: %d relayers", ErrBadReplyKeys, d.relayers)
	}
	for i := range d.payload {
		copy(d.payload[i][:], take(32))
		if i >= d.relayers && !allZero(d.payload[i][:]) {
			return fmt.Errorf("%w: key of relayer %d beyond the path", ErrBadReplyKeys, i)
		}
	}
	copy(d.key[:], take(ReplyKeySize))
	*k = d
	return nil
}
