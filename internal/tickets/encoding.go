package tickets

import (
	"encoding/binary"
	"fmt"
)

// Wire encoding, EncodedLen (168) bytes, integers big-endian (PROTOCOL.md §4):
//
//	offset  size  field
//	     0    32  ChannelID
//	    32    32  Amount
//	    64     8  Index
//	    72     4  Epoch
//	    76     7  WinProb (56 bits)
//	    83    20  Challenge
//	   103    65  Signature r ‖ s ‖ v
const (
	offAmount    = 32
	offIndex     = 64
	offEpoch     = 72
	offWinProb   = 76
	offChallenge = 83
	offSignature = 103
)

// MarshalBinary returns the EncodedLen-byte wire encoding of t. It fails, like Validate, for a
// ticket that cannot be valid (including an unsigned one), so every encoding decodes.
func (t *Ticket) MarshalBinary() ([]byte, error) {
	return t.AppendBinary(make([]byte, 0, EncodedLen))
}

// AppendBinary appends the wire encoding of t to b; see MarshalBinary.
func (t *Ticket) AppendBinary(b []byte) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return b, fmt.Errorf("encode ticket: %w", err)
	}
	b = append(b, t.ChannelID[:]...)
	amount := t.Amount.Bytes32()
	b = append(b, amount[:]...)
	b = binary.BigEndian.AppendUint64(b, t.Index)
	b = binary.BigEndian.AppendUint32(b, t.Epoch)
	b = append(b, byte(t.WinProb>>48), byte(t.WinProb>>40), byte(t.WinProb>>32),
		byte(t.WinProb>>24), byte(t.WinProb>>16), byte(t.WinProb>>8), byte(t.WinProb))
	b = append(b, t.Challenge[:]...)
	return append(b, t.Signature[:]...), nil
}

// UnmarshalBinary decodes a wire encoding into t. It fails with ErrTooShort or ErrTooLong unless
// len(b) == EncodedLen, and like Validate for a field no valid ticket has; on failure t is
// unchanged. It checks neither the signer nor the signature beyond its v byte: see Signer.
func (t *Ticket) UnmarshalBinary(b []byte) error {
	switch {
	case len(b) < EncodedLen:
		return fmt.Errorf("decode ticket: %d bytes: %w", len(b), ErrTooShort)
	case len(b) > EncodedLen:
		return fmt.Errorf("decode ticket: %d bytes: %w", len(b), ErrTooLong)
	}
	var d Ticket
	copy(d.ChannelID[:], b[:offAmount])
	d.Amount.SetBytes32(b[offAmount:offIndex])
	d.Index = binary.BigEndian.Uint64(b[offIndex:offEpoch])
	d.Epoch = binary.BigEndian.Uint32(b[offEpoch:offWinProb])
	var wp [8]byte
	copy(wp[1:], b[offWinProb:offChallenge])
	d.WinProb = binary.BigEndian.Uint64(wp[:])
	copy(d.Challenge[:], b[offChallenge:offSignature])
	copy(d.Signature[:], b[offSignature:])
	if err := d.Validate(); err != nil {
		return fmt.Errorf("decode ticket: %w", err)
	}
	*t = d
	return nil
}
