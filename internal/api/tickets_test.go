package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/ledger"
)

// partialRedeem is the fakeChain whose redemptions stop part way with err.
type partialRedeem struct {
	*fakeChain
	err error
}

func (c partialRedeem) RedeemTickets(context.Context, *common.Address, string) (ledger.RedeemReport, error) {
	return ledger.RedeemReport{}, c.err
}

// TestRedeemFailurePartWay: a redemption that stopped after some tickets were redeemed answers
// the status and code of its cause, with the counts in the body and a message that says what
// was redeemed (tickets, tokens, those settled unpaid), how many remain, and why, as the error
// table words the cause (so a fault of the node still says nothing of its own), on every
// redeem operation; the body is one the document allows.
func TestRedeemFailurePartWay(t *testing.T) {
	sp := loadSpec(t)
	f := newSpecFixture(t)
	bob := f.other.PeerID().String()
	token := http.Header{"X-Auth-Token": {testToken}}
	report := ledger.RedeemReport{Redeemed: 3}
	report.Value.SetUint64(3e16)
	unpaid := report
	unpaid.Losing, unpaid.Neglected = 1, 1
	providerDown := fmt.Errorf("%w: dial tcp 10.1.2.3:8545: connection refused", ledger.ErrChainUnavailable)
	void := fmt.Errorf("redeem ticket 4: %w: ChannelNotOpen()", ledger.ErrTicketVoid)
	noGas := fmt.Errorf("%w: insufficient funds for gas * price + value", ledger.ErrNotEnoughBalance)
	twice := errors.Join(fmt.Errorf("redeem ticket 4: %w", ledger.ErrAlreadyRedeemed), fmt.Errorf("redeem ticket 5: %w", ledger.ErrAlreadyRedeemed))
	const done = "redeemed 3 of 10 tickets (0.03 RELAY); 7 remain: "
	for _, tc := range []struct {
		name    string
		report  ledger.RedeemReport
		cause   error
		noChain bool // no Chain, so no token symbol
		status  int
		code    string
		msg     string
	}{
		{"provider down", report, providerDown, false, 503, CodeUnknownFailure,
			done + "the chain provider is unavailable; cannot redeem tickets now, try again later"},
		{"contract refused", report, void, false, 422, CodeUnknownFailure, done + "cannot redeem tickets: the contract refused: " + void.Error()},
		{"no gas", report, noGas, false, 422, CodeNotEnoughBalance, done + "cannot redeem tickets: " + noGas.Error()},
		{"timeout", report, fmt.Errorf("wait for receipt of 0x01: %w", context.DeadlineExceeded), false, 504, CodeTimeout,
			done + "redeem tickets timed out"},
		{"node fault", report, errors.New("settle ticket 2: open /var/lib/relayd/store.db: input/output error"), false, 500, CodeUnknownFailure,
			done + "redeem tickets failed because of a fault of the node; its log says more"},
		{"settled unpaid", unpaid, ledger.ErrClosureTimeNotReached, false, 422, CodeUnknownFailure,
			"redeemed 3 of 12 tickets (0.03 RELAY), 2 settled unpaid (losing or void); 7 remain: cannot redeem tickets: the contract refused: " +
				ledger.ErrClosureTimeNotReached.Error()},
		// A cause of several lines is put on one.
		{"several causes", report, twice, false, 422, CodeUnknownFailure,
			done + "cannot redeem tickets: the contract refused: " + strings.ReplaceAll(twice.Error(), "\n", "; ")},
		{"no token symbol", report, ledger.ErrChainUnavailable, true, 503, CodeUnknownFailure,
			"redeemed 3 of 10 tickets (0.03); 7 remain: the chain provider is unavailable; cannot redeem tickets now, try again later"},
	} {
		for _, path := range []string{"/tickets/redeem", "/channels/tickets/redeem", "/channels/" + bob + "/tickets/redeem"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				f.reset(t)
				cfg := f.self.config(false)
				cfg.Tickets = partialRedeem{f.self.chain, &ledger.RedeemError{Report: tc.report, Remaining: 7, Err: tc.cause}}
				if tc.noChain {
					cfg.Chain = nil
				}
				srv := serveConfig(t, cfg)
				resp, body := send(t, http.MethodPost, srv.URL+Prefix+path, token, "")
				var got struct {
					Status, Error       string
					Redeemed, Remaining *int
				}
				if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != tc.status {
					t.Fatalf("got %d %s (%v), want %d", resp.StatusCode, body, err, tc.status)
				}
				if got.Status != tc.code || got.Error != tc.msg || got.Redeemed == nil || *got.Redeemed != 3 || got.Remaining == nil || *got.Remaining != 7 {
					t.Fatalf("body %s, want %s %q with redeemed 3 and remaining 7", body, tc.code, tc.msg)
				}
				if strings.Contains(string(body), "10.1.2.3") || strings.Contains(string(body), "/var/lib") {
					t.Fatalf("the answer tells the client the cause: %s", body)
				}
				sp.checkResponse(t, http.MethodPost, path, resp.StatusCode, resp.Header, body)
			})
		}
	}
}

// TestTicketViews: the tickets are shown as the API writes them: the channel, its source named
// by PeerId once it announced itself (by address otherwise), amounts in the smallest unit, the
// win probability as a number, and 0x hexadecimal challenge and signature.
func TestTicketViews(t *testing.T) {
	n := newFakeNode(t)
	announced, silent := newIdentity(t), newIdentity(t)
	n.graph.Announce(announcedBy(announced))
	tk := fakeTicket(announced.Address(), n.Address(), 7)
	other := fakeTicket(silent.Address(), n.Address(), 9)
	other.Ticket.WinProb = 1<<55 - 1 // one half, nearly
	n.chain.reset(nil, tk, other)
	srv, _ := serve(t, n, false)
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/tickets", auth)
	var got []Ticket
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got) != 2 {
		t.Fatalf("%d %s", status, body)
	}
	want := Ticket{ChannelID: hexBytes(tk.Ticket.ChannelID[:]), Counterparty: announced.PeerID().String(), Amount: "10000000000000000",
		Index: "7", ChannelEpoch: "1", Epoch: "1", WinProb: "1", Challenge: "0x" + strings.Repeat("ab", 20),
		Signature: "0x" + strings.Repeat("cd", 64) + "1b"}
	if got[0] != want {
		t.Errorf("ticket\n%+v, want\n%+v", got[0], want)
	}
	if got[1].Counterparty != silent.Address().Hex() || got[1].WinProb != "0.5" || got[1].Index != "9" {
		t.Errorf("ticket of an account that never announced itself: %+v", got[1])
	}
	status, _, body = do(t, http.MethodGet, srv.URL+Prefix+"/tickets/statistics", auth)
	var st TicketStatistics
	if status != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.Unredeemed != 2 || st.UnredeemedValue != "20000000000000000" ||
		st.RedeemedValue != "20000000000000000" || st.WinProportion != 0.5 || st.RejectedValue != "0" {
		t.Fatalf("statistics %d %s", status, body)
	}
}

// TestTicketLimit: ?limit= lists only the first tickets, in the listing's order, and
// X-Total-Count says how many there are; a limit that is not a whole number of at least 1, or
// given twice, is 400 and lists nothing.
func TestTicketLimit(t *testing.T) {
	n := newFakeNode(t)
	src := newIdentity(t)
	var all []ledger.AckedTicket
	for i := range 5 {
		all = append(all, fakeTicket(src.Address(), n.Address(), uint64(i+1)))
	}
	n.chain.reset(nil, all...)
	srv, _ := serve(t, n, false)
	for _, path := range []string{"/tickets", "/channels/tickets", "/channels/" + src.PeerID().String() + "/tickets"} {
		for limit, want := range map[string]int{"": 5, "?limit=2": 2, "?limit=5": 5, "?limit=100": 5, "?limit=1": 1} {
			status, h, body := do(t, http.MethodGet, srv.URL+Prefix+path+limit, auth)
			var got []Ticket
			if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got) != want || h.Get("X-Total-Count") != "5" {
				t.Fatalf("%s%s: %d %v %s, want %d tickets", path, limit, status, h.Get("X-Total-Count"), body, want)
			}
			for i, tk := range got {
				if tk.Index != strconv.Itoa(i+1) {
					t.Fatalf("%s%s: ticket %d has index %s", path, limit, i, tk.Index)
				}
			}
		}
		for _, bad := range []string{"?limit=0", "?limit=-1", "?limit=x", "?limit=1.5", "?limit=", "?limit=1&limit=2", "?limit=99999999999999999999"} {
			status, _, body := do(t, http.MethodGet, srv.URL+Prefix+path+bad, auth)
			var e ErrorBody
			if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeInvalidInput || !strings.Contains(e.Error, "limit") {
				t.Errorf("%s%s: %d %s", path, bad, status, body)
			}
		}
	}
}
