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

// toBatch converts a signed ticket and the holder's VRF proof to redeemTickets' per-ticket
// struct: the 65-byte signature r ‖ s ‖ v becomes EIP-2098's r, vs = s | (v-27) << 255. s must
// be below 2^255.
func toBatch(tk contracts.RelayChannelsTicket, response [32]byte, proof contracts.RelayVRFProof) contracts.RelayChannelsBatchTicket {
	var r, vs [32]byte
	copy(r[:], tk.Signature[:32])
	copy(vs[:], tk.Signature[32:64])
	if tk.Signature[64] == 28 {
		vs[0] |= 0x80
	}
	return contracts.RelayChannelsBatchTicket{
		Amount: tk.Amount, Index: tk.Index, WinProb: tk.WinProb, Challenge: tk.Challenge, R: r, Vs: vs, Response: response,
		Proof: proof,
	}
}

// batchItem is one ticket of a differential test: redeemed by bob with source src. proof is the
// VRF proof sent with it; nil means a zero proof (which a ticket at MAX_WIN_PROB needs).
type batchItem struct {
	name  string
	src   *actor
	tk    contracts.RelayChannelsTicket
	resp  [32]byte
	proof *contracts.RelayVRFProof
}

// proofArg is the proof sent with it.
func (it batchItem) proofArg() contracts.RelayVRFProof {
	if it.proof == nil {
		return zeroProof()
	}
	return *it.proof
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
		gs[n-1].Tickets = append(gs[n-1].Tickets, toBatch(it.tk, it.resp, it.proofArg()))
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

// mixedItems builds, on e, tickets to bob that exercise every check of redeemTicket but the
// holder key's (one per call: TestRedeemTicketsHolderKey), over the channels alice→bob and
// carol→bob (both funded with 1 token, epoch 1) and two channels that are not bob's or not open.
func mixedItems(t *testing.T, e *env) []batchItem {
	amount := tokens(1).Div(tokens(1), big.NewInt(50)) // 0.02
	p := func(seed byte) porFixture { return newPoR(t, seed) }
	ok := func(src *actor, index uint64, seed byte) batchItem {
		f := p(seed)
		return batchItem{name: fmt.Sprintf("%s #%d", src.name, index), src: src, tk: toContract(e.ticket(src, e.bob, src, amount, index, 1, f)), resp: f.response}
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
	it.proof = ptr(e.vrfProof(e.bob, it.tk))
	add("not winning", it)
	// A ticket at probability 1/2 that wins with bob's VRF output, sent first with carol's proof,
	// then with bob's proof tampered, then as it should be.
	lottery := lotteryWinner(t, e, e.alice, e.bob, 10, 0.5, 30)
	it = lottery
	it.proof = ptr(e.vrfProof(e.carol, lottery.tk))
	add("proof by another key", it)
	it = lottery
	tampered := e.vrfProof(e.bob, lottery.tk)
	tampered.S = new(big.Int).Add(tampered.S, big.NewInt(1))
	it.proof = &tampered
	add("tampered proof", it)
	it = lottery
	it.proof = ptr(e.vrfProof(e.bob, lottery.tk))
	add("lottery winner", it)
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

func ptr[T any](v T) *T { return &v }

// lotteryWinner is a ticket src→dst of index at probability p (face 0.02 tokens) that wins with
// dst's VRF output: it tries proof-of-relay responses from seed on until one does. Its proof is
// left to the caller.
func lotteryWinner(t *testing.T, e *env, src, dst *actor, index uint64, p float64, seed byte) batchItem {
	t.Helper()
	w, err := tickets.WinProbFor(p)
	if err != nil {
		t.Fatal(err)
	}
	amount := tokens(1).Div(tokens(1), big.NewInt(50))
	for s := seed; s < seed+100; s++ {
		f := newPoR(t, s)
		tk := toContract(e.ticket(src, dst, src, amount, index, 1, f))
		tk.WinProb = w
		tk = resign(t, e, src, tk)
		if e.wins(dst, tk, f.response) {
			return batchItem{name: fmt.Sprintf("%s lottery #%d", src.name, index), src: src, tk: tk, resp: f.response}
		}
	}
	t.Fatalf("no ticket won at probability %v in 100 tries", p)
	return batchItem{}
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
	r := eb.must(eb.bob, "redeemTickets", eb.channels, channelsABI.PackRedeemTickets(groups(items), holderKey(eb.bob)))
	got := batchVerdicts(t, r)
	if len(got) != len(items) {
		t.Fatalf("%d per-ticket events for %d tickets", len(got), len(items))
	}

	var paid int
	for i, it := range items {
		rs, err := es.send(es.bob, "redeemTicket", es.channels,
			channelsABI.PackRedeemTicket(it.src.addr, it.tk, it.resp, holderKey(es.bob), it.proofArg()))
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
	if paid != 6 {
		t.Errorf("%d tickets paid one by one, want 6 (the test's valid ones and its lottery winner)", paid)
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
	wantGain := new(big.Int).Mul(tokens(1).Div(tokens(1), big.NewInt(50)), big.NewInt(6))
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
	r := e.must(e.bob, "redeemTickets (empty)", e.channels, channelsABI.PackRedeemTickets(nil, holderKey(e.bob)))
	if len(r.Logs) != 0 {
		t.Fatalf("empty batch emitted %d logs", len(r.Logs))
	}
	p := newPoR(t, 50)
	tk := toContract(e.ticket(e.alice, e.bob, e.alice, big.NewInt(0), 3, 1, p))
	bad := tk
	bad.Index = 2 // signed as 3: recovers another signer
	r = e.must(e.bob, "redeemTickets (none pays)", e.channels, channelsABI.PackRedeemTickets(groups([]batchItem{{src: e.alice, tk: bad, resp: p.response}}), holderKey(e.bob)))
	if v := batchVerdicts(t, r); len(v) != 1 || v[0].paid || len(channelUpdates(t, r)) != 0 || len(r.Logs) != 1 {
		t.Fatalf("nothing-paid batch: verdicts %v, %d logs", v, len(r.Logs))
	}
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(1), Epoch: 1, Status: statusOpen})
	r = e.must(e.bob, "redeemTickets (zero amount)", e.channels, channelsABI.PackRedeemTickets(groups([]batchItem{{src: e.alice, tk: tk, resp: p.response}}), holderKey(e.bob)))
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
		if !e.wins(e.bob, toContract(tk), p.response) {
			continue // this one lost; try another response
		}
		if _, err := e.redeem(e.bob, e.alice, toContract(tk), p.response); err != nil {
			t.Fatalf("winning ticket below the minimum: %v", err)
		}
		return
	}
	t.Fatal("no winning ticket at probability 1/2 in 30 tries")
}

// TestRedeemTicketsHolderKey: in one redeemTickets call, a ticket below MAX_WIN_PROB is rejected
// with HolderKeyNotSender when the call's holder key is not the sender's, and with
// InvalidVRFProof when its proof was made with another key or tampered with, while a ticket at
// MAX_WIN_PROB in the same batch (which needs neither) is still paid, and so is a lottery
// winner with a good proof. redeemTicket reverts with the same errors.
func TestRedeemTicketsHolderKey(t *testing.T) {
	e := newEnv(t)
	e.fund(e.alice, e.bob, tokens(1))
	amount := tokens(1).Div(tokens(1), big.NewInt(50))
	always := func(index uint64, seed byte) batchItem {
		f := newPoR(t, seed)
		return batchItem{name: fmt.Sprintf("always wins #%d", index), src: e.alice,
			tk: toContract(e.ticket(e.alice, e.bob, e.alice, amount, index, 1, f)), resp: f.response}
	}
	withProof := func(it batchItem, p contracts.RelayVRFProof, name string) batchItem {
		it.proof, it.name = &p, name
		return it
	}
	run := func(key contracts.RelayChannelsPublicKey, items []batchItem, want []any) {
		t.Helper()
		before := e.balanceOf(e.bob.addr)
		r := e.must(e.bob, "redeemTickets", e.channels, channelsABI.PackRedeemTickets(groups(items), key))
		got := batchVerdicts(t, r)
		if len(got) != len(items) {
			t.Fatalf("%d verdicts for %d tickets", len(got), len(items))
		}
		paid := new(big.Int)
		for i, it := range items {
			switch {
			case want[i] == nil && !got[i].paid:
				t.Errorf("%s: %v, want paid", it.name, got[i])
			case want[i] == nil:
				paid.Add(paid, it.tk.Amount)
			default:
				if d, err := channelsABI.UnpackError(got[i].reason); err != nil || fmt.Sprintf("%T%+v", d, d) != fmt.Sprintf("%T%+v", want[i], want[i]) {
					t.Errorf("%s: %v, want %T%+v", it.name, got[i], want[i], want[i])
				}
			}
		}
		if gain := new(big.Int).Sub(e.balanceOf(e.bob.addr), before); gain.Cmp(paid) != 0 {
			t.Errorf("bob gained %s, want %s", gain, paid)
		}
	}
	notBob := &contracts.RelayChannelsHolderKeyNotSender{Derived: e.carol.addr}
	badProof := new(contracts.RelayChannelsInvalidVRFProof)

	// The call's key is carol's: bob's lottery winner is refused before anything costly, the
	// ticket that always wins is paid. redeemTicket agrees.
	l1 := lotteryWinner(t, e, e.alice, e.bob, 1, 0.5, 50)
	l1 = withProof(l1, e.vrfProof(e.bob, l1.tk), "lottery winner under carol's key")
	_, err := e.redeemWith(e.bob, e.alice, l1.tk, l1.resp, holderKey(e.carol), *l1.proof)
	wantRevert(t, err, notBob)
	run(holderKey(e.carol), []batchItem{l1, always(2, 51)}, []any{notBob, nil})

	// bob's key: a proof by carol and a tampered proof are refused, the ticket that always wins
	// and the lottery winner with bob's own proof are paid.
	l3 := lotteryWinner(t, e, e.alice, e.bob, 3, 0.5, 60)
	byCarol := withProof(l3, e.vrfProof(e.carol, l3.tk), "proof by carol")
	tampered := e.vrfProof(e.bob, l3.tk)
	tampered.GammaX = new(big.Int).Set(tampered.CGammaX) // another point on the curve
	tampered.GammaY = new(big.Int).Set(tampered.CGammaY)
	tamperedItem := withProof(l3, tampered, "tampered proof")
	for _, it := range []batchItem{byCarol, tamperedItem} {
		_, err := e.redeemWith(e.bob, e.alice, it.tk, it.resp, holderKey(e.bob), *it.proof)
		wantRevert(t, err, badProof)
	}
	l5 := lotteryWinner(t, e, e.alice, e.bob, 5, 0.5, 70)
	l5 = withProof(l5, e.vrfProof(e.bob, l5.tk), "lottery winner with bob's proof")
	run(holderKey(e.bob), []batchItem{byCarol, tamperedItem, always(4, 62), l5}, []any{badProof, badProof, nil, nil})
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: new(big.Int).Sub(tokens(1), new(big.Int).Mul(amount, big.NewInt(3))),
		TicketIndex: 5, Epoch: 1, Status: statusOpen})
}
