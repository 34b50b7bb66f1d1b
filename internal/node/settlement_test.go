package node

import (
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/chain"
)

// TestChannelLifecycleOverREST: A opens a channel to B over REST, both see
// it Open with its balance, A closes it in two phases and gets the balance
// back; withdraw moves tokens on chain.
func TestChannelLifecycleOverREST(t *testing.T) {
	net := newTestNet(t, 2)
	a, b := net.nodes[0], net.nodes[1]
	before := net.tokenBalance(a)

	net.open(a, b, tokens(3))
	if got := new(big.Int).Sub(before, net.tokenBalance(a)); got.Cmp(tokens(3)) != 0 {
		t.Fatalf("A's balance fell by %s, want 3 tokens", got)
	}
	out, status := net.channel(a, b, "outgoing")
	if status != http.StatusOK || out.Status != "Open" || out.Balance != tokens(3).String() || out.PeerID != b.id.PeerID().String() || out.Type != "outgoing" {
		t.Fatalf("A's view: %d %+v", status, out)
	}
	in, status := net.channel(b, a, "incoming")
	if status != http.StatusOK || in.Status != "Open" || in.Balance != tokens(3).String() || in.ChannelID != out.ChannelID {
		t.Fatalf("B's view: %d %+v", status, in)
	}
	var list struct{ Incoming, Outgoing []channelView }
	net.mustCall(b, http.MethodGet, "/channels", "", http.StatusOK, &list)
	if len(list.Incoming) != 1 || len(list.Outgoing) != 0 {
		t.Fatalf("B's channels: %+v", list)
	}
	var errBody struct{ Status, Error string }
	if st := net.call(a, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":"1"}`, b.id.PeerID()), &errBody); st != http.StatusConflict || errBody.Status != "CHANNEL_ALREADY_OPEN" {
		t.Fatalf("second open: %d %+v", st, errBody)
	}
	if st := net.call(a, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":"1"}`, a.id.PeerID()), &errBody); st != http.StatusBadRequest {
		t.Fatalf("channel to self: %d %+v", st, errBody)
	}
	tooMuch := new(big.Int).Add(net.tokenBalance(b), big.NewInt(1))
	if st := net.call(b, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, a.id.PeerID(), tooMuch.String()), &errBody); st != http.StatusUnprocessableEntity || errBody.Status != "NOT_ENOUGH_BALANCE" {
		t.Fatalf("open over balance: %d %+v", st, errBody)
	}
	if _, st := net.channel(b, a, "outgoing"); st != http.StatusNotFound {
		t.Fatalf("B has no outgoing channel, got %d", st)
	}

	// Phase 1: initiate.
	var closed struct{ Receipt, ChannelStatus string }
	net.mustCall(a, http.MethodDelete, "/channels/"+b.id.PeerID().String()+"/outgoing", "", http.StatusOK, &closed)
	if closed.ChannelStatus != "Open" || closed.Receipt == "" {
		t.Fatalf("initiate: %+v", closed)
	}
	net.eventually("B sees the closure", func() bool {
		c, _ := net.channel(b, a, "incoming")
		return c.Status == "PendingToClose"
	})
	// Too early: nothing is sent.
	closed = struct{ Receipt, ChannelStatus string }{}
	net.mustCall(a, http.MethodDelete, "/channels", fmt.Sprintf(`{"peerId":%q,"direction":"outgoing"}`, b.id.PeerID()), http.StatusOK, &closed)
	if closed.ChannelStatus != "PendingToClose" || closed.Receipt != "" {
		t.Fatalf("early finalize: %+v", closed)
	}
	// Phase 2: after the closure period.
	if err := net.chain.AdjustTime(61 * time.Second); err != nil {
		t.Fatal(err)
	}
	net.mustCall(a, http.MethodDelete, "/channels", fmt.Sprintf(`{"peerId":%q,"direction":"outgoing"}`, b.id.PeerID()), http.StatusOK, &closed)
	if closed.ChannelStatus != "PendingToClose" || closed.Receipt == "" {
		t.Fatalf("finalize: %+v", closed)
	}
	if c, _ := net.channel(a, b, "outgoing"); c.Status != "Closed" || c.Balance != "0" {
		t.Fatalf("after finalize: %+v", c)
	}
	if got := net.tokenBalance(a); got.Cmp(before) != 0 {
		t.Fatalf("A's balance %s after close, want %s back", got, before)
	}
	net.mustCall(a, http.MethodGet, "/channels", "", http.StatusOK, &list)
	if len(list.Outgoing) != 0 {
		t.Fatalf("closed channel listed without includingClosed: %+v", list)
	}
	net.mustCall(a, http.MethodGet, "/channels?includingClosed=true", "", http.StatusOK, &list)
	if len(list.Outgoing) != 1 || list.Outgoing[0].Status != "Closed" {
		t.Fatalf("includingClosed: %+v", list)
	}

	// Withdraw tokens from A to B's address.
	bBefore := net.tokenBalance(b)
	var receipt struct{ Receipt string }
	net.mustCall(a, http.MethodPost, "/account/withdraw", fmt.Sprintf(`{"amount":%q,"currency":"RELAY","recipient":%q}`, tokens(2).String(), b.id.Address().Hex()), http.StatusOK, &receipt)
	if len(receipt.Receipt) != 66 {
		t.Fatalf("withdraw receipt %q", receipt.Receipt)
	}
	if got := new(big.Int).Sub(net.tokenBalance(b), bBefore); got.Cmp(tokens(2)) != 0 {
		t.Fatalf("B received %s, want 2 tokens", got)
	}
	if st := net.call(a, http.MethodPost, "/account/withdraw", fmt.Sprintf(`{"amount":%q,"currency":"RELAY","recipient":%q}`, tokens(1000).String(), b.id.Address().Hex()), &errBody); st != http.StatusUnprocessableEntity || errBody.Status != "NOT_ENOUGH_BALANCE" {
		t.Fatalf("withdraw over balance: %d %+v", st, errBody)
	}
	// An operator reads the amounts in tokens (the API's wei in brackets).
	if !strings.Contains(errBody.Error, "amount 1000 RELAY ("+tokens(1000).String()+" wei) is more than the balance ") {
		t.Fatalf("withdraw over balance says %q", errBody.Error)
	}
}

// TestWrongChannelsContract: a node given another contract's address (the token's) or an
// address without code as --channelsContract refuses to start, naming that flag.
func TestWrongChannelsContract(t *testing.T) {
	ch := startDevChain(t)
	for _, addr := range []string{ch.TokenAddress().Hex(), "0x000000000000000000000000000000000000dEaD"} {
		cfg := testConfig(t)
		cfg.Provider, cfg.ChannelsContract = ch.RPCURL(), addr
		_, err := New(cfg, os.Stderr, Options{})
		var se *StartupError
		if !errors.As(err, &se) || se.Flag != "channelsContract" || !strings.HasPrefix(err.Error(), "--channelsContract: ") {
			t.Fatalf("--channelsContract %s: %v", addr, err)
		}
	}
}

// TestUnfundedNodeSaysSoThenAnnounces: a node without native currency
// starts, says on its admin WebSocket that it is not funded, and announces
// itself once funded.
func TestUnfundedNodeSaysSoThenAnnounces(t *testing.T) {
	net := newTestNet(t, 1)
	cfg := testConfig(t)
	cfg.Provider, cfg.ChannelsContract = net.chain.RPCURL(), net.chain.ChannelsAddress().Hex()
	cfg.LogLevel = "info"
	n := startNode(t, cfg, Options{AnnounceRetry: chain.Retry{Initial: 50 * time.Millisecond, Max: 100 * time.Millisecond}})
	f := watch(t, n)
	deadline := time.After(20 * time.Second)
	for found := false; !found; {
		select {
		case fr, ok := <-f.ch:
			if !ok {
				t.Fatal("admin connection closed")
			}
			found = strings.Contains(fr.Msg, "node is not funded") && strings.Contains(fr.Msg, n.id.Address().Hex())
		case <-deadline:
			t.Fatal("the unfunded node never said so")
		}
	}
	if err := net.chain.Fund(t.Context(), n.id.Address(), tokens(1), nil); err != nil {
		t.Fatal(err)
	}
	net.eventually("the funded node announced itself", func() bool {
		info := nodeInfo(n)
		return len(info.AnnouncedAddresses) == 2 && info.PeersAnnounced == 2
	})
}
