// Package vrf is relayd's verifiable random function (VRF) on secp256k1, shaped so that the
// channels contract can check a proof cheaply (contracts/RelayVRF.sol verifies exactly what
// Verify verifies). It owns the construction, the proof's encoding and its known-answer vectors
// (testdata/vectors.json); it does not know tickets or channels.
//
// The package is pure: no I/O, no clock, no state, no randomness (proofs are deterministic). It
// imports no relayd package, only the standard library, go-ethereum's crypto (Keccak-256,
// ecrecover, its libsecp256k1 binding) and decred's secp256k1 field and scalar arithmetic.
//
// # Why
//
// A ticket used to win iff the top 56 bits of keccak256(ticketHash ‖ response) were ≤ winProb,
// and a message's sender derives every hop's proof-of-relay secrets, so it knew whether its first
// ticket would win before sending it and could re-seal until it lost. With the VRF the win also
// depends on beta = VRF_sk(ticketHash) of the ticket's holder (the channel's destination, who
// redeems it): win iff top56(keccak256(ticketHash ‖ response ‖ beta)) ≤ winProb
// (docs/PROTOCOL.md §4.5). The issuer cannot compute beta, and the holder cannot choose it.
//
// # Construction
//
// Notation: p the field prime, n the group order, G the generator; points are X ‖ Y, two 32-byte
// big-endian words (64 bytes); address(P) = keccak256(X ‖ Y)[12:]; ‖ is concatenation; the tags
// are ASCII strings hashed as they are, without a length or terminator.
//
//   - Hash to curve, try-and-increment: for ctr = 0 … 255, x = keccak256("relayd-vrf-h2c-v1" ‖
//     pk.X ‖ pk.Y ‖ alpha ‖ uint8(ctr)) mod p (17 + 64 + len(alpha) + 1 bytes hashed); the first
//     ctr for which a = x³ + 7 is a square mod p gives H = (x, y), y = a^((p+1)/4) mod p taken
//     even (p − y if odd). Half of all counters work; no counter working has probability 2^-256.
//   - Gamma = sk·H. Output beta = keccak256("relayd-vrf-output-v1" ‖ Gamma.X ‖ Gamma.Y) (84 bytes
//     hashed).
//   - Nonce: k = keccak256("relayd-vrf-nonce-v1" ‖ sk ‖ H.X ‖ H.Y ‖ uint8(j)) mod n for the first
//     j = 0, 1, … that gives a usable proof (k, c, s non-zero and s·H ≠ ±c·Gamma; j = 0 but with
//     probability about 2^-255). Only the prover computes it.
//   - U = k·G, V = k·H, c = keccak256("relayd-vrf-challenge-v1" ‖ H ‖ pk ‖ Gamma ‖ address(U) ‖ V)
//     mod n (23 + 3·64 + 20 + 64 = 299 bytes hashed), s = k + c·sk mod n.
//   - Witnesses for the contract: sH = s·H, cGamma = c·Gamma (affine) and
//     zInv = (sH.X − cGamma.X)^-1 mod p.
//
// Verification (Verify and RelayVRF.verify, step for step; every failure is a refusal, the
// contract returning false, which reverts only when a precompile call runs out of gas):
//
//  1. pk.X and Gamma.X in [1, n), c and s in [1, n), every other coordinate and zInv below p;
//     pk, Gamma, sH and cGamma on the curve (which excludes the point at infinity).
//  2. H recomputed; H.X in [1, n).
//  3. address(U) = ecrecover(n − s·pk.X mod n, 27 + parity(pk.Y), pk.X, n − c·pk.X mod n), which
//     is address(pk.X^-1·(−c·pk.X·pk + s·pk.X·G)) = address(s·G − c·pk); non-zero.
//  4. ecrecover(0, 27 + parity(H.Y), H.X, H.X·s mod n) == address(sH) (it returns address(s·H)).
//  5. ecrecover(0, 27 + parity(Gamma.Y), Gamma.X, Gamma.X·c mod n) == address(cGamma).
//  6. (sH.X − cGamma.X)·zInv ≡ 1 (mod p); V = sH − cGamma by the affine formulas with zInv:
//     λ = (sH.Y + cGamma.Y)·zInv, V.X = λ² − sH.X − cGamma.X, V.Y = λ·(sH.X − V.X) − sH.Y.
//  7. c == keccak256("relayd-vrf-challenge-v1" ‖ H ‖ pk ‖ Gamma ‖ address(U) ‖ V) mod n.
//
// The contract thus needs three ecrecovers, one modexp per hash-to-curve counter tried, a few
// Keccak-256 and mulmods, and no inverse or general scalar multiplication. x in [1, n) is needed
// for ecrecover's r: a key, H or Gamma with x ≥ n (probability about 2^-128 each) cannot be used
// (ErrBadKey, ErrUnprovable).
//
// # Security
//
// Uniqueness: H is a function of (pk, alpha) (the first working counter), and a valid proof is a
// Chaum–Pedersen proof that log_G(pk) = log_H(Gamma), made non-interactive by the challenge
// hash: for Gamma ≠ sk·H, fixed (Gamma, U, V) admit a single c, so a forger must hit the hash,
// probability 1/n per try. The witnesses are checked through addresses, 160 bits: passing a
// wrong sH or cGamma needs a point whose address equals that of s·H or c·Gamma, where c is a
// hash over that very point, about 2^-160 per try with no birthday shortcut (both sides change
// together). So each key has one output per input, and Prove is deterministic.
// Pseudorandomness: without sk, Gamma = sk·H for a hash-derived H is indistinguishable from a
// random point (DDH on secp256k1, H a random oracle), and proofs reveal nothing more (they are
// simulatable), so beta is unpredictable even to someone who has seen other inputs' proofs.
// Hence the ticket's issuer, who knows the response, cannot tell whether the ticket wins (every
// re-sealed packet carries a new ticket hash with a fresh beta), and the holder cannot grind:
// its key is fixed by the channel, alpha is the ticket hash fixed by the issuer's signature,
// beta is unique for both, and the response is the one scalar that opens the challenge. The
// holder still needs the next hop's acknowledgement to learn the response.
//
// Side channels: with cgo, the secret multiplications (sk·H, k·G, k·H) use libsecp256k1's
// constant-time one through go-ethereum's binding; without cgo decred's variable-time one, as
// internal/packet's ECDH does.
//
// # Encoding
//
// A Proof encodes as nine 32-byte big-endian words, 288 bytes (ProofLen): Gamma.X, Gamma.Y, C, S,
// SH.X, SH.Y, CGamma.X, CGamma.Y, ZInv. That is also the ABI encoding of the static struct
// RelayVRF.Proof {uint256 gammaX; gammaY; c; s; sHX; sHY; cGammaX; cGammaY; zInv} the contract
// takes: verify(uint256 pkX, uint256 pkY, bytes32 alpha, Proof memory p) returns (bool ok,
// bytes32 beta). The contract takes 32-byte inputs (a ticket hash); this package any length.
//
// # Cost
//
// Measured by TestVerifyGas (go test -run TestVerifyGas -v ./internal/vrf), Osaka rules, the
// library call alone with the proof in memory: 17,338 gas when the first hash-to-curve counter
// works, +4,436 for each further counter (one 32-byte modexp, 4,048 under EIP-7883), 22,254 on
// average over 64 tickets (expected 21,774: one further counter on average). Of that, 9,300 are
// the three ecrecovers. The proof adds 288 bytes of call data per ticket (about 4,600 gas at 16
// per non-zero byte). Go, on the 2-core Xeon of the development machine (go test -bench . ,
// inputs cycled so that the hash to curve takes its mean two square roots): Prove about 175 µs,
// OutputOf 50 µs, Verify 120–140 µs, HashToCurve 22–26 µs; without cgo (decred's variable-time
// multiplication and ecrecover) about 610, 130, 430 and 25 µs.
package vrf
