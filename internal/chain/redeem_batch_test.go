package chain_test

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// cents returns n hundredths of a token.
func cents(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e16)) }

// redemption signs a ticket of src→dst with signer and returns it with its response.
func redemption(t *testing.T, e *env, src, signer *ecdsa.PrivateKey, dst common.Address, amount *big.Int, index uint64, epoch uint32, winProb uint64, seed byte) chain.Redemption {
	t.Helper()
	challenge, response := porFixture(t, seed)
	tk := tickets.Ticket{
		ChannelID: tickets.ChannelID(crypto.PubkeyToAddress(src.PublicKey), dst),
		Index:     index, Epoch: epoch, WinProb: winProb, Challenge: [20]byte(challenge),
	}
	tk.Amount.SetFromBig(amount)
	if err := tk.Sign(signer, devchain.ChainID, e.chain.ChannelsAddress()); err != nil {
		t.Fatal(err)
	}
	return chain.Redemption{Ticket: tk, Response: response}
}

// TestRedeemTicketsMixed redeems one list mixing valid tickets of two channels (given out of
// index order), a ticket of a wrong epoch, one already redeemed with RedeemTicket, tickets signed
// by someone else (with and without the source given), a malformed signature, and a losing
// ticket. Every ticket must get its own verdict, the channels their new index and balance, and
// the relayer exactly the valid tickets' value.
func TestRedeemTicketsMixed(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("mixed alice", tokens(10))
	carol, carolKey := e.account("mixed carol", tokens(10))
	bob, _ := e.account("mixed bob", nil)
	_, daveKey := e.account("mixed dave", nil)
	must[common.Hash](t)(alice.FundChannel(t.Context(), bob.Address(), tokens(1)))
	must[common.Hash](t)(carol.FundChannel(t.Context(), bob.Address(), tokens(1)))
	max := tickets.MaxWinProb

	// Index 1 is redeemed alone first: the single path still works.
	first := redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 1, 1, max, 1)
	must[common.Hash](t)(bob.RedeemTicket(t.Context(), first.Ticket, first.Response))

	byDave := redemption(t, e, aliceKey, daveKey, bob.Address(), cents(2), 6, 1, max, 6)
	byDaveSource := byDave
	byDaveSource.Ticket.Index = 7
	if err := byDaveSource.Ticket.Sign(daveKey, devchain.ChainID, e.chain.ChannelsAddress()); err != nil {
		t.Fatal(err)
	}
	byDaveSource.Source = alice.Address()
	malformed := redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 8, 1, max, 8)
	malformed.Ticket.Signature[64] = 0
	// With the source given, a signature EIP-2098 cannot carry goes to the contract as r = s = 0
	// and is rejected there, at the signature check.
	malformedSource := redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 10, 1, max, 10)
	malformedSource.Ticket.Signature[64] = 29
	malformedSource.Source = alice.Address()
	list := []struct {
		name string
		r    chain.Redemption
		want any // nil: redeemed
	}{
		{"alice 3, before 2 in the list", redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(3), 3, 1, max, 3), nil},
		{"alice 2", redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 2, 1, max, 2), nil},
		{"alice 1 again", first, &contracts.RelayChannelsIndexNotIncreasing{TicketIndex: 1, LastRedeemed: 1}},
		{"carol 1", redemption(t, e, carolKey, carolKey, bob.Address(), cents(5), 1, 1, max, 11), nil},
		{"alice wrong epoch", redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 4, 2, max, 4),
			&contracts.RelayChannelsEpochMismatch{TicketEpoch: 2, ChannelEpoch: 1}},
		{"signed by dave, source recovered", byDave, &contracts.RelayChannelsNotChannelDestination{}},
		{"signed by dave, source given", byDaveSource, &contracts.RelayChannelsSignerNotSource{Signer: crypto.PubkeyToAddress(daveKey.PublicKey)}},
		{"malformed signature", malformed, &contracts.RelayChannelsInvalidSignature{}},
		{"malformed signature, source given", malformedSource, &contracts.RelayChannelsInvalidSignature{}},
		{"losing", redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(2), 9, 1, 0, 9), &contracts.RelayChannelsTicketNotWinning{}},
		{"carol 2", redemption(t, e, carolKey, carolKey, bob.Address(), cents(7), 2, 1, max, 12), nil},
	}
	rs := make([]chain.Redemption, len(list))
	for i, it := range list {
		rs[i] = it.r
	}
	before := must[*big.Int](t)(bob.TokenBalance(t.Context(), bob.Address()))
	out, err := bob.RedeemTickets(t.Context(), rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(rs) {
		t.Fatalf("%d outcomes for %d redemptions", len(out), len(rs))
	}
	var tx common.Hash
	for i, it := range list {
		o := out[i]
		if o.Err != nil {
			t.Errorf("%s: no verdict: %v", it.name, o.Err)
			continue
		}
		if it.want == nil {
			if !o.Redeemed || o.Reason != nil {
				t.Errorf("%s: %+v, want redeemed", it.name, o)
			}
		} else if o.Redeemed || fmt.Sprintf("%T%+v", o.Reason, o.Reason) != fmt.Sprintf("%T%+v", it.want, it.want) {
			t.Errorf("%s: redeemed %v reason %T%+v, want %T%+v", it.name, o.Redeemed, o.Reason, o.Reason, it.want, it.want)
		}
		switch {
		case it.name == "malformed signature":
			if o.TxHash != (common.Hash{}) {
				t.Errorf("%s: decided by transaction %s, want locally", it.name, o.TxHash)
			}
		case tx == (common.Hash{}):
			tx = o.TxHash
		case o.TxHash != tx:
			t.Errorf("%s: transaction %s, want the one batch %s", it.name, o.TxHash, tx)
		}
	}
	after := must[*big.Int](t)(bob.TokenBalance(t.Context(), bob.Address()))
	if got, want := new(big.Int).Sub(after, before), cents(3+2+5+7); got.Cmp(want) != 0 {
		t.Fatalf("bob gained %s, want %s", token.Of(got).String(), token.Of(want).String())
	}
	ch := must[channels.Channel](t)(bob.Channel(t.Context(), alice.Address(), bob.Address()))
	if ch.TicketIndex != 3 || ch.Balance.Cmp(cents(100-2-3-2)) != 0 {
		t.Fatalf("alice→bob after the batch: index %d balance %s", ch.TicketIndex, token.Of(ch.Balance).String())
	}
	ch = must[channels.Channel](t)(bob.Channel(t.Context(), carol.Address(), bob.Address()))
	if ch.TicketIndex != 2 || ch.Balance.Cmp(cents(100-5-7)) != 0 {
		t.Fatalf("carol→bob after the batch: index %d balance %s", ch.TicketIndex, token.Of(ch.Balance).String())
	}

	// Redeeming the same list again pays nothing more: every ticket comes back rejected.
	out, err = bob.RedeemTickets(t.Context(), rs)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Redeemed || o.Reason == nil {
			t.Errorf("%s again: %+v, want rejected", list[i].name, o)
		}
	}
	if again := must[*big.Int](t)(bob.TokenBalance(t.Context(), bob.Address())); again.Cmp(after) != 0 {
		t.Fatalf("the repeated batch paid %s", token.Of(new(big.Int).Sub(again, after)).String())
	}
}

// TestRedeemTicketsBadInput: an empty or nil list and a batch budget too small for one ticket are
// ErrBadRedemption, and nothing is sent.
func TestRedeemTicketsBadInput(t *testing.T) {
	e := newEnv(t)
	bob, _ := e.account("bad input bob", nil)
	_, aliceKey := e.account("bad input alice", nil)
	nonce := pendingNonce(t, e, bob.Address())
	one := []chain.Redemption{redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(1), 1, 1, tickets.MaxWinProb, 1)}
	for name, call := range map[string]func() ([]chain.RedeemOutcome, error){
		"nil":   func() ([]chain.RedeemOutcome, error) { return bob.RedeemTickets(t.Context(), nil) },
		"empty": func() ([]chain.RedeemOutcome, error) { return bob.RedeemTickets(t.Context(), []chain.Redemption{}) },
		"tiny budget": func() ([]chain.RedeemOutcome, error) {
			return bob.RedeemTickets(t.Context(), one, chain.WithRedeemBatchGas(50_000))
		},
		"zero budget": func() ([]chain.RedeemOutcome, error) {
			return bob.RedeemTickets(t.Context(), one, chain.WithRedeemBatchGas(0))
		},
	} {
		out, err := call()
		if !errors.Is(err, chain.ErrBadRedemption) || out != nil {
			t.Errorf("%s: %v (%d outcomes), want ErrBadRedemption and none", name, err, len(out))
		}
	}
	if after := pendingNonce(t, e, bob.Address()); after != nonce {
		t.Fatalf("bad input sent %d transactions", after-nonce)
	}
}

// TestRedeemTicketsSplits gives a budget of about three tickets a batch: 8 tickets of two
// channels go out in several transactions, and all are paid.
func TestRedeemTicketsSplits(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("split alice", tokens(10))
	carol, carolKey := e.account("split carol", tokens(10))
	bob, _ := e.account("split bob", nil)
	must[common.Hash](t)(alice.FundChannel(t.Context(), bob.Address(), tokens(1)))
	must[common.Hash](t)(carol.FundChannel(t.Context(), bob.Address(), tokens(1)))
	var rs []chain.Redemption
	for i := range uint64(4) {
		rs = append(rs, redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(1), i+1, 1, tickets.MaxWinProb, byte(2*i+1)))
		rs = append(rs, redemption(t, e, carolKey, carolKey, bob.Address(), cents(1), i+1, 1, tickets.MaxWinProb, byte(2*i+30)))
	}
	budget := chain.EstimateRedeemGas(3, 1)
	out, err := bob.RedeemTickets(t.Context(), rs, chain.WithRedeemBatchGas(budget))
	if err != nil {
		t.Fatal(err)
	}
	txs := map[common.Hash]int{}
	for i, o := range out {
		if !o.Redeemed {
			t.Fatalf("ticket %d: %+v", i, o)
		}
		txs[o.TxHash]++
	}
	if len(txs) < 3 {
		t.Fatalf("8 tickets in %d transactions with a budget of 3 a batch", len(txs))
	}
	for h, n := range txs {
		if n > 3 {
			t.Fatalf("transaction %s carried %d tickets, budget 3", h, n)
		}
	}
	if b := must[*big.Int](t)(bob.TokenBalance(t.Context(), bob.Address())); b.Cmp(cents(8)) != 0 {
		t.Fatalf("bob holds %s, want 0.08", token.Of(b).String())
	}
}

// receiptBlocker is a provider in front of a dev chain that can be made to fail every
// eth_getTransactionReceipt with HTTP 500 while passing everything else through.
type receiptBlocker struct {
	srv   *httptest.Server
	block atomic.Bool
}

func newReceiptBlocker(t *testing.T, target string) *receiptBlocker {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}
	b := &receiptBlocker{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if b.block.Load() && bytes.Contains(body, []byte("eth_getTransactionReceipt")) {
			http.Error(w, "receipts unavailable", http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// TestRedeemTicketsBatchFails: the first batch is mined but its receipt cannot be read. Its
// tickets get no verdict (Err, with the transaction's hash), the later batches are not sent, and
// the call returns the error. Redeeming the whole list again pays exactly the tickets not paid
// yet: the first batch's come back IndexNotIncreasing, nothing is paid twice or lost.
func TestRedeemTicketsBatchFails(t *testing.T) {
	e := newEnv(t)
	alice, aliceKey := e.account("fail alice", tokens(10))
	_, bobKey := e.account("fail bob", nil)
	blocker := newReceiptBlocker(t, e.chain.RPCURL())
	bob := e.dial(bobKey, blocker.srv.URL)
	must[common.Hash](t)(alice.FundChannel(t.Context(), bob.Address(), tokens(1)))
	var rs []chain.Redemption
	for i := range uint64(6) {
		rs = append(rs, redemption(t, e, aliceKey, aliceKey, bob.Address(), cents(1), i+1, 1, tickets.MaxWinProb, byte(i+1)))
	}
	budget := chain.EstimateRedeemGas(3, 1) // two batches of three

	blocker.block.Store(true)
	out, err := bob.RedeemTickets(t.Context(), rs, chain.WithRedeemBatchGas(budget))
	blocker.block.Store(false)
	if !errors.Is(err, chain.ErrProviderUnavailable) {
		t.Fatalf("RedeemTickets with receipts unavailable: %v, want ErrProviderUnavailable", err)
	}
	for i, o := range out {
		if o.Err == nil || o.Redeemed || o.Reason != nil {
			t.Fatalf("ticket %d: %+v, want no verdict", i, o)
		}
		if sent := o.TxHash != (common.Hash{}); sent != (i < 3) {
			t.Fatalf("ticket %d: transaction %s; want one for the first batch only", i, o.TxHash)
		}
	}
	// The first batch was mined all the same.
	if ch := must[channels.Channel](t)(alice.Channel(t.Context(), alice.Address(), bob.Address())); ch.TicketIndex != 3 {
		t.Fatalf("channel index %d after the blocked batch, want 3", ch.TicketIndex)
	}

	out, err = bob.RedeemTickets(t.Context(), rs, chain.WithRedeemBatchGas(budget))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if i < 3 {
			want := &contracts.RelayChannelsIndexNotIncreasing{TicketIndex: uint64(i + 1), LastRedeemed: 3}
			if fmt.Sprintf("%+v", o.Reason) != fmt.Sprintf("%+v", want) {
				t.Errorf("ticket %d again: %+v, want %+v", i, o, want)
			}
		} else if !o.Redeemed {
			t.Errorf("ticket %d again: %+v, want redeemed", i, o)
		}
	}
	if b := must[*big.Int](t)(alice.TokenBalance(t.Context(), bob.Address())); b.Cmp(cents(6)) != 0 {
		t.Fatalf("bob holds %s, want exactly 0.06", token.Of(b).String())
	}
}
