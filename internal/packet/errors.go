package packet

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Match them with errors.Is.
var (
	// ErrSize is returned by Peel for a packet that is not exactly PacketSize
	// bytes long (truncated or oversized).
	ErrSize = fmt.Errorf("packet: packet is not %d bytes", PacketSize)

	// ErrMAC is returned by Peel when the packet's MAC does not verify: the
	// packet was altered in transit, or it was not built for this node's key.
	ErrMAC = errors.New("packet: bad MAC")

	// ErrReplay is returned by Peel when the ReplayChecker has already seen
	// the packet's replay tag.
	ErrReplay = errors.New("packet: replayed packet")

	// ErrExpired is returned by Peel for a packet whose creation epoch is
	// more than EpochSkew epochs before or after the hop's own: too old for
	// the replay tags the hop still keeps, or from a clock too far ahead.
	// The replay store is not touched.
	ErrExpired = errors.New("packet: packet outside its time window")

	// ErrBadPoint is returned for bytes that are not a valid secp256k1 point
	// in the expected encoding: a public key given to ParsePublicKey, a nil
	// or zero PublicKey given to NewRoute, a packet's ephemeral key, or a
	// next-hop key in authenticated routing information.
	ErrBadPoint = errors.New("packet: malformed secp256k1 point")

	// ErrBadKey is returned by NewPrivateKey for a scalar that is not in
	// [1, n-1].
	ErrBadKey = errors.New("packet: malformed private key")

	// ErrPayload is returned by Peel at the final hop when the packet's
	// contents do not open or decode (a payload whose end-to-end tag fails,
	// bad length, non-zero padding, non-canonical final routing
	// information), and by OpenReply for a reply that does not open. A
	// payload altered on the way produces it (relayers do not authenticate
	// the payload), or a faulty sender.
	ErrPayload = errors.New("packet: malformed payload")

	// ErrTooManyHops is returned by NewRoute for a route longer than MaxHops.
	ErrTooManyHops = fmt.Errorf("packet: route has more than %d hops", MaxHops)

	// ErrEmptyRoute is returned by NewRoute for a route without hops.
	ErrEmptyRoute = errors.New("packet: route has no hops")

	// ErrMessageTooLarge is returned by Seal for a message text longer than
	// MaxMessageSize bytes; nothing is built.
	ErrMessageTooLarge = fmt.Errorf("packet: message text longer than %d bytes", MaxMessageSize)

	// ErrReplyTooLarge is returned by ReplyBlock.Seal for a text longer
	// than MaxReplySize bytes; it matches ErrMessageTooLarge too.
	ErrReplyTooLarge = fmt.Errorf("%w: a reply carries at most %d", ErrMessageTooLarge, MaxReplySize)

	// ErrReplyRoute is returned by Route.SealReply for a route without a
	// relayer: a reply block's path is 1 to MaxHops-1 relayers and then its
	// creator.
	ErrReplyRoute = fmt.Errorf("packet: a reply block needs 1 to %d relayers before its creator", MaxHops-1)

	// ErrBadReplyBlock is returned by ReplyBlock.UnmarshalBinary for bytes
	// that are not an encoded reply block.
	ErrBadReplyBlock = errors.New("packet: malformed reply block")

	// ErrBadReplyKeys is returned by ReplyKeys.UnmarshalBinary for bytes
	// that are not encoded reply keys.
	ErrBadReplyKeys = errors.New("packet: malformed reply keys")

	// ErrPoRCount is returned by Seal when the number of proof-of-relay
	// fields is not the number of relayers (Route.Len() - 1).
	ErrPoRCount = errors.New("packet: need one proof-of-relay field per relayer")

	// ErrDropText is returned by Seal for a drop (Message.Drop) with text:
	// a drop carries none.
	ErrDropText = errors.New("packet: a drop carries no text")

	// ErrTimestamp is returned by Seal for a message timestamp whose epoch
	// a header cannot carry (past the year 83,000); nothing is built.
	ErrTimestamp = errors.New("packet: message timestamp out of range")

	// ErrSealed is returned by Seal on a Route that was already sealed: a
	// route's ephemeral keys are single-use.
	ErrSealed = errors.New("packet: route already sealed")

	// ErrPoolConfig is returned by NewEphemeralPool without a random source
	// or with room for no key.
	ErrPoolConfig = errors.New("packet: an ephemeral pool needs a random source and room for a key")
)
