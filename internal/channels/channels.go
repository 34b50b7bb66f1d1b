// Package channels holds the payment-channel graph as the node knows it from the chain: every
// channel's last state reported by the channels contract and every node's latest announcement.
// docs/PROTOCOL.md section 4 defines the states and how they change.
//
// The package is pure: no I/O, no clock, no chain access. internal/chain's indexer fills a Graph
// from contract events; path selection reads immutable Snapshots. It imports no other relayd
// package and must not import go-ethereum's client or node packages (only its common types and
// crypto).
package channels

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Status is a channel's life-cycle state, with the contract's numbering.
type Status uint8

// The channel states of docs/PROTOCOL.md section 4.1. A channel never opened is Closed.
const (
	Closed         Status = 0
	Open           Status = 1
	PendingToClose Status = 2
)

// String returns "Closed", "Open" or "PendingToClose", or "Status(n)" for an unknown value.
func (s Status) String() string {
	switch s {
	case Closed:
		return "Closed"
	case Open:
		return "Open"
	case PendingToClose:
		return "PendingToClose"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Valid reports whether s is one of the three known states.
func (s Status) Valid() bool { return s <= PendingToClose }

// Channel is a unidirectional payment channel from Source to Destination as the contract last
// reported it.
type Channel struct {
	// ID is keccak256(Source ‖ Destination), the contract's channelIdOf.
	ID          [32]byte
	Source      common.Address
	Destination common.Address
	// Balance is the token amount locked in the channel, in the token's smallest unit. It is
	// never nil in a Channel returned by this package.
	Balance *big.Int
	// TicketIndex is the index of the last redeemed ticket of the current epoch (0: none).
	TicketIndex uint64
	// Epoch counts openings: 0 for a channel never opened, 1 after the first.
	Epoch  uint32
	Status Status
	// ClosureTime is when a PendingToClose channel can be finalized (chain time); zero otherwise.
	ClosureTime time.Time
}

// IDOf returns keccak256(src ‖ dst), the id of the channel from src to dst.
func IDOf(src, dst common.Address) [32]byte {
	var b [2 * common.AddressLength]byte
	copy(b[:common.AddressLength], src[:])
	copy(b[common.AddressLength:], dst[:])
	return crypto.Keccak256Hash(b[:])
}

// Usable reports whether tickets can be issued on c: it is Open with a positive balance. A
// PendingToClose channel still redeems tickets already issued but takes no new ones.
func (c Channel) Usable() bool {
	return c.Status == Open && c.Balance != nil && c.Balance.Sign() > 0
}

// Clone returns a deep copy of c (Balance is copied; a nil Balance becomes 0).
func (c Channel) Clone() Channel {
	if c.Balance == nil {
		c.Balance = new(big.Int)
	} else {
		c.Balance = new(big.Int).Set(c.Balance)
	}
	return c
}

// Equal reports whether a and b describe the same state of the same channel.
func (a Channel) Equal(b Channel) bool {
	ab, bb := a.Balance, b.Balance
	if ab == nil {
		ab = new(big.Int)
	}
	if bb == nil {
		bb = new(big.Int)
	}
	return a.ID == b.ID && a.Source == b.Source && a.Destination == b.Destination &&
		ab.Cmp(bb) == 0 && a.TicketIndex == b.TicketIndex && a.Epoch == b.Epoch &&
		a.Status == b.Status && a.ClosureTime.Equal(b.ClosureTime)
}

// Announcement binds a node's public key and network addresses to its account.
type Announcement struct {
	Account common.Address
	// PublicKey is the 33-byte SEC1 compressed secp256k1 key (the contract stores the 64-byte
	// uncompressed X ‖ Y; see PublicKeyFromContract).
	PublicKey []byte
	// Multiaddrs are the node's libp2p multiaddrs in text form, not validated here.
	Multiaddrs []string
	// Block is the block of the account's first announcement the index read (a later one
	// changes the key and addresses, not this): a layered topology's draw counts only accounts
	// announced before its epoch (docs/NETWORK.md). 0 for an index kept before the field.
	Block uint64
}

// Clone returns a deep copy of a.
func (a Announcement) Clone() Announcement {
	a.PublicKey = append([]byte(nil), a.PublicKey...)
	a.Multiaddrs = append([]string(nil), a.Multiaddrs...)
	return a
}

// PublicKeyFromContract converts the 64-byte X ‖ Y key the contract's Announcement event carries
// to the 33-byte compressed form. It fails with ErrBadPublicKey unless the bytes are a point on
// the curve.
func PublicKeyFromContract(xy []byte) ([]byte, error) {
	if len(xy) != 64 {
		return nil, fmt.Errorf("%w: %d bytes, want 64", ErrBadPublicKey, len(xy))
	}
	pub, err := crypto.UnmarshalPubkey(append([]byte{4}, xy...))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPublicKey, err)
	}
	return crypto.CompressPubkey(pub), nil
}
