// Package tickets defines relayd's payment ticket: its fields, the hash the channels contract
// checks (docs/PROTOCOL.md section 4), signing and signer recovery, the fixed-size wire encoding,
// and the amount rule.
//
// The package is pure: no I/O, no clock, no state. Whether a ticket is acceptable for a channel
// (its source, status, epoch, index and balance) is decided by the callers that know the channel
// (internal/relay, internal/channels); proof-of-relay math is internal/por's. It imports no other
// relayd package. Signatures use go-ethereum's crypto (libsecp256k1 through cgo).
package tickets

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

const (
	// EncodedLen is the length of a ticket's wire encoding (MarshalBinary).
	EncodedLen = 32 + 32 + 8 + 4 + 7 + 20 + 65

	// MaxWinProb is the largest win probability, 2^56-1: a ticket with it always wins. A ticket
	// with win probability w wins with probability (w+1)/2^56.
	MaxWinProb uint64 = 1<<56 - 1

	// PricePerRelayer is what a ticket pays per relayer still ahead of its receiver, in the
	// token's smallest unit: 0.01 token (10^16 of 10^18).
	PricePerRelayer uint64 = 10_000_000_000_000_000
)

// Ticket is a probabilistic payment from a channel's source to its destination, redeemable once
// the destination learns the proof-of-relay response that opens Challenge.
type Ticket struct {
	// ChannelID is keccak256(source ‖ destination), see ChannelID.
	ChannelID [32]byte
	// Amount is paid to the destination if the ticket wins, in the token's smallest unit.
	Amount uint256.Int
	// Index orders a channel's tickets within an epoch; it starts at 1 and only grows, and the
	// contract pays only indexes above the last redeemed one.
	Index uint64
	// Epoch is the channel epoch the ticket is valid in (1 after the first opening).
	Epoch uint32
	// WinProb is the 56-bit win probability; MaxWinProb means always.
	WinProb uint64
	// Challenge is the proof-of-relay challenge address((own + ack_next)·G), see internal/por.
	Challenge [20]byte
	// Signature is the source's signature r ‖ s ‖ v (v is 27 or 28, s is low) over
	// EthSignedHash(Hash(chainID, contract)), as the contract's redeemTicket takes it.
	Signature [65]byte
}

// ChannelID returns keccak256(src ‖ dst), the id of the channel from src to dst, as the
// contract's channelIdOf computes it.
func ChannelID(src, dst common.Address) [32]byte {
	var b [2 * common.AddressLength]byte
	copy(b[:common.AddressLength], src[:])
	copy(b[common.AddressLength:], dst[:])
	return crypto.Keccak256Hash(b[:])
}

// AmountFor returns PricePerRelayer × relayersAhead, the value of a ticket whose issuer still has
// relayersAhead relayers ahead of it on the packet's path (its receiver counts when it is a
// relayer, the recipient never does), before the sender's padding (PaddedAmount): without
// padding, for a message over 2 relayers the sender issues AmountFor(2), the first relayer
// AmountFor(1) and the last relayer AmountFor(0), which is 0.
// relayersAhead must not be negative; a negative count is a programming error and panics.
func AmountFor(relayersAhead int) uint256.Int {
	if relayersAhead < 0 {
		panic(fmt.Sprintf("tickets: AmountFor(%d): negative relayer count", relayersAhead))
	}
	var a uint256.Int
	a.SetUint64(PricePerRelayer)
	a.Mul(&a, uint256.NewInt(uint64(relayersAhead)))
	return a
}

// Hash returns the ticket hash the channels contract deployed at contract on chain chainID
// checks: keccak256(abi.encode(chainID, contract, ChannelID, Amount, Index, Epoch, WinProb,
// Challenge)), eight 32-byte big-endian words. The signature is not part of it.
func (t *Ticket) Hash(chainID uint64, contract common.Address) common.Hash {
	var b [8 * 32]byte
	binary.BigEndian.PutUint64(b[24:32], chainID)
	copy(b[32+12:64], contract[:])
	copy(b[64:96], t.ChannelID[:])
	t.Amount.PutUint256(b[96:128])
	binary.BigEndian.PutUint64(b[128+24:160], t.Index)
	binary.BigEndian.PutUint32(b[160+28:192], t.Epoch)
	binary.BigEndian.PutUint64(b[192+24:224], t.WinProb)
	copy(b[224+12:256], t.Challenge[:])
	return crypto.Keccak256Hash(b[:])
}

// EthSignedHash returns the EIP-191 digest keccak256("\x19Ethereum Signed Message:\n32" ‖ h),
// what a ticket's signature actually signs (OpenZeppelin's toEthSignedMessageHash).
func EthSignedHash(h common.Hash) common.Hash {
	const prefix = "\x19Ethereum Signed Message:\n32"
	var b [len(prefix) + 32]byte
	copy(b[:], prefix)
	copy(b[len(prefix):], h[:])
	return crypto.Keccak256Hash(b[:])
}

// Sign sets t.Signature to key's signature for the channels contract at contract on chain
// chainID. key must be the channel source's. It fails when a field is out of range (see
// Validate), leaving t unchanged.
func (t *Ticket) Sign(key *ecdsa.PrivateKey, chainID uint64, contract common.Address) error {
	if err := t.validateFields(); err != nil {
		return fmt.Errorf("sign ticket: %w", err)
	}
	digest := EthSignedHash(t.Hash(chainID, contract))
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return fmt.Errorf("sign ticket: %w", err)
	}
	copy(t.Signature[:], sig)
	t.Signature[64] += 27
	return nil
}

// Signer recovers the address that signed t for the channels contract at contract on chain
// chainID. A well-formed signature by another key, or over other fields, recovers a different
// address: the caller compares it with the channel's source. It fails with ErrBadSignature for a
// signature the contract would reject as malformed.
func (t *Ticket) Signer(chainID uint64, contract common.Address) (common.Address, error) {
	if err := t.checkSignature(); err != nil {
		return common.Address{}, err
	}
	digest := EthSignedHash(t.Hash(chainID, contract))
	var sig [65]byte
	copy(sig[:], t.Signature[:])
	sig[64] -= 27
	pub, err := crypto.Ecrecover(digest[:], sig[:])
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	return common.BytesToAddress(crypto.Keccak256(pub[1:])[12:]), nil
}

// Validate reports the first field a ticket cannot have: ErrBadIndex, ErrBadEpoch,
// ErrBadWinProb, ErrBadChallenge, or ErrBadSignature when v is not 27 or 28. It does not check
// who signed it, nor anything that depends on the channel.
func (t *Ticket) Validate() error {
	if err := t.validateFields(); err != nil {
		return err
	}
	if v := t.Signature[64]; v != 27 && v != 28 {
		return fmt.Errorf("%w: v = %d", ErrBadSignature, v)
	}
	return nil
}

func (t *Ticket) validateFields() error {
	switch {
	case t.Index == 0:
		return ErrBadIndex
	case t.Epoch == 0:
		return ErrBadEpoch
	case t.WinProb > MaxWinProb:
		return fmt.Errorf("%w: %#x", ErrBadWinProb, t.WinProb)
	case t.Challenge == [20]byte{}:
		return ErrBadChallenge
	}
	return nil
}

var (
	// secp256k1N is the group order n, big-endian.
	secp256k1N = [32]byte{
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
		0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
	}
	// secp256k1HalfN is n/2 (rounded down), the largest s the contract (OpenZeppelin ECDSA) accepts.
	secp256k1HalfN = [32]byte{
		0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
	}
)

// checkSignature applies the contract's malleability rules: v in {27, 28}, 0 < r < n, 0 < s <= n/2.
func (t *Ticket) checkSignature() error {
	r, s, v := t.Signature[:32], t.Signature[32:64], t.Signature[64]
	var zero [32]byte
	switch {
	case v != 27 && v != 28:
		return fmt.Errorf("%w: v = %d", ErrBadSignature, v)
	case bytes.Equal(r, zero[:]) || bytes.Compare(r, secp256k1N[:]) >= 0:
		return fmt.Errorf("%w: r out of range", ErrBadSignature)
	case bytes.Equal(s, zero[:]) || bytes.Compare(s, secp256k1HalfN[:]) > 0:
		return fmt.Errorf("%w: s out of range or high", ErrBadSignature)
	}
	return nil
}
