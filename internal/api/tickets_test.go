package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// partialRedeemNode is the fakeNode whose redemptions stop part way with err.
type partialRedeemNode struct {
	*fakeNode
	err error
}

func (n partialRedeemNode) RedeemTickets(context.Context, *peer.ID) error { return n.err }

// TestRedeemFailurePartWay: a redemption that stopped after some tickets were redeemed answers
// the cause's status and code, with the counts in the body, on every redeem operation, and the
// body is one the document allows.
func TestRedeemFailurePartWay(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	bob := f.other.PeerID().String()
	token := http.Header{"X-Auth-Token": {testToken}}
	for _, tc := range []struct {
		name   string
		cause  Error
		status int
	}{
		{"provider down", Error{http.StatusServiceUnavailable, CodeUnknownFailure, "redeemed 3 of 10 tickets (0.03 RELAY); 7 remain: the chain provider is unavailable"}, 503},
		{"contract refused", Error{http.StatusUnprocessableEntity, CodeUnknownFailure, "redeemed 1 of 2 tickets (0.01 RELAY); 1 remain: the contract refused: ChannelNotOpen"}, 422},
		{"no gas", Error{http.StatusUnprocessableEntity, CodeNotEnoughBalance, "redeemed 1 of 2 tickets (0.01 RELAY); 1 remain: not enough balance: insufficient funds"}, 422},
		{"timeout", Error{http.StatusGatewayTimeout, CodeTimeout, "redeemed 1 of 2 tickets (0.01 RELAY); 1 remain: redeem tickets timed out"}, 504},
		{"node fault", Error{http.StatusInternalServerError, CodeUnknownFailure, "redeemed 1 of 2 tickets (0.01 RELAY); 1 remain: settle ticket 2: store closed"}, 500},
	} {
		for _, path := range []string{"/tickets/redeem", "/channels/tickets/redeem", "/channels/" + bob + "/tickets/redeem"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				f.reset()
				cfg := f.self.config(false)
				cfg.Tickets = partialRedeemNode{f.self, &RedeemError{Cause: tc.cause, Redeemed: 3, Remaining: 7}}
				srv := serveConfig(t, cfg)
				resp, body := send(t, http.MethodPost, srv.URL+Prefix+path, token, "")
				var got struct {
					Status, Error       string
					Redeemed, Remaining *int
				}
				if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != tc.status {
					t.Fatalf("got %d %s (%v), want %d", resp.StatusCode, body, err, tc.status)
				}
				if got.Status != tc.cause.Code || got.Error != tc.cause.Msg || got.Redeemed == nil || *got.Redeemed != 3 || got.Remaining == nil || *got.Remaining != 7 {
					t.Fatalf("body %s, want %s %q with redeemed 3 and remaining 7", body, tc.cause.Code, tc.cause.Msg)
				}
				sp.checkResponse(t, http.MethodPost, path, resp.StatusCode, resp.Header, body)
			})
		}
	}
}
