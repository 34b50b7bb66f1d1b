// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {RelayVRF} from "./RelayVRF.sol";

/// @title RelayChannels
/// @notice The one global settlement contract of relayd: node announcements and unidirectional
/// payment channels funded by their source, paid out by probabilistic tickets carrying a
/// proof-of-relay challenge. docs/PROTOCOL.md section 4 is the specification of this contract.
/// A ticket below MAX_WIN_PROB wins by a draw its issuer cannot foresee: the holder (the channel's
/// destination, who redeems it) proves its VRF output over the ticket hash (RelayVRF), and the
/// draw hashes that output with the proof-of-relay response.
/// @dev Authorisation is structural: every state-changing function derives the channel it acts on
/// from msg.sender (as source for fund/initiate/finalize, as destination for redeem and
/// closeIncomingChannel), so nobody can name, let alone change, a channel that is not theirs.
contract RelayChannels {
    using SafeERC20 for IERC20;

    /// @notice Life cycle of a channel. Closed is also the state of a channel never opened.
    enum ChannelStatus {
        Closed,
        Open,
        PendingToClose
    }

    /// @notice Per-channel state, keyed by channelId = keccak256(abi.encodePacked(source, destination)).
    /// @param balance tokens locked in the channel, owed to the destination by redeemed tickets.
    /// @param ticketIndex index of the last redeemed ticket in the current epoch (0: none yet).
    /// @param epoch incremented every time the channel is (re)opened; tickets of older epochs are void.
    /// @param status see ChannelStatus.
    /// @param closureTime when PendingToClose: earliest time finalizeChannelClosure succeeds; else 0.
    struct Channel {
        uint256 balance;
        uint64 ticketIndex;
        uint32 epoch;
        ChannelStatus status;
        uint64 closureTime;
    }

    /// @notice A ticket as the destination submits it. The signature is by the channel's source over
    /// toEthSignedMessageHash(ticketHash(...)), as 65 bytes r ‖ s ‖ v with v in {27, 28} and low s.
    struct Ticket {
        bytes32 channelId;
        uint256 amount;
        uint64 index;
        uint32 epoch;
        uint64 winProb;
        address challenge;
        bytes signature;
    }

    /// @notice One ticket in a redeemTickets group: the fields that differ between the tickets of
    /// a channel. channelId and epoch come from the group. The signature is EIP-2098's compact
    /// form: r, and vs = s with (v - 27) in its top bit, 64 bytes instead of a dynamic 65-byte
    /// array (which would cost an offset and a length word more and a third word for v). proof is
    /// the holder's VRF proof over the ticket hash (nine static words); a ticket with winProb ==
    /// MAX_WIN_PROB needs none, and its proof is not read (zeros will do).
    struct BatchTicket {
        uint256 amount;
        uint64 index;
        uint64 winProb;
        address challenge;
        bytes32 r;
        bytes32 vs;
        bytes32 response;
        RelayVRF.Proof proof;
    }

    /// @notice A secp256k1 public key as its affine coordinates, the 64 bytes x ‖ y of an
    /// uncompressed key without its 0x04 prefix. The holder key of a redemption is the
    /// redeemer's own: address(keccak256(x ‖ y)) must be msg.sender.
    struct PublicKey {
        uint256 x;
        uint256 y;
    }

    /// @notice The tickets of one channel and epoch in a redeemTickets call, in increasing index
    /// order. channelId must be channelIdOf(source, msg.sender), as in redeemTicket.
    struct ChannelTickets {
        bytes32 channelId;
        address source;
        uint32 epoch;
        BatchTicket[] tickets;
    }

    /// @notice Order of the secp256k1 group.
    uint256 internal constant SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
    /// @notice x coordinate of the secp256k1 generator G.
    uint256 internal constant SECP256K1_GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798;
    /// @notice ecrecover's v for a point with G's y parity (G's y coordinate is even).
    uint8 internal constant SECP256K1_G_V = 27;

    /// @notice Largest win probability: a ticket with winProb == MAX_WIN_PROB always wins.
    uint64 public constant MAX_WIN_PROB = (uint64(1) << 56) - 1;

    /// @notice The token channels are funded and tickets are paid in.
    IERC20 public immutable token;
    /// @notice Seconds between initiateChannelClosure and the earliest finalizeChannelClosure.
    uint64 public immutable closurePeriod;

    /// @notice Channel state by channel id.
    mapping(bytes32 channelId => Channel) public channels;

    /// @notice The account that deployed the contract; the only one allowed to set minWinProb.
    address public immutable owner;

    /// @notice The network's minimum win probability (56-bit, like Ticket.winProb; MAX_WIN_PROB
    /// means every ticket wins). Relayers refuse tickets below it when they accept them.
    /// @dev Deliberately not enforced by redeemTicket or redeemTickets: a relayer accepted its
    /// tickets under the minimum in force at the time, and raising the minimum must not void
    /// tickets already accepted (they may be redeemed long after). The contract only publishes
    /// the value, and MinWinProbUpdated lets indexers follow it.
    uint64 public minWinProb;

    /// @notice A node bound its 64-byte uncompressed public key (no 0x04 prefix) and a multiaddr to
    /// its account. The latest announcement of an account wins.
    event Announcement(address indexed account, bytes publicKey, bytes multiaddr);

    /// @notice Full state of a channel after any change to it. Replaying these events (together with
    /// Announcement) rebuilds the whole channel graph.
    event ChannelUpdated(
        bytes32 indexed channelId,
        address indexed source,
        address indexed destination,
        uint256 balance,
        uint64 ticketIndex,
        uint32 epoch,
        uint8 status,
        uint64 closureTime
    );

    /// @notice A ticket of the channel was redeemed. redeemTicket emits the channel's ChannelUpdated
    /// right after it; redeemTickets emits one ChannelUpdated after the last ticket of a group it
    /// paid (and none for a group it paid nothing of).
    event TicketRedeemed(bytes32 indexed channelId, uint64 index, uint256 amount);

    /// @notice redeemTickets did not pay this ticket. reason is the ABI-encoded custom error
    /// redeemTicket would have reverted with (selector and arguments), e.g. IndexNotIncreasing.
    /// Every ticket of a redeemTickets call gets exactly one TicketRedeemed or TicketRejected, in
    /// the order of the call data.
    event TicketRejected(bytes32 indexed channelId, uint64 index, bytes reason);

    /// @notice The minimum win probability was set (also emitted by the constructor, so that an
    /// indexer starting at the deployment block sees the initial value).
    event MinWinProbUpdated(uint64 indexed minWinProb);

    /// @notice The token address given to the constructor, or a destination, is the zero address.
    error ZeroAddress();
    /// @notice announce: the public key is not 64 bytes long.
    error InvalidPublicKeyLength(uint256 length);
    /// @notice announce: the address derived from the public key is not msg.sender.
    error PublicKeyNotSender(address derived);
    /// @notice fundChannel: source and destination are the same account.
    error SameSourceAndDestination();
    /// @notice fundChannel: amount is 0.
    error ZeroAmount();
    /// @notice fundChannel: the channel is PendingToClose; finalize the closure first.
    error ChannelPendingToClose();
    /// @notice The channel is Closed (or, for initiateChannelClosure, not Open).
    error ChannelNotOpen();
    /// @notice finalizeChannelClosure: the channel is not PendingToClose.
    error ChannelNotPendingToClose();
    /// @notice finalizeChannelClosure: the closure period has not passed yet.
    error ClosureTimeNotReached(uint64 closureTime);
    /// @notice redeemTicket: ticket.channelId is not the channel from source to msg.sender.
    error NotChannelDestination();
    /// @notice redeemTicket: ticket.epoch is not the channel's current epoch.
    error EpochMismatch(uint32 ticketEpoch, uint32 channelEpoch);
    /// @notice redeemTicket: ticket.index is not above the last redeemed index.
    error IndexNotIncreasing(uint64 ticketIndex, uint64 lastRedeemed);
    /// @notice redeemTicket: ticket.amount exceeds the channel balance.
    error InsufficientChannelBalance(uint256 amount, uint256 balance);
    /// @notice redeemTicket: ticket.winProb does not fit in 56 bits; constructor and setMinWinProb:
    /// the minimum does not.
    error InvalidWinProb(uint64 winProb);
    /// @notice redeemTicket: the signature is malformed (length, v, or high s).
    error InvalidSignature();
    /// @notice redeemTicket: the signature is valid but not by the channel's source.
    error SignerNotSource(address signer);
    /// @notice The proof-of-relay response is 0 or not below the group order.
    error InvalidResponse();
    /// @notice redeemTicket: address(response·G) is not the ticket's challenge.
    error ChallengeMismatch(address expected, address actual);
    /// @notice redeemTicket: the ticket did not win (its luck is above winProb).
    error TicketNotWinning();
    /// @notice redeemTicket: the ticket's winProb is below MAX_WIN_PROB, so its draw needs the
    /// redeemer's VRF output, and the holder key given is not msg.sender's (derived is its address).
    error HolderKeyNotSender(address derived);
    /// @notice redeemTicket: the VRF proof does not verify for the holder key and the ticket hash.
    error InvalidVRFProof();
    /// @notice setMinWinProb: msg.sender is not the owner.
    error NotOwner();

    /// @param token_ the ERC-20 token of the network.
    /// @param closurePeriodSeconds seconds a source must wait between initiating and finalizing a closure.
    /// @param minWinProb_ the initial minimum win probability (MAX_WIN_PROB: every ticket must win).
    constructor(IERC20 token_, uint64 closurePeriodSeconds, uint64 minWinProb_) {
        if (address(token_) == address(0)) revert ZeroAddress();
        if (minWinProb_ > MAX_WIN_PROB) revert InvalidWinProb(minWinProb_);
        token = token_;
        closurePeriod = closurePeriodSeconds;
        owner = msg.sender;
        minWinProb = minWinProb_;
        emit MinWinProbUpdated(minWinProb_);
    }

    /// @notice Sets the network's minimum win probability. Only the owner may. Tickets already
    /// issued stay redeemable whatever their winProb (see minWinProb).
    function setMinWinProb(uint64 minWinProb_) external {
        if (msg.sender != owner) revert NotOwner();
        if (minWinProb_ > MAX_WIN_PROB) revert InvalidWinProb(minWinProb_);
        minWinProb = minWinProb_;
        emit MinWinProbUpdated(minWinProb_);
    }

    /// @notice The id of the channel from source to destination.
    function channelIdOf(address source, address destination) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(source, destination));
    }

    /// @notice The hash a ticket's signature is over (before the EIP-191 prefix), domain-separated by
    /// chain id and this contract's address.
    function ticketHash(
        bytes32 channelId,
        uint256 amount,
        uint64 index,
        uint32 epoch,
        uint64 winProb,
        address challenge
    ) public view returns (bytes32) {
        return keccak256(abi.encode(block.chainid, address(this), channelId, amount, index, epoch, winProb, challenge));
    }

    /// @notice address(response·G), the challenge a proof-of-relay response opens. Reverts with
    /// InvalidResponse unless 0 < response < n.
    /// @dev ecrecover(0, v_G, Gx, response·Gx mod n) returns address(Gx^-1 · (response·Gx·G - 0·G)).
    function challengeOf(bytes32 response) public pure returns (address) {
        uint256 r = uint256(response);
        if (r == 0 || r >= SECP256K1_N) revert InvalidResponse();
        return ecrecover(bytes32(0), SECP256K1_G_V, bytes32(SECP256K1_GX), bytes32(mulmod(r, SECP256K1_GX, SECP256K1_N)));
    }

    /// @notice Whether a ticket with this hash, proof-of-relay response and holder's VRF output beta
    /// (RelayVRF, over the ticket hash, under the holder's key) wins at winProb: it does iff the top
    /// 56 bits of keccak256(abi.encodePacked(hash, response, beta)) are <= winProb, so always at
    /// MAX_WIN_PROB (whatever beta; redemption then takes no proof). The issuer knows the response
    /// but not beta, so it cannot tell a winner from a loser when it signs.
    function isWinning(bytes32 hash, bytes32 response, bytes32 beta, uint64 winProb) public pure returns (bool) {
        return _isWinning(hash, response, beta, winProb);
    }

    /// @notice Binds a public key and a multiaddr to msg.sender.
    /// @param publicKey the 64-byte uncompressed secp256k1 key (X ‖ Y, no 0x04 prefix) of msg.sender.
    /// @param multiaddr the node's multiaddr (binary or text form, not interpreted here).
    function announce(bytes calldata publicKey, bytes calldata multiaddr) external {
        if (publicKey.length != 64) revert InvalidPublicKeyLength(publicKey.length);
        address derived = address(uint160(uint256(keccak256(publicKey))));
        if (derived != msg.sender) revert PublicKeyNotSender(derived);
        emit Announcement(msg.sender, publicKey, multiaddr);
    }

    /// @notice Opens (Closed → Open, new epoch, index reset) or tops up the channel from msg.sender to
    /// destination with amount tokens pulled from msg.sender (approve first).
    function fundChannel(address destination, uint256 amount) external {
        if (destination == address(0)) revert ZeroAddress();
        if (destination == msg.sender) revert SameSourceAndDestination();
        if (amount == 0) revert ZeroAmount();
        bytes32 id = channelIdOf(msg.sender, destination);
        Channel storage ch = channels[id];
        if (ch.status == ChannelStatus.PendingToClose) revert ChannelPendingToClose();
        if (ch.status == ChannelStatus.Closed) {
            ch.status = ChannelStatus.Open;
            ch.epoch += 1;
            ch.ticketIndex = 0;
            ch.closureTime = 0;
        }
        ch.balance += amount;
        _emitUpdated(id, msg.sender, destination, ch);
        token.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @notice Pays a ticket of the channel from source to msg.sender. See docs/PROTOCOL.md section 4
    /// for the checks, in order.
    /// @param source the channel's source, who signed the ticket.
    /// @param ticket the ticket; ticket.channelId must be channelIdOf(source, msg.sender).
    /// @param response the proof-of-relay response r with address(r·G) == ticket.challenge.
    /// @param holderKey msg.sender's public key; read only for a ticket below MAX_WIN_PROB.
    /// @param proof msg.sender's VRF proof over the ticket hash (RelayVRF); read only for a ticket
    /// below MAX_WIN_PROB (zeros will do otherwise).
    function redeemTicket(
        address source,
        Ticket calldata ticket,
        bytes32 response,
        PublicKey calldata holderKey,
        RelayVRF.Proof calldata proof
    ) external {
        if (ticket.channelId != channelIdOf(source, msg.sender)) revert NotChannelDestination();
        Channel storage ch = channels[ticket.channelId];
        if (ch.status == ChannelStatus.Closed) revert ChannelNotOpen();
        if (ticket.epoch != ch.epoch) revert EpochMismatch(ticket.epoch, ch.epoch);
        if (ticket.index <= ch.ticketIndex) revert IndexNotIncreasing(ticket.index, ch.ticketIndex);
        if (ticket.amount > ch.balance) revert InsufficientChannelBalance(ticket.amount, ch.balance);
        if (ticket.winProb > MAX_WIN_PROB) revert InvalidWinProb(ticket.winProb);
        if (ticket.winProb != MAX_WIN_PROB) {
            address derived = _keyAddress(holderKey.x, holderKey.y);
            if (derived != msg.sender) revert HolderKeyNotSender(derived);
        }

        bytes32 hash = ticketHash(
            ticket.channelId, ticket.amount, ticket.index, ticket.epoch, ticket.winProb, ticket.challenge
        );
        (address signer, ECDSA.RecoverError err,) =
            ECDSA.tryRecoverCalldata(MessageHashUtils.toEthSignedMessageHash(hash), ticket.signature);
        if (err != ECDSA.RecoverError.NoError) revert InvalidSignature();
        if (signer != source) revert SignerNotSource(signer);

        address opened = challengeOf(response);
        if (opened != ticket.challenge) revert ChallengeMismatch(ticket.challenge, opened);
        if (ticket.winProb != MAX_WIN_PROB) {
            // The proof is copied to memory only for a ticket that needs it.
            bytes memory reason = _draw(hash, response, ticket.winProb, holderKey.x, holderKey.y, proof);
            if (reason.length != 0) {
                assembly ("memory-safe") {
                    revert(add(reason, 0x20), mload(reason))
                }
            }
        }

        ch.balance -= ticket.amount;
        ch.ticketIndex = ticket.index;
        emit TicketRedeemed(ticket.channelId, ticket.index, ticket.amount);
        _emitUpdated(ticket.channelId, source, msg.sender, ch);
        token.safeTransfer(msg.sender, ticket.amount);
    }

    /// @notice Pays many tickets to msg.sender in one transaction: the tickets of one or several
    /// channels, grouped by channel and epoch. Every ticket gets the checks of redeemTicket, in the
    /// same order (docs/PROTOCOL.md section 4.6), against the channel as the earlier tickets of the
    /// call left it; a ticket that fails one is not paid and emits TicketRejected with the error
    /// redeemTicket would revert with, and the others proceed. The call itself reverts only for
    /// malformed call data, out of gas, or a failed token transfer.
    /// @dev Gas: one token transfer for the whole call; each group reads its channel once and
    /// writes it (and emits ChannelUpdated) once, if it paid anything; each ticket is copied to
    /// memory once (its fields decoded and validated once, not at every use) and its hashes are
    /// computed without allocating. A channel may appear in several groups (e.g. two epochs);
    /// each group starts from the state the previous one left.
    /// @param groups the tickets, per channel in increasing index order (a ticket whose index is
    /// not above the last one paid is rejected with IndexNotIncreasing).
    /// @param holderKey msg.sender's public key, checked once for the whole call: if it is not
    /// msg.sender's, every ticket below MAX_WIN_PROB is rejected with HolderKeyNotSender (at the
    /// step redeemTicket would revert with it) and the others are still paid.
    function redeemTickets(ChannelTickets[] calldata groups, PublicKey calldata holderKey) external {
        BatchContext memory ctx;
        ctx.pkX = holderKey.x;
        ctx.pkY = holderKey.y;
        address derived = _keyAddress(holderKey.x, holderKey.y);
        if (derived != msg.sender) ctx.keyReason = abi.encodeWithSelector(HolderKeyNotSender.selector, derived);
        uint256 total;
        for (uint256 g = 0; g < groups.length; ++g) {
            total += _redeemGroup(groups[g], ctx);
        }
        if (total > 0) token.safeTransfer(msg.sender, total);
    }

    /// @dev What the checks of a redeemTickets ticket need besides the ticket and its channel's
    /// running state: the group's channel, source and epoch, and the call's holder key with the
    /// error its tickets below MAX_WIN_PROB get when the key is not msg.sender's (empty when it
    /// is), encoded once. One per call, in memory (the stack has no room for them).
    struct BatchContext {
        bytes32 id;
        address source;
        uint32 epoch;
        uint256 pkX;
        uint256 pkY;
        bytes keyReason;
    }

    /// @dev Checks and pays one group of redeemTickets; returns what it paid.
    function _redeemGroup(ChannelTickets calldata grp, BatchContext memory ctx) private returns (uint256 paid) {
        bytes32 id = grp.channelId;
        BatchTicket[] calldata tks = grp.tickets;
        // Checks 1-3 of redeemTicket depend on the channel only, so they decide the whole group.
        if (id != channelIdOf(grp.source, msg.sender)) {
            _rejectAll(id, tks, abi.encodeWithSelector(NotChannelDestination.selector));
            return 0;
        }
        Channel storage ch = channels[id];
        if (ch.status == ChannelStatus.Closed) {
            _rejectAll(id, tks, abi.encodeWithSelector(ChannelNotOpen.selector));
            return 0;
        }
        if (grp.epoch != ch.epoch) {
            _rejectAll(id, tks, abi.encodeWithSelector(EpochMismatch.selector, grp.epoch, ch.epoch));
            return 0;
        }
        uint256 balance = ch.balance;
        (ctx.id, ctx.source, ctx.epoch) = (id, grp.source, grp.epoch);
        uint64 lastBefore = ch.ticketIndex;
        uint64 last = lastBefore;
        for (uint256 i = 0; i < tks.length; ++i) {
            BatchTicket memory t = tks[i];
            bytes memory reason = _checkBatchTicket(ctx, t, last, balance);
            if (reason.length != 0) {
                emit TicketRejected(id, t.index, reason);
                continue;
            }
            balance -= t.amount;
            paid += t.amount;
            last = t.index;
            emit TicketRedeemed(id, t.index, t.amount);
        }
        // A paid ticket always raises the index (even one of amount 0), so this means "paid any".
        if (last != lastBefore) {
            ch.balance = balance;
            ch.ticketIndex = last;
            _emitUpdated(id, grp.source, msg.sender, ch);
        }
    }

    /// @dev Checks 4-11 of redeemTicket for one ticket of a group; returns the ABI-encoded error, or
    /// empty bytes if the ticket is to be paid. Allocates memory only for a rejection.
    function _checkBatchTicket(BatchContext memory ctx, BatchTicket memory t, uint64 last, uint256 balance)
        private
        view
        returns (bytes memory reason)
    {
        if (t.index <= last) return abi.encodeWithSelector(IndexNotIncreasing.selector, t.index, last);
        if (t.amount > balance) return abi.encodeWithSelector(InsufficientChannelBalance.selector, t.amount, balance);
        if (t.winProb > MAX_WIN_PROB) return abi.encodeWithSelector(InvalidWinProb.selector, t.winProb);
        if (t.winProb != MAX_WIN_PROB && ctx.keyReason.length != 0) return ctx.keyReason;
        bytes32 hash = _ticketHashScratch(ctx.id, t.amount, t.index, ctx.epoch, t.winProb, t.challenge);
        (address signer, ECDSA.RecoverError err,) =
            ECDSA.tryRecover(MessageHashUtils.toEthSignedMessageHash(hash), t.r, t.vs);
        if (err != ECDSA.RecoverError.NoError) return abi.encodeWithSelector(InvalidSignature.selector);
        if (signer != ctx.source) return abi.encodeWithSelector(SignerNotSource.selector, signer);
        uint256 r = uint256(t.response);
        if (r == 0 || r >= SECP256K1_N) return abi.encodeWithSelector(InvalidResponse.selector);
        address opened = ecrecover(
            bytes32(0), SECP256K1_G_V, bytes32(SECP256K1_GX), bytes32(mulmod(r, SECP256K1_GX, SECP256K1_N))
        );
        if (opened != t.challenge) return abi.encodeWithSelector(ChallengeMismatch.selector, t.challenge, opened);
        // For a winner reason is the empty bytes at the zero slot: nothing allocated for a paid ticket.
        return _draw(hash, t.response, t.winProb, ctx.pkX, ctx.pkY, t.proof);
    }

    /// @dev Checks 10 and 11 of redeemTicket, the draw: a ticket below MAX_WIN_PROB needs a VRF
    /// proof of the holder key (pkX, pkY) over the ticket hash, else InvalidVRFProof, and wins with
    /// its output beta iff isWinning, else TicketNotWinning. A ticket at MAX_WIN_PROB always wins
    /// and its proof is not read. Returns the ABI-encoded error, or empty bytes for a winner
    /// (nothing allocated then).
    function _draw(bytes32 hash, bytes32 response, uint64 winProb, uint256 pkX, uint256 pkY, RelayVRF.Proof memory proof)
        private
        view
        returns (bytes memory reason)
    {
        if (winProb == MAX_WIN_PROB) return reason;
        (bool ok, bytes32 beta) = RelayVRF.verify(pkX, pkY, hash, proof);
        if (!ok) return abi.encodeWithSelector(InvalidVRFProof.selector);
        if (!_isWinning(hash, response, beta, winProb)) return abi.encodeWithSelector(TicketNotWinning.selector);
    }

    /// @dev address(keccak256(x ‖ y)), the account of the public key (x, y), in the scratch space.
    function _keyAddress(uint256 x, uint256 y) private pure returns (address a) {
        assembly ("memory-safe") {
            mstore(0x00, x)
            mstore(0x20, y)
            a := and(keccak256(0x00, 0x40), 0xffffffffffffffffffffffffffffffffffffffff)
        }
    }

    /// @dev Emits TicketRejected with reason for every ticket of a group.
    function _rejectAll(bytes32 id, BatchTicket[] calldata tks, bytes memory reason) private {
        for (uint256 i = 0; i < tks.length; ++i) {
            emit TicketRejected(id, tks[i].index, reason);
        }
    }

    /// @dev ticketHash computed in the memory past the free memory pointer, which it leaves
    /// unchanged (abi.encode would allocate 288 bytes per ticket, and memory cost is quadratic).
    function _ticketHashScratch(
        bytes32 channelId,
        uint256 amount,
        uint64 index,
        uint32 epoch,
        uint64 winProb,
        address challenge
    ) private view returns (bytes32 h) {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, chainid())
            mstore(add(p, 0x20), address())
            mstore(add(p, 0x40), channelId)
            mstore(add(p, 0x60), amount)
            mstore(add(p, 0x80), and(index, 0xffffffffffffffff))
            mstore(add(p, 0xa0), and(epoch, 0xffffffff))
            mstore(add(p, 0xc0), and(winProb, 0xffffffffffffffff))
            mstore(add(p, 0xe0), and(challenge, 0xffffffffffffffffffffffffffffffffffffffff))
            h := keccak256(p, 0x100)
        }
    }

    /// @dev isWinning hashed past the free memory pointer, which it leaves unchanged (96 bytes do
    /// not fit the 64-byte scratch space; abi.encodePacked would allocate them).
    function _isWinning(bytes32 hash, bytes32 response, bytes32 beta, uint64 winProb)
        private
        pure
        returns (bool won)
    {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, hash)
            mstore(add(p, 0x20), response)
            mstore(add(p, 0x40), beta)
            won := iszero(gt(shr(200, keccak256(p, 0x60)), and(winProb, 0xffffffffffffffff)))
        }
    }

    /// @notice Starts closing the channel from msg.sender to destination: Open → PendingToClose with
    /// closureTime = now + closurePeriod. The destination can still redeem tickets until it is Closed.
    function initiateChannelClosure(address destination) external {
        bytes32 id = channelIdOf(msg.sender, destination);
        Channel storage ch = channels[id];
        if (ch.status != ChannelStatus.Open) revert ChannelNotOpen();
        ch.status = ChannelStatus.PendingToClose;
        ch.closureTime = uint64(block.timestamp) + closurePeriod;
        _emitUpdated(id, msg.sender, destination, ch);
    }

    /// @notice Finishes closing the channel from msg.sender to destination once its closureTime has
    /// passed: PendingToClose → Closed, the remaining balance goes back to msg.sender.
    function finalizeChannelClosure(address destination) external {
        bytes32 id = channelIdOf(msg.sender, destination);
        Channel storage ch = channels[id];
        if (ch.status != ChannelStatus.PendingToClose) revert ChannelNotPendingToClose();
        if (block.timestamp < ch.closureTime) revert ClosureTimeNotReached(ch.closureTime);
        _close(id, msg.sender, destination, ch);
    }

    /// @notice Closes the channel from source to msg.sender at once (from Open or PendingToClose); the
    /// remaining balance goes back to source. Unredeemed tickets of the channel become void.
    function closeIncomingChannel(address source) external {
        bytes32 id = channelIdOf(source, msg.sender);
        Channel storage ch = channels[id];
        if (ch.status == ChannelStatus.Closed) revert ChannelNotOpen();
        _close(id, source, msg.sender, ch);
    }

    function _close(bytes32 id, address source, address destination, Channel storage ch) private {
        uint256 refund = ch.balance;
        ch.balance = 0;
        ch.status = ChannelStatus.Closed;
        ch.closureTime = 0;
        _emitUpdated(id, source, destination, ch);
        if (refund > 0) token.safeTransfer(source, refund);
    }

    function _emitUpdated(bytes32 id, address source, address destination, Channel storage ch) private {
        emit ChannelUpdated(
            id, source, destination, ch.balance, ch.ticketIndex, ch.epoch, uint8(ch.status), ch.closureTime
        );
    }
}
