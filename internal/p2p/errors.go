package p2p

import (
	"errors"

	"github.com/relayd/relayd/internal/identity"
)

var (
	// ErrInvalidConfig reports a Config that New refuses; the wrapping error names the field.
	ErrInvalidConfig = errors.New("invalid p2p config")

	// ErrAddrInUse reports that a listen address is already taken by another socket.
	ErrAddrInUse = errors.New("listen address already in use")

	// ErrClosed reports an operation on a Host after Close.
	ErrClosed = errors.New("p2p host closed")

	// ErrSelf reports an attempt to send to, ping or add the node itself (identity's sentinel,
	// so that layers that only name peers match it without importing the transport).
	ErrSelf = identity.ErrSelf

	// ErrNoAddress reports a peer that is neither connected nor has a known address
	// (identity's sentinel, as ErrSelf).
	ErrNoAddress = identity.ErrNoAddress

	// ErrUnreachable reports that the stream to a peer failed recently and the host
	// is backing off before it dials again. AddPeer with fresh addresses ends the backoff.
	ErrUnreachable = errors.New("peer unreachable, backing off")

	// ErrQueueFull reports that the peer's outbound queue is full; the frame was not queued.
	ErrQueueFull = errors.New("outbound queue full")

	// ErrFrameTooLarge reports a frame longer than Config.MaxFrameSize, on either side.
	ErrFrameTooLarge = errors.New("frame too large")

	// ErrBadFrame reports a malformed frame: a zero length on the wire, an empty
	// frame given to Send, or a stream that ends inside a frame.
	ErrBadFrame = errors.New("bad frame")

	// ErrUnknownProtocol reports a Protocol value that the operation does not accept.
	ErrUnknownProtocol = errors.New("unknown protocol")

	// ErrBadPong reports a heartbeat reply that does not echo the nonce sent.
	ErrBadPong = errors.New("heartbeat reply does not match")

	// ErrInvalidPeerID reports a string or ID that is not a secp256k1 libp2p PeerId
	// (identity.ErrInvalidPeerID).
	ErrInvalidPeerID = identity.ErrInvalidPeerID

	// ErrInvalidPubKey reports bytes that are not a 33-byte compressed secp256k1 public key
	// (identity.ErrInvalidPubKey).
	ErrInvalidPubKey = identity.ErrInvalidPubKey
)
