package chain

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

// A ticket below tickets.MaxWinProb wins by a draw over its holder's VRF output (PROTOCOL.md
// §4.5): redeeming it, the client gives the contract its own public key (the holder key, which
// must hash to the sending account) and its VRF proof over the ticket hash, made with the key it
// signs transactions with. A ticket that always wins needs no proof and goes with zeros.

// holderKey returns the client's public key as the contract's PublicKey: the x and y of the
// uncompressed key, the 64 bytes whose Keccak-256 gives the client's address.
func (c *Client) holderKey() contracts.RelayChannelsPublicKey {
	pub := crypto.FromECDSAPub(&c.key.PublicKey)
	return contracts.RelayChannelsPublicKey{X: new(big.Int).SetBytes(pub[1:33]), Y: new(big.Int).SetBytes(pub[33:])}
}

// drawProof returns the client's VRF proof over tk's hash as the contract's struct when tk needs
// one (it does not always win), else a zero proof, which the contract does not read. It fails
// (with the vrf package's ErrBadKey or ErrUnprovable) only when no proof the contract accepts
// exists for the client's key and this ticket, which has probability about 2^-127.
func (c *Client) drawProof(tk *tickets.Ticket) (contracts.RelayVRFProof, error) {
	if tk.AlwaysWins() {
		return zeroProof(), nil
	}
	h := tk.Hash(c.ChainID(), c.channels)
	p, err := vrf.Prove(c.key, h[:])
	if err != nil {
		return contracts.RelayVRFProof{}, fmt.Errorf("vrf proof for ticket %d: %w", tk.Index, err)
	}
	return proofArg(&p), nil
}

// proofArg converts a vrf.Proof to the binding's struct, word for word (the order of
// vrf.Proof's MarshalBinary, which is the struct's ABI encoding).
func proofArg(p *vrf.Proof) contracts.RelayVRFProof {
	w := func(b [32]byte) *big.Int { return new(big.Int).SetBytes(b[:]) }
	return contracts.RelayVRFProof{
		GammaX: w(p.Gamma.X), GammaY: w(p.Gamma.Y), C: w(p.C), S: w(p.S),
		SHX: w(p.SH.X), SHY: w(p.SH.Y), CGammaX: w(p.CGamma.X), CGammaY: w(p.CGamma.Y), ZInv: w(p.ZInv),
	}
}

// zeroProof is the proof sent with a ticket that always wins: nine zero words (the ABI
// encoder needs non-nil values).
func zeroProof() contracts.RelayVRFProof {
	z := new(big.Int)
	return contracts.RelayVRFProof{GammaX: z, GammaY: z, C: z, S: z, SHX: z, SHY: z, CGammaX: z, CGammaY: z, ZInv: z}
}
