package chain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/tickets"
)

// Gas figures RedeemTickets splits its batches by. They are upper bounds of what the contract's
// redeemTickets uses, measured by TestBatchGas (which fails if a measured figure exceeds them),
// under the dev chain's default rules, which cost more than Osaka's. Overestimating only makes
// batches smaller; the transaction's gas limit itself comes from the provider's estimate.
const (
	// RedeemGasPerTicket bounds one ticket's share of a batch: call data (512 bytes), two
	// signature recoveries (3,000 gas each), hashing, its TicketRedeemed or TicketRejected event,
	// and for a ticket below tickets.MaxWinProb the VRF proof's verification (three ecrecovers
	// and a modexp per hash-to-curve counter: about 22,000 gas on average, see internal/vrf).
	// TestBatchGas measures about 41,900 a ticket at p = 0.01 all included (batch and channel
	// overheads shared out) under the dev chain's rules, TestSettlementGas 41,100 under Osaka's;
	// a ticket that always wins costs about 16,000 (no proof to verify), so for those the bound
	// is about three times too high, which only makes EstimateRedeemGas cautious: the call data
	// limit, not the gas, sets a batch's size.
	RedeemGasPerTicket = 48_000
	// RedeemGasPerChannel bounds a group's own cost: its header in calldata, reading the channel
	// (two cold slots), writing it once and its ChannelUpdated event.
	RedeemGasPerChannel = 30_000
	// RedeemGasPerBatch bounds the cost of a batch beyond its groups and tickets: the
	// transaction's 21,000 and the one token transfer, which costs most when the redeemer holds
	// no tokens yet (a new storage slot: far dearer under the dev chain's draft rules).
	RedeemGasPerBatch = 150_000

	// DefaultRedeemBatchGas is the default gas budget of one batch (see WithRedeemBatchGas); the
	// budget is also never more than half the latest block's gas limit.
	DefaultRedeemBatchGas = 10_000_000

	// maxRedeemBatchBytes bounds a batch's call data: go-ethereum's transaction pool refuses
	// transactions over 128 KiB, and other nodes have similar limits. At 512 bytes a ticket it
	// allows about 190 tickets a batch.
	maxRedeemBatchBytes = 100_000
	// Call data sizes of redeemTickets' ABI encoding: selector, the group array's offset, the
	// holder key (two words) and the array's length; per group its offset, four head words and
	// the ticket array's length; per ticket sixteen words (seven, and the VRF proof's nine, which
	// are zeros for a ticket that always wins).
	redeemBytesPerBatch   = 4 + 4*32
	redeemBytesPerChannel = 6 * 32
	redeemBytesPerTicket  = 16 * 32
)

// ErrBadRedemption means RedeemTickets was given nothing to redeem (an empty or nil list) or a
// bad option. Nothing was sent.
var ErrBadRedemption = errors.New("bad redemption request")

// Redemption is one ticket to redeem with RedeemTickets.
type Redemption struct {
	// Ticket is a ticket of a channel to the client's account.
	Ticket tickets.Ticket
	// Response is the proof-of-relay response that opens Ticket.Challenge.
	Response [32]byte
	// Source is the channel's source. When zero it is recovered from the ticket's signature, as
	// RedeemTicket does; a ticket signed by someone else then names another channel and is
	// rejected with NotChannelDestination instead of SignerNotSource. Callers that know the
	// source (they accepted the ticket from it) should set it.
	Source common.Address
}

// RedeemOutcome is what became of one Redemption. Exactly one of three holds:
//
//   - Redeemed: the ticket was paid by the mined transaction TxHash.
//   - Reason != nil: the ticket was rejected, by the mined transaction TxHash (its
//     TicketRejected event), and will never be paid. Reason is the contract's custom error as the
//     binding's struct, e.g. *contracts.RelayChannelsIndexNotIncreasing (the same types
//     RevertError.Decoded holds: map them with a type switch), with its arguments. It is a
//     *RevertError only if the data does not decode, which the deployed contract never emits.
//   - Err != nil: there is no verdict. Either the batch was not sent (TxHash zero; the ticket's
//     state on chain is unchanged by this call) or its transaction failed as a whole (a
//     *RevertError with Sent) or its receipt could not be read (the ticket may have been paid).
//     Redeeming it again is always safe: the contract pays an index at most once, and a repeat
//     comes back rejected with IndexNotIncreasing.
type RedeemOutcome struct {
	TxHash   common.Hash
	Redeemed bool
	Reason   any
	Err      error
}

// RedeemOption changes a default of RedeemTickets.
type RedeemOption func(*redeemOptions)

type redeemOptions struct {
	batchGas uint64
}

// WithRedeemBatchGas sets the gas budget of one batch transaction, which RedeemTickets fills by
// the bounds RedeemGasPerTicket, RedeemGasPerChannel and RedeemGasPerBatch
// (DefaultRedeemBatchGas, and never more than half the latest block's gas limit). It must allow
// at least one ticket.
func WithRedeemBatchGas(gas uint64) RedeemOption {
	return func(o *redeemOptions) { o.batchGas = gas }
}

// EstimateRedeemGas returns the gas RedeemTickets expects to spend at most on n tickets of
// channels channels in one batch, for deciding whether a redemption is worth its gas.
func EstimateRedeemGas(n, channels int) uint64 {
	if n <= 0 {
		return 0
	}
	return RedeemGasPerBatch + uint64(max(channels, 1))*RedeemGasPerChannel + uint64(n)*RedeemGasPerTicket
}

// RedeemTickets redeems tickets of channels to the client with the contract's redeemTickets, as
// few transactions as the batch gas budget (WithRedeemBatchGas) and the call data limit allow,
// sent one after another, each after the previous one was mined. It returns one outcome per
// redemption, in the order given (see RedeemOutcome for what each means).
//
// Tickets are grouped by channel and epoch (in the order each channel first appears) and sorted
// by index within a channel, so the order of rs does not matter: the contract pays a channel's
// tickets only in increasing index order. The contract runs redeemTicket's checks on every ticket
// (PROTOCOL.md section 4.6); a ticket that fails one is rejected without failing the others.
//
// A ticket below tickets.MaxWinProb goes with the client's VRF proof over its hash, and the call
// with the client's public key (the draw of PROTOCOL.md section 4.5); one that always wins goes
// with a zero proof.
//
// Verdicts come only from mined receipts, with two exceptions, each with a zero TxHash and the
// verdict the contract would give: a ticket whose Source is zero and whose signature is
// malformed (v not 27 or 28, or r or s out of range) has no recoverable source and is rejected
// with *contracts.RelayChannelsInvalidSignature; a ticket for which the client's key has no VRF
// proof the contract can check (probability about 2^-127, see internal/vrf) is rejected with
// *contracts.RelayChannelsInvalidVRFProof.
//
// The error is non-nil in two cases. Before any batch: rs is empty or an option is bad
// (ErrBadRedemption), or the latest header cannot be read; outcomes are nil and nothing was sent.
// After: at least one batch got no verdict; the error is the first such batch's, outcomes are
// complete and the affected ones carry their batch's error in Err. After a batch fails for
// another reason than a revert (the provider, ctx) the remaining batches are not sent.
func (c *Client) RedeemTickets(ctx context.Context, rs []Redemption, opts ...RedeemOption) ([]RedeemOutcome, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("redeem tickets: %w: no tickets", ErrBadRedemption)
	}
	o := redeemOptions{batchGas: DefaultRedeemBatchGas}
	for _, opt := range opts {
		opt(&o)
	}
	if o.batchGas < EstimateRedeemGas(1, 1) {
		return nil, fmt.Errorf("redeem tickets: %w: batch gas %d allows no ticket (one needs %d)", ErrBadRedemption, o.batchGas, EstimateRedeemGas(1, 1))
	}
	head, err := withTimeout(ctx, c, func(ctx context.Context) (*types.Header, error) { return c.eth.HeaderByNumber(ctx, nil) })
	if err != nil {
		return nil, fmt.Errorf("redeem tickets: read latest header: %w", err)
	}
	budget := min(o.batchGas, head.GasLimit/2)

	out := make([]RedeemOutcome, len(rs))
	batches := c.planRedemption(rs, out, budget)
	var first error
	for bi, b := range batches {
		err := c.sendRedeemBatch(ctx, b, out)
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		var rev *RevertError
		if errors.As(err, &rev) && ctx.Err() == nil {
			continue // this batch's own failure: the next ones may well pass
		}
		for _, rest := range batches[bi+1:] {
			notSent := fmt.Errorf("redeem tickets: not sent after an earlier batch failed: %w", err)
			for _, g := range rest.groups {
				for _, at := range g.at {
					out[at] = RedeemOutcome{Err: notSent}
				}
			}
		}
		break
	}
	return out, first
}

// redeemGroup is one group of a batch: the binding's struct and, per ticket, its position in
// the caller's list.
type redeemGroup struct {
	group contracts.RelayChannelsChannelTickets
	at    []int
}

type redeemBatch struct {
	groups []redeemGroup
}

// planRedemption groups and sorts rs and splits them into batches within budget gas and
// maxRedeemBatchBytes of call data. Tickets decided without a transaction get their outcome in
// out here.
func (c *Client) planRedemption(rs []Redemption, out []RedeemOutcome, budget uint64) []redeemBatch {
	type key struct {
		id     [32]byte
		source common.Address
		epoch  uint32
	}
	var order []key
	members := map[key][]int{}
	proofs := make([]contracts.RelayVRFProof, len(rs))
	for i := range rs {
		tk := &rs[i].Ticket
		src := rs[i].Source
		if src == (common.Address{}) {
			s, err := tk.Signer(c.ChainID(), c.channels)
			if err != nil {
				out[i] = RedeemOutcome{Reason: new(contracts.RelayChannelsInvalidSignature)}
				continue
			}
			src = s
		}
		proof, err := c.drawProof(tk)
		if err != nil {
			out[i] = RedeemOutcome{Reason: new(contracts.RelayChannelsInvalidVRFProof)}
			continue
		}
		proofs[i] = proof
		k := key{tk.ChannelID, src, tk.Epoch}
		if _, seen := members[k]; !seen {
			order = append(order, k)
		}
		members[k] = append(members[k], i)
	}

	var batches []redeemBatch
	var cur redeemBatch
	gas, size := uint64(RedeemGasPerBatch), redeemBytesPerBatch
	var open *redeemGroup // the current batch's last group, while it may still grow
	for _, k := range order {
		idx := members[k]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rs[a].Ticket.Index, rs[b].Ticket.Index) })
		open = nil
		for _, i := range idx {
			need, bytes := uint64(RedeemGasPerTicket), redeemBytesPerTicket
			if open == nil {
				need += RedeemGasPerChannel
				bytes += redeemBytesPerChannel
			}
			if len(cur.groups) > 0 && (gas+need > budget || size+bytes > maxRedeemBatchBytes) {
				batches = append(batches, cur)
				cur, open = redeemBatch{}, nil
				gas, size = RedeemGasPerBatch, redeemBytesPerBatch
				need, bytes = RedeemGasPerTicket+RedeemGasPerChannel, redeemBytesPerTicket+redeemBytesPerChannel
			}
			if open == nil {
				cur.groups = append(cur.groups, redeemGroup{group: contracts.RelayChannelsChannelTickets{
					ChannelId: k.id, Source: k.source, Epoch: k.epoch,
				}})
				open = &cur.groups[len(cur.groups)-1]
			}
			open.group.Tickets = append(open.group.Tickets, batchTicket(&rs[i], proofs[i]))
			open.at = append(open.at, i)
			gas, size = gas+need, size+bytes
		}
	}
	if len(cur.groups) > 0 {
		batches = append(batches, cur)
	}
	return batches
}

// batchTicket converts a redemption and its VRF proof (drawProof) to the contract's per-ticket
// struct, with the signature in EIP-2098's compact form (r, vs = s | (v-27) << 255). A signature
// that form cannot carry (v not 27 or 28, or s with its top bit set, which is above n/2 anyway)
// is sent as r = s = 0, which the contract rejects with InvalidSignature at the step where it
// checks signatures, as it rejects the original.
func batchTicket(r *Redemption, proof contracts.RelayVRFProof) contracts.RelayChannelsBatchTicket {
	tk := &r.Ticket
	bt := contracts.RelayChannelsBatchTicket{
		Amount: tk.Amount.ToBig(), Index: tk.Index, WinProb: tk.WinProb,
		Challenge: common.Address(tk.Challenge), Response: r.Response, Proof: proof,
	}
	v := tk.Signature[64]
	if (v == 27 || v == 28) && tk.Signature[32]&0x80 == 0 {
		copy(bt.R[:], tk.Signature[:32])
		copy(bt.Vs[:], tk.Signature[32:64])
		if v == 28 {
			bt.Vs[0] |= 0x80
		}
	}
	return bt
}

// sendRedeemBatch sends one batch, waits for its receipt and fills in the outcomes of its
// tickets: verdicts from the receipt, or the batch's error.
func (c *Client) sendRedeemBatch(ctx context.Context, b redeemBatch, out []RedeemOutcome) error {
	gs := make([]contracts.RelayChannelsChannelTickets, len(b.groups))
	n := 0
	for i, g := range b.groups {
		gs[i] = g.group
		n += len(g.at)
	}
	fail := func(h common.Hash, err error) error {
		for _, g := range b.groups {
			for _, at := range g.at {
				out[at] = RedeemOutcome{TxHash: h, Err: err}
			}
		}
		return err
	}
	data := channelsABI.PackRedeemTickets(gs, c.holderKey())
	tx, err := c.send(ctx, c.channels, nil, data)
	if err != nil {
		return fail(common.Hash{}, fmt.Errorf("redeem %d tickets: %w", n, err))
	}
	r, err := c.wait(ctx, tx.Hash())
	if err != nil {
		return fail(tx.Hash(), fmt.Errorf("redeem %d tickets: %w", n, err))
	}
	// From here the receipt names the transaction mined, which is a replacement of tx when tx
	// stalled (tx.go).
	if r.Status != types.ReceiptStatusSuccessful {
		return fail(r.TxHash, fmt.Errorf("redeem %d tickets: %w", n, c.failedInBlock(ctx, c.channels, nil, data, r)))
	}
	verdicts, err := c.batchVerdicts(r, b)
	if err != nil {
		return fail(r.TxHash, fmt.Errorf("redeem %d tickets: %w", n, err))
	}
	k := 0
	for _, g := range b.groups {
		for _, at := range g.at {
			out[at] = verdicts[k]
			k++
		}
	}
	return nil
}

// batchVerdicts reads the per-ticket events of a mined redeemTickets transaction: exactly one
// TicketRedeemed or TicketRejected per ticket, in call data order, each naming its ticket's
// channel and index. Anything else is an error (and no verdict is taken from the receipt).
func (c *Client) batchVerdicts(r *types.Receipt, b redeemBatch) ([]RedeemOutcome, error) {
	type want struct {
		id    [32]byte
		index uint64
	}
	var wants []want
	for _, g := range b.groups {
		for _, t := range g.group.Tickets {
			wants = append(wants, want{g.group.ChannelId, t.Index})
		}
	}
	var got []RedeemOutcome
	for _, l := range r.Logs {
		if l.Address != c.channels || len(l.Topics) == 0 {
			continue
		}
		var o RedeemOutcome
		var w want
		switch l.Topics[0] {
		case ticketRedeemedTopic:
			ev, err := channelsABI.UnpackTicketRedeemedEvent(l)
			if err != nil {
				return nil, fmt.Errorf("receipt %s: %w", r.TxHash, err)
			}
			o, w = RedeemOutcome{TxHash: r.TxHash, Redeemed: true}, want{ev.ChannelId, ev.Index}
		case ticketRejectedTopic:
			ev, err := channelsABI.UnpackTicketRejectedEvent(l)
			if err != nil {
				return nil, fmt.Errorf("receipt %s: %w", r.TxHash, err)
			}
			o, w = RedeemOutcome{TxHash: r.TxHash, Reason: rejectionReason(ev.Reason)}, want{ev.ChannelId, ev.Index}
		default:
			continue
		}
		if len(got) >= len(wants) || wants[len(got)] != w {
			return nil, fmt.Errorf("receipt %s: event %d (channel %x index %d) does not match the batch", r.TxHash, len(got), w.id[:4], w.index)
		}
		got = append(got, o)
	}
	if len(got) != len(wants) {
		return nil, fmt.Errorf("receipt %s: %d ticket events for %d tickets", r.TxHash, len(got), len(wants))
	}
	return got, nil
}

// rejectionReason decodes a TicketRejected reason into the binding's error struct.
func rejectionReason(data []byte) any {
	if v, err := channelsABI.UnpackError(data); err == nil {
		return v
	}
	return decodeRevert(data)
}

var (
	ticketRedeemedTopic = contracts.NewRelayChannels().GetABI().Events[contracts.RelayChannelsTicketRedeemedEventName].ID
	ticketRejectedTopic = contracts.NewRelayChannels().GetABI().Events[contracts.RelayChannelsTicketRejectedEventName].ID
)
