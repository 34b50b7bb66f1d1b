package api

import (
	"encoding/json"
	"math/big"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
)

// TestAmountRefused: an amount is a positive whole number of the smallest unit that fits the
// contracts' uint256, written in decimal digits; anything else is refused with 400
// INVALID_AMOUNT before the chain is reached, by the validator or, for what the document lets
// through (78 digits above 2^256 − 1), by the handler itself. Parsing amounts is token's
// (FuzzParseUnits); this is the API's use of it.
func TestAmountRefused(t *testing.T) {
	maxUint256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	const msg = "amount must be a positive whole number of the smallest unit, as a decimal string"
	for _, tc := range []struct {
		amount string
		status int
		want   string // what reaches the chain, for a 200
	}{
		{"1", 200, "1"},
		{"0001", 200, "1"},
		{"1000000000000000000", 200, "1000000000000000000"},
		{maxUint256.String(), 422, ""}, // a valid amount, more than the balance
		{"0", 400, ""},
		{"000", 400, ""},
		{"-1", 400, ""},
		{"+1", 400, ""},
		{"1.5", 400, ""},
		{"1e18", 400, ""},
		{"0x10", 400, ""},
		{" 1", 400, ""},
		{"1 ", 400, ""},
		{"", 400, ""},
		{"１", 400, ""}, // a full-width digit
		{new(big.Int).Add(maxUint256, big.NewInt(1)).String(), 400, ""},
		{strings.Repeat("9", 78), 400, ""},
		{strings.Repeat("9", 79), 400, ""},
	} {
		t.Run(tc.amount, func(t *testing.T) {
			n := newFakeNode(t)
			srv, _ := serve(t, n, false)
			status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/account/withdraw", auth,
				`{"amount":"`+tc.amount+`","currency":"NATIVE","recipient":"`+fakeWallet.Hex()+`"}`)
			if status != tc.status {
				t.Fatalf("withdraw: got %d %s, want %d", status, body, tc.status)
			}
			n.chain.mu.Lock()
			withdrawn := slices.Clone(n.chain.withdrawn)
			n.chain.mu.Unlock()
			if tc.status == 200 && !slices.Equal(withdrawn, []string{tc.want}) {
				t.Fatalf("withdrew %v, want %s", withdrawn, tc.want)
			}
			if tc.status != 400 {
				return
			}
			var e ErrorBody
			if json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeInvalidAmount || e.Error != msg || len(withdrawn) != 0 {
				t.Fatalf("withdraw: %s, withdrew %v", body, withdrawn)
			}
			status, _, body = doBody(t, http.MethodPost, srv.URL+Prefix+"/channels", auth, `{"peerId":"`+newPeerID(t).String()+`","amount":"`+tc.amount+`"}`)
			if status != 400 || json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeInvalidAmount || e.Error != msg {
				t.Fatalf("open channel: %d %s", status, body)
			}
		})
	}
}

// TestChannelViews: channels are shown from this node's side: incoming or outgoing, the other
// end named by PeerId once it announced itself (by address otherwise), the status, the balance
// in the smallest unit, and a closing channel's closure time.
func TestChannelViews(t *testing.T) {
	f := newSpecFixture(t)
	f.reset(t)
	srv := serveConfig(t, f.self.config(false))
	self, bob, closing := f.self.Address(), f.other.Address(), f.closing.Address()
	id := func(src, dst common.Address) string { v := channels.IDOf(src, dst); return hexBytes(v[:]) }
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/channels?includingClosed=true", auth)
	var got Channels
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	closedID := [32]byte{0x03}
	want := Channels{
		Incoming: []Channel{
			{Type: "incoming", ChannelID: id(self, self), PeerID: f.self.PeerID().String(), Status: "Open", Balance: "100"},
			{Type: "incoming", ChannelID: id(fakeWallet, self), PeerID: fakeWallet.Hex(), Status: "Open", Balance: "0"},
			{Type: "incoming", ChannelID: hexBytes(closedID[:]), PeerID: f.self.PeerID().String(), Status: "Closed", Balance: "0"},
		},
		Outgoing: []Channel{
			{Type: "outgoing", ChannelID: id(self, bob), PeerID: f.other.PeerID().String(), Status: "Open", Balance: "100"},
			{Type: "outgoing", ChannelID: id(self, closing), PeerID: f.closing.PeerID().String(), Status: "PendingToClose", Balance: "100",
				ClosureTime: "2026-11-22T10:05:00.000Z"},
		},
	}
	if bob.Cmp(closing) > 0 {
		want.Outgoing[0], want.Outgoing[1] = want.Outgoing[1], want.Outgoing[0]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("channels\n%+v, want\n%+v", got, want)
	}

	far := f.far.PeerID().String()
	status, _, body = do(t, http.MethodGet, srv.URL+Prefix+"/channels/"+far+"/outgoing", auth)
	if want := `{"status":"CHANNEL_NOT_FOUND","error":"cannot get channel: channel not found: no channel with ` + far + `"}` + "\n"; status != 404 || body != want {
		t.Fatalf("missing channel: %d %s, want %s", status, body, want)
	}
	status, _, body = doBody(t, http.MethodPost, srv.URL+Prefix+"/channels", auth, `{"peerId":"`+far+`","amount":"1"}`)
	if want := `{"channelId":"` + id(self, f.far.Address()) + `","receipt":"0x` + strings.Repeat("bb", 32) + `"}` + "\n"; status != 201 || body != want {
		t.Fatalf("open: %d %s, want %s", status, body, want)
	}
	status, _, body = do(t, http.MethodDelete, srv.URL+Prefix+"/channels/"+f.closing.PeerID().String()+"/outgoing", auth)
	if want := `{"channelStatus":"PendingToClose"}` + "\n"; status != 200 || body != want {
		t.Fatalf("close, period not over: %d %s, want %s", status, body, want)
	}
	status, _, body = do(t, http.MethodDelete, srv.URL+Prefix+"/channels/"+f.other.PeerID().String()+"/outgoing", auth)
	if want := `{"receipt":"0x` + strings.Repeat("cc", 32) + `","channelStatus":"Open"}` + "\n"; status != 200 || body != want {
		t.Fatalf("close: %d %s, want %s", status, body, want)
	}
}
