// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title RelayVRF
/// @notice Verifier of relayd's verifiable random function on secp256k1 (internal/vrf, whose
/// package comment is the specification): a ticket's holder proves beta = VRF_sk(alpha) for its
/// key, and the ticket's win depends on beta, which its issuer cannot know.
/// @dev Internal functions only, so it is inlined into the contract that uses it (no deployment,
/// no linking). The proof carries witnesses that replace the costly operations: the products
/// s·H and c·Gamma (each checked with one ecrecover, which returns address(k·P) for
/// ecrecover(0, 27 + parity(P.y), P.x, P.x·k mod n)) and the inverse (s·H).x − (c·Gamma).x
/// (checked with one mulmod). The hash to curve is recomputed with the modexp precompile.
/// Cost (Osaka rules): see internal/vrf's package comment. The Go verifier, internal/vrf.Verify,
/// follows verify below step for step; change both together, with the known-answer vectors.
library RelayVRF {
    /// @notice A proof: nine words, ABI-encoded as nine uint256 (288 bytes, static), the layout
    /// of internal/vrf.Proof's MarshalBinary.
    /// @param gammaX Gamma = sk·H, the point the output is hashed from: x in [1, n).
    /// @param gammaY its y, below p.
    /// @param c the challenge, in [1, n).
    /// @param s the response k + c·sk mod n, in [1, n).
    /// @param sHX the witness s·H: x below p.
    /// @param sHY its y, below p.
    /// @param cGammaX the witness c·Gamma: x below p.
    /// @param cGammaY its y, below p.
    /// @param zInv the witness (sHX − cGammaX)^-1 mod p, below p.
    struct Proof {
        uint256 gammaX;
        uint256 gammaY;
        uint256 c;
        uint256 s;
        uint256 sHX;
        uint256 sHY;
        uint256 cGammaX;
        uint256 cGammaY;
        uint256 zInv;
    }

    /// @notice The secp256k1 field prime p.
    uint256 internal constant P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F;
    /// @notice The secp256k1 group order n.
    uint256 internal constant N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
    /// @notice (p + 1) / 4: a^((p+1)/4) is a square root of a when a is a square (p ≡ 3 mod 4).
    uint256 internal constant SQRT_EXP = 0x3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFBFFFFF0C;

    /// @notice "relayd-vrf-h2c-v1" (17 bytes), left-aligned.
    bytes32 internal constant DST_H2C = 0x72656c6179642d7672662d6832632d7631000000000000000000000000000000;
    /// @notice "relayd-vrf-challenge-v1" (23 bytes), left-aligned.
    bytes32 internal constant DST_CHALLENGE = 0x72656c6179642d7672662d6368616c6c656e67652d7631000000000000000000;
    /// @notice "relayd-vrf-output-v1" (20 bytes), left-aligned.
    bytes32 internal constant DST_OUTPUT = 0x72656c6179642d7672662d6f75747075742d7631000000000000000000000000;

    /// @notice Checks that p proves p.gamma to be the VRF point of the key (pkX, pkY) for alpha.
    /// @dev The caller decides whose key it is (e.g. address(keccak256(pkX ‖ pkY)) == msg.sender).
    /// Reverts only if a precompile call runs out of gas; every invalid input returns false.
    /// @return ok whether the proof is valid.
    /// @return beta the VRF output keccak256("relayd-vrf-output-v1" ‖ gammaX ‖ gammaY) if ok, else 0.
    function verify(uint256 pkX, uint256 pkY, bytes32 alpha, Proof memory p)
        internal
        view
        returns (bool ok, bytes32 beta)
    {
        // 1. Ranges and curve membership.
        if (!_wellFormed(pkX, pkY, p)) return (false, bytes32(0));
        // 2. H, recomputed; its x must be usable as ecrecover's r.
        (uint256 hX, uint256 hY) = hashToCurve(pkX, pkY, alpha);
        if (hX == 0 || hX >= N) return (false, bytes32(0));
        // 3. address(U) = address(s·G − c·pk) = ecrecover(−s·pkX, v(pk), pkX, −c·pkX).
        address u = _ecrecover(N - mulmod(p.s, pkX, N), 27 + (pkY & 1), pkX, N - mulmod(p.c, pkX, N));
        if (u == address(0)) return (false, bytes32(0));
        // 4. sH = s·H.
        if (_ecrecover(0, 27 + (hY & 1), hX, mulmod(hX, p.s, N)) != _addressOf(p.sHX, p.sHY)) {
            return (false, bytes32(0));
        }
        // 5. cGamma = c·Gamma.
        if (_ecrecover(0, 27 + (p.gammaY & 1), p.gammaX, mulmod(p.gammaX, p.c, N)) != _addressOf(p.cGammaX, p.cGammaY)) {
            return (false, bytes32(0));
        }
        // 6, 7. V = sH − cGamma with the inverse witness, and the challenge.
        (bool vOk, uint256 c) = _challenge(hX, hY, pkX, pkY, p, u);
        if (!vOk || c != p.c) return (false, bytes32(0));
        return (true, output(p.gammaX, p.gammaY));
    }

    /// @notice The point H the key (pkX, pkY) maps alpha to: for the first ctr = 0 … 255 such that
    /// x = keccak256("relayd-vrf-h2c-v1" ‖ pkX ‖ pkY ‖ alpha ‖ uint8(ctr)) mod p has x³ + 7 a square,
    /// (x, y) with y = (x³ + 7)^((p+1)/4) mod p taken even. (0, 0) if no counter works
    /// (probability 2^-256; x = 0 never does, 7 being no square mod p).
    /// @dev The preimage (114 bytes) and the modexp input (192 bytes) are laid out past the free
    /// memory pointer, which stays unchanged.
    function hashToCurve(uint256 pkX, uint256 pkY, bytes32 alpha) internal view returns (uint256 x, uint256 y) {
        assembly ("memory-safe") {
            let m := mload(0x40)
            mstore(m, DST_H2C)
            mstore(add(m, 17), pkX)
            mstore(add(m, 49), pkY)
            mstore(add(m, 81), alpha)
            // modexp(base = a, exponent = SQRT_EXP, modulus = P), all 32 bytes long.
            let q := add(m, 0x80)
            mstore(q, 0x20)
            mstore(add(q, 0x20), 0x20)
            mstore(add(q, 0x40), 0x20)
            mstore(add(q, 0x80), SQRT_EXP)
            mstore(add(q, 0xa0), P)
            for { let ctr := 0 } lt(ctr, 256) { ctr := add(ctr, 1) } {
                mstore8(add(m, 113), ctr)
                let cx := mod(keccak256(m, 114), P)
                let a := addmod(mulmod(mulmod(cx, cx, P), cx, P), 7, P)
                mstore(add(q, 0x60), a)
                if iszero(staticcall(gas(), 0x05, q, 0xc0, 0x00, 0x20)) { revert(0, 0) }
                let cy := mload(0x00)
                if eq(mulmod(cy, cy, P), a) {
                    if and(cy, 1) { cy := sub(P, cy) }
                    x := cx
                    y := cy
                    break
                }
            }
        }
    }

    /// @notice The VRF output of a (verified) Gamma: keccak256("relayd-vrf-output-v1" ‖ gammaX ‖ gammaY).
    function output(uint256 gammaX, uint256 gammaY) internal pure returns (bytes32 beta) {
        assembly ("memory-safe") {
            let m := mload(0x40)
            mstore(m, DST_OUTPUT)
            mstore(add(m, 20), gammaX)
            mstore(add(m, 52), gammaY)
            beta := keccak256(m, 84)
        }
    }

    /// @dev Step 1: every coordinate below p, pkX and gammaX in [1, n) (ecrecover's r), c and s in
    /// [1, n), and pk, Gamma, sH and cGamma on the curve (the point at infinity has no affine form:
    /// (0, 0) is not on it). "v in [1, n)" is written lt(sub(v, 1), sub(N, 1)): 0 wraps around.
    function _wellFormed(uint256 pkX, uint256 pkY, Proof memory p) private pure returns (bool ok) {
        assembly ("memory-safe") {
            // y² = x³ + 7 mod p, for coordinates below p.
            function onCurve(x, y, q) -> r {
                r := eq(mulmod(y, y, q), addmod(mulmod(mulmod(x, x, q), x, q), 7, q))
            }
            let nm1 := sub(N, 1)
            let gX := mload(p)
            let gY := mload(add(p, 0x20))
            ok := and(lt(sub(pkX, 1), nm1), lt(pkY, P))
            ok := and(ok, and(lt(sub(gX, 1), nm1), lt(gY, P)))
            ok := and(ok, and(lt(sub(mload(add(p, 0x40)), 1), nm1), lt(sub(mload(add(p, 0x60)), 1), nm1)))
            ok := and(ok, and(lt(mload(add(p, 0x80)), P), lt(mload(add(p, 0xa0)), P)))
            ok := and(ok, and(lt(mload(add(p, 0xc0)), P), lt(mload(add(p, 0xe0)), P)))
            ok := and(ok, lt(mload(add(p, 0x100)), P))
            // Only for coordinates below p (mulmod would reduce larger ones).
            if ok {
                ok := and(onCurve(pkX, pkY, P), onCurve(gX, gY, P))
                ok := and(ok, onCurve(mload(add(p, 0x80)), mload(add(p, 0xa0)), P))
                ok := and(ok, onCurve(mload(add(p, 0xc0)), mload(add(p, 0xe0)), P))
            }
        }
    }

    /// @dev Steps 6 and 7: V = sH − cGamma in affine coordinates, with zInv checked to invert
    /// sHX − cGammaX (which also excludes sH = ±cGamma), then
    /// c = keccak256("relayd-vrf-challenge-v1" ‖ H ‖ pk ‖ Gamma ‖ address(U) ‖ V) mod n, points as
    /// x ‖ y, the address as 20 bytes (299 bytes, hashed past the free memory pointer). All
    /// proof coordinates are below p (step 1), so P − v is in [1, P] and addmod reduces it.
    function _challenge(uint256 hX, uint256 hY, uint256 pkX, uint256 pkY, Proof memory p, address u)
        private
        pure
        returns (bool ok, uint256 c)
    {
        assembly ("memory-safe") {
            let sHX := mload(add(p, 0x80))
            let cGX := mload(add(p, 0xc0))
            let zInv := mload(add(p, 0x100))
            ok := eq(mulmod(addmod(sHX, sub(P, cGX), P), zInv, P), 1)
            if ok {
                // sH + (−cGamma): lambda = (sHY + cGammaY) / (sHX − cGammaX);
                // vX = lambda² − sHX − cGammaX; vY = lambda·(sHX − vX) − sHY.
                let sHY := mload(add(p, 0xa0))
                let lambda := mulmod(addmod(sHY, mload(add(p, 0xe0)), P), zInv, P)
                let vX := addmod(mulmod(lambda, lambda, P), sub(P, addmod(sHX, cGX, P)), P)
                let vY := addmod(mulmod(lambda, addmod(sHX, sub(P, vX), P), P), sub(P, sHY), P)
                let m := mload(0x40)
                mstore(m, DST_CHALLENGE)
                mstore(add(m, 23), hX)
                mstore(add(m, 55), hY)
                mstore(add(m, 87), pkX)
                mstore(add(m, 119), pkY)
                mstore(add(m, 151), mload(p))
                mstore(add(m, 183), mload(add(p, 0x20)))
                mstore(add(m, 215), shl(96, u))
                mstore(add(m, 235), vX)
                mstore(add(m, 267), vY)
                c := mod(keccak256(m, 299), N)
            }
        }
    }

    /// @dev The ecrecover precompile on (hash, v, r, s): address(r^-1·(s·R − hash·G)), or 0 for
    /// input it refuses. Reverts if the call itself fails (out of gas).
    function _ecrecover(uint256 hash, uint256 v, uint256 r, uint256 s) private view returns (address a) {
        assembly ("memory-safe") {
            let m := mload(0x40)
            mstore(m, hash)
            mstore(add(m, 0x20), v)
            mstore(add(m, 0x40), r)
            mstore(add(m, 0x60), s)
            mstore(0x00, 0)
            if iszero(staticcall(gas(), 0x01, m, 0x80, 0x00, 0x20)) { revert(0, 0) }
            a := mload(0x00)
        }
    }

    /// @dev address(keccak256(x ‖ y)), in the scratch space.
    function _addressOf(uint256 x, uint256 y) private pure returns (address a) {
        assembly ("memory-safe") {
            mstore(0x00, x)
            mstore(0x20, y)
            a := and(keccak256(0x00, 0x40), 0xffffffffffffffffffffffffffffffffffffffff)
        }
    }
}
