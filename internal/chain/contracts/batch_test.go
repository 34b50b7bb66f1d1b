package contracts_test

import (
	"bytes"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/tickets"
)

// toBatch converts a signed ticket to redeemTickets' per-ticket struct: the 65-byte signature
// r ‖ s ‖ v becomes EIP-2098's r, vs = s | (v-27) << 255. s must be below 2^255.
func toBatch(tk contracts.RelayChannelsTicket, response [32]byte) contracts.RelayChannelsBatchTicket {
	var r, vs [32]byte
	copy(r[:], tk.Signature[:32])
	copy(vs[:], tk.Signature[32:64])
	if tk.Signature[64] == 28 {
		vs[0] |= 0x80
	}
	return contracts.RelayChannelsBatchTicket{
		Amount: tk.Amount, Index: tk.Index, WinProb: tk.WinProb, Challenge: tk.Challenge, R: r, Vs: vs, Response: response,
	}
}

// batchItem is one ticket of a differential test: redeemed by bob with source src.
type batchItem struct {
	name string
	src  *actor
	tk   contracts.RelayChannelsTicket
	resp [32]byte
}

// groups packs consecutive items of the same channel id, source and epoch into one group each.
func groups(items []batchItem) []contracts.RelayChannelsChannelTickets {
	var gs []contracts.RelayChannelsChannelTickets
	for _, it := range items {
		n := len(gs)
		if n == 0 || gs[n-1].ChannelId != it.tk.ChannelId || gs[n-1].Source != it.src.addr || gs[n-1].Epoch != it.tk.Epoch {
			gs = append(gs, contracts.RelayChannelsChannelTickets{ChannelId: it.tk.ChannelId, Source: it.src.addr, Epoch: it.tk.Epoch})
			n++
		}
		gs[n-1].Tickets = append(gs[n-1].Tickets, toBatch(it.tk, it.resp))
	}
	return gs
}

// verdict is one ticket's outcome: paid (reason nil) or the ABI-encoded custom error.
type verdict struct {
	paid   bool
	reason []byte
}

func (v verdict) String() string {
	if v.paid {
		return "paid"
	}
	if d, err := channelsABI.UnpackError(v.reason); err == nil {
		return fmt.Sprintf("%T%+v", d, d)
	}
	return fmt.Sprintf("undecodable 0x%x", v.reason)
}

// batchVerdicts reads the per-ticket events of a redeemTickets receipt, in call data order.
func batchVerdicts(t *testing.T, r *types.Receipt) []verdict {
	t.Helper()
	var out []verdict
	for _, l := range r.Logs {
		if ev, err := channelsABI.UnpackTicketRedeemedEvent(l); err == nil {
			_ = ev
			out = append(out, verdict{paid: true})
		} else if ev, err := channelsABI.UnpackTicketRejectedEvent(l); err == nil {
			out = append(out, verdict{reason: ev.Reason})
		}
	}
	return out
}

// mixedItems builds, on e, tickets to bob that exercise every check of redeemTicket, over the
// channels alice→bob and carol→bob (both funded with 1 token, epoch 1) and two channels that
// are not bob's or not open.
func mixedItems(t *testing.T, e *env) []batchItem {
	amount := tokens(1).Div(tokens(1), big.NewInt(50)) // 0.02
	p := func(seed byte) porFixture { return newPoR(t, seed) }
	ok := func(src *actor, index uint64, seed byte) batchItem {
		f := p(seed)
		return batchItem{fmt.Sprintf("%s #%d", src.name, index), src, toContract(e.ticket(src, e.bob, src, amount, index, 1, f)), f.response}
	}
	var items []batchItem
	add := func(name string, it batchItem) { it.name = name; items = append(items, it) }

	add("valid 1", ok(e.alice, 1, 10))
	add("replayed index 1", ok(e.alice, 1, 10))
	it := ok(e.alice, 3, 11)
	it.tk.Amount = tokens(5)
	it.tk = resign(t, e, e.alice, it.tk)
	add("more than the balance", it)
	it = ok(e.alice, 4, 12)
	it.tk.WinProb = tickets.MaxWinProb + 1 // not signable by tickets.Sign; checked before the signature
	add("win prob over 56 bits", it)
	f := p(13)
	add("signed by carol", batchItem{src: e.alice, tk: toContract(e.ticket(e.alice, e.bob, e.carol, amount, 5, 1, f)), resp: f.response})
	it = ok(e.alice, 6, 14)
	hiS := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(1)) // above n/2, representable in vs
	hiS.FillBytes(it.tk.Signature[32:64])
	add("high s", it)
	it = ok(e.alice, 7, 15)
	it.resp = [32]byte{}
	add("response 0", it)
	it = ok(e.alice, 8, 16)
	it.resp = p(40).response
	add("response of another challenge", it)
	it = ok(e.alice, 9, 17)
	it.tk.WinProb = 0 // wins with probability 2^-56
	it.tk = resign(t, e, e.alice, it.tk)
	add("not winning", it)
	add("valid 12", ok(e.alice, 12, 18))
	add("valid 11 after 12", ok(e.alice, 11, 19))
	old := ok(e.alice, 13, 20)
	old.tk.Epoch = 2
	old.tk = resign(t, e, e.alice, old.tk)
	add("future epoch", old)
	add("carol valid 1", ok(e.carol, 1, 21))
	add("carol valid 2", ok(e.carol, 2, 22))
	// A channel whose destination is not bob: alice→carol's id with source alice.
	f = p(23)
	add("not bob's channel", batchItem{src: e.alice, tk: toContract(e.ticket(e.alice, e.carol, e.alice, amount, 1, 1, f)), resp: f.response})
	// dave→bob was never opened.
	f = p(24)
	add("closed channel", batchItem{src: e.dave, tk: toContract(e.ticket(e.dave, e.bob, e.dave, amount, 1, 1, f)), resp: f.response})
	add("alice again after other groups", ok(e.alice, 20, 25))
	return items
}

// resign signs tk again after a test changed a signed field, so that only the change under test
// fails.
func resign(t *testing.T, e *env, signer *actor, tk contracts.RelayChannelsTicket) contracts.RelayChannelsTicket {
	t.Helper()
	h := crypto.Keccak256Hash(
		common.LeftPadBytes(big.NewInt(chainID).Bytes(), 32), common.LeftPadBytes(e.chanAddr[:], 32), tk.ChannelId[:],
		common.LeftPadBytes(tk.Amount.Bytes(), 32), common.LeftPadBytes(new(big.Int).SetUint64(tk.Index).Bytes(), 32),
		common.LeftPadBytes(big.NewInt(int64(tk.Epoch)).Bytes(), 32), common.LeftPadBytes(new(big.Int).SetUint64(tk.WinProb).Bytes(), 32),
		common.LeftPadBytes(tk.Challenge[:], 32))
	sig, err := crypto.Sign(tickets.EthSignedHash(h).Bytes(), signer.key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	tk.Signature = sig
	return tk
}

// TestRedeemTicketsMatchesSingle redeems the same mixed tickets once with one redeemTickets call
// and once with one redeemTicket call each, on two fresh chains: every ticket must get the same
// verdict (the batch's TicketRejected reason byte for byte equal to the single call's revert
// data), and the channels and bob's balance must end the same. The batch must not revert.
func TestRedeemTicketsMatchesSingle(t *testing.T) {
	prepare := func() *env {
		e := newEnv(t)
		e.fund(e.alice, e.bob, tokens(1))
		e.fund(e.carol, e.bob, tokens(1))
		e.fund(e.alice, e.carol, tokens(1))
		return e
	}
	eb, es := prepare(), prepare()
	// Both chains have the same keys, deployer nonces and so the same contract address: the
	// tickets are valid on both.
	if eb.chanAddr != es.chanAddr {
		t.Fatalf("contract addresses differ: %s, %s", eb.chanAddr, es.chanAddr)
	}
	items := mixedItems(t, eb)

	before := eb.balanceOf(eb.bob.addr)
	r := eb.must(eb.bob, "redeemTickets", eb.channels, channelsABI.PackRedeemTickets(groups(items)))
	got := batchVerdicts(t, r)
	if len(got) != len(items) {
		t.Fatalf("%d per-ticket events for %d tickets", len(got), len(items))
	}

	var paid int
	for i, it := range items {
		rs, err := es.send(es.bob, "redeemTicket", es.channels, channelsABI.PackRedeemTicket(it.src.addr, it.tk, it.resp))
		var want verdict
		if err == nil {
			want.paid = true
			paid++
			if rs.Status != types.ReceiptStatusSuccessful {
				t.Fatalf("%s: single failed in the block", it.name)
			}
		} else {
			data, ok := ethclient.RevertErrorData(err)
			if !ok {
				t.Fatalf("%s: single: %v is not a revert", it.name, err)
			}
			want.reason = data
		}
		if got[i].paid != want.paid || !bytes.Equal(got[i].reason, want.reason) {
			t.Errorf("%s: batch %v, single %v", it.name, got[i], want)
		}
	}
	if paid != 5 {
		t.Errorf("%d tickets paid one by one, want 5 (the test's valid ones)", paid)
	}
	for _, ch := range [][2]*actor{{eb.alice, eb.bob}, {eb.carol, eb.bob}, {eb.alice, eb.carol}} {
		b, s := eb.channel(ch[0], ch[1]), es.channel(ch[0], ch[1])
		if b.Balance.Cmp(s.Balance) != 0 || b.TicketIndex != s.TicketIndex || b.Epoch != s.Epoch || b.Status != s.Status {
			t.Errorf("channel %s→%s: after the batch %+v, after single calls %+v", ch[0].name, ch[1].name, b, s)
		}
	}
	if b, s := eb.balanceOf(eb.bob.addr), es.balanceOf(es.bob.addr); b.Cmp(s) != 0 {
		t.Errorf("bob's balance: %s after the batch, %s after single calls", b, s)
	}
	wantGain := new(big.Int).Mul(tokens(1).Div(tokens(1), big.NewInt(50)), big.NewInt(5))
	if gain := new(big.Int).Sub(eb.balanceOf(eb.bob.addr), before); gain.Cmp(wantGain) != 0 {
		t.Errorf("bob gained %s, want %s", gain, wantGain)
	}
	// One token transfer for the whole batch, and one ChannelUpdated per group that paid
	// (alice's first group, carol's group, alice's last group), each matching the channel.
	var transfers int
	for _, l := range r.Logs {
		if l.Address == eb.tokenAddr {
			transfers++
		}
	}
	if transfers != 1 {
		t.Errorf("%d token events in the batch, want 1 transfer", transfers)
	}
	if ups := channelUpdates(t, r); len(ups) != 3 {
		t.Errorf("%d ChannelUpdated events, want 3", len(ups))
	}
}

// TestRedeemTicketsEdges: an empty batch and a batch where nothing pays change nothing and
// transfer nothing; an amount-0 winning ticket still advances the index.
func TestRedeemTicketsEdges(t *testing.T) {
	e := newEnv(t)
	e.fund(e.alice, e.bob, tokens(1))
	r := e.must(e.bob, "redeemTickets (empty)", e.channels, channelsABI.PackRedeemTickets(nil))
	if len(r.Logs) != 0 {
		t.Fatalf("empty batch emitted %d logs", len(r.Logs))
	}
	p := newPoR(t, 50)
	tk := toContract(e.ticket(e.alice, e.bob, e.alice, big.NewInt(0), 3, 1, p))
	bad := tk
	bad.Index = 2 // signed as 3: recovers another signer
	r = e.must(e.bob, "redeemTickets (none pays)", e.channels, channelsABI.PackRedeemTickets(groups([]batchItem{{src: e.alice, tk: bad, resp: p.response}})))
	if v := batchVerdicts(t, r); len(v) != 1 || v[0].paid || len(channelUpdates(t, r)) != 0 || len(r.Logs) != 1 {
		t.Fatalf("nothing-paid batch: verdicts %v, %d logs", v, len(r.Logs))
	}
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(1), Epoch: 1, Status: statusOpen})
	r = e.must(e.bob, "redeemTickets (zero amount)", e.channels, channelsABI.PackRedeemTickets(groups([]batchItem{{src: e.alice, tk: tk, resp: p.response}})))
	if v := batchVerdicts(t, r); len(v) != 1 || !v[0].paid {
		t.Fatalf("zero-amount ticket: %v", v)
	}
	e.wantUpdate(r, e.alice, e.bob)
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(1), TicketIndex: 3, Epoch: 1, Status: statusOpen})
	for _, l := range r.Logs {
		if l.Address == e.tokenAddr {
			t.Fatal("a batch paying 0 transferred tokens")
		}
	}
}

func TestMinWinProb(t *testing.T) {
	e := newEnv(t)
	read := func() uint64 { return call(e, e.channels, channelsABI.PackMinWinProb(), channelsABI.UnpackMinWinProb) }
	if got := read(); got != tickets.MaxWinProb {
		t.Fatalf("initial minWinProb %#x, want MAX_WIN_PROB", got)
	}
	if got := call(e, e.channels, channelsABI.PackOwner(), channelsABI.UnpackOwner); got != e.deployer.addr {
		t.Fatalf("owner %s, want the deployer %s", got, e.deployer.addr)
	}
	// The constructor's event carries the initial value.
	addr, tx, err := bindDeploy(e, channelsABI.PackConstructor(e.tokenAddr, 60, 12345))
	if err != nil {
		t.Fatal(err)
	}
	r := e.receipt("deploy", tx)
	if len(r.Logs) != 1 || r.Logs[0].Address != addr {
		t.Fatalf("deployment logs %+v", r.Logs)
	}
	if ev, err := channelsABI.UnpackMinWinProbUpdatedEvent(r.Logs[0]); err != nil || ev.MinWinProb != 12345 {
		t.Fatalf("constructor event %+v, %v", ev, err)
	}
	_, _, err = bindDeploy(e, channelsABI.PackConstructor(e.tokenAddr, 60, tickets.MaxWinProb+1))
	wantRevert(t, err, &contracts.RelayChannelsInvalidWinProb{WinProb: tickets.MaxWinProb + 1})

	_, err = e.send(e.alice, "setMinWinProb", e.channels, channelsABI.PackSetMinWinProb(1))
	wantRevert(t, err, new(contracts.RelayChannelsNotOwner))
	_, err = e.send(e.deployer, "setMinWinProb", e.channels, channelsABI.PackSetMinWinProb(tickets.MaxWinProb+1))
	wantRevert(t, err, &contracts.RelayChannelsInvalidWinProb{WinProb: tickets.MaxWinProb + 1})
	if got := read(); got != tickets.MaxWinProb {
		t.Fatalf("refused calls changed minWinProb to %#x", got)
	}
	oneIn100 := tickets.MaxWinProb / 100
	r = e.must(e.deployer, "setMinWinProb", e.channels, channelsABI.PackSetMinWinProb(oneIn100))
	if ev, err := channelsABI.UnpackMinWinProbUpdatedEvent(r.Logs[0]); len(r.Logs) != 1 || err != nil || ev.MinWinProb != oneIn100 {
		t.Fatalf("setMinWinProb logs %+v", r.Logs)
	}
	if got := read(); got != oneIn100 {
		t.Fatalf("minWinProb %#x, want %#x", got, oneIn100)
	}

	// A winning ticket below the minimum still redeems: the minimum is the relayers' rule when
	// they accept a ticket, and raising it must not void tickets already accepted.
	e.fund(e.alice, e.bob, tokens(1))
	e.must(e.deployer, "setMinWinProb", e.channels, channelsABI.PackSetMinWinProb(tickets.MaxWinProb))
	half := tickets.MaxWinProb / 2
	for seed := byte(60); seed < 120; seed += 2 {
		p := newPoR(t, seed)
		tk := e.ticket(e.alice, e.bob, e.alice, tokens(1).Div(tokens(1), big.NewInt(50)), 1, 1, p)
		tk.WinProb = half
		if err := tk.Sign(e.alice.key, chainID, e.chanAddr); err != nil {
			t.Fatal(err)
		}
		h := tk.Hash(chainID, e.chanAddr)
		if new(big.Int).Rsh(new(big.Int).SetBytes(crypto.Keccak256(h[:], p.response[:])), 200).Uint64() > half {
			continue // this one lost; try another response
		}
		if _, err := e.redeem(e.bob, e.alice, toContract(tk), p.response); err != nil {
			t.Fatalf("winning ticket below the minimum: %v", err)
		}
		return
	}
	t.Fatal("no winning ticket at probability 1/2 in 30 tries")
}
