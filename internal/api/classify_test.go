package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/testlog"
)

// TestErrorTable: the rooms' sentinels get their status and code from the one table. The
// ledger's, the peers' and the settings' messages keep what the error says (amounts, names,
// the contract's reason, the setting's rule); the others are the table's sentence alone, so
// that a cause they wrap (addresses, peers, the provider) stays in the log; an *Error keeps its
// own; anything else is a 500 that says only that the node failed.
func TestErrorTable(t *testing.T) {
	n := newFakeNode(t)
	settingErr := func(name, value string) error {
		_, err := n.settings.Update(map[string]json.RawMessage{name: json.RawMessage(value)})
		if err == nil {
			t.Fatalf("settings took %s %s", name, value)
		}
		return err
	}
	unknownSetting := settingErr("colour", `"blue"`)
	badMaxChannels := settingErr("maxChannels", `0`)
	nullStrategy := settingErr("strategy", `null`)
	_, unknownName := n.dir.Resolve("nobody")
	reserved := n.dir.SetAlias("me", newPeerID(t))
	notSet := n.dir.DeleteAlias("never-set")
	const cause = "10.1.2.3:8545"
	// The ledger's errors as its operations wrap them.
	noBalance := fmt.Errorf("%w: amount 5 RELAY is more than the token balance 3 RELAY", ledger.ErrNotEnoughBalance)
	alreadyOpen := fmt.Errorf("%w: the channel is Open", ledger.ErrChannelAlreadyOpen)
	redeemed := fmt.Errorf("%w: IndexNotIncreasing()", ledger.ErrAlreadyRedeemed)
	void := fmt.Errorf("%w: ChannelNotOpen()", ledger.ErrTicketVoid)
	refused := fmt.Errorf("%w: Unknown()", ledger.ErrContractRefused)
	for _, c := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{noBalance, http.StatusUnprocessableEntity, CodeNotEnoughBalance, "cannot open channel: " + noBalance.Error()},
		{alreadyOpen, http.StatusConflict, CodeChannelOpen, "cannot open channel: " + alreadyOpen.Error()},
		{ledger.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot open channel: a channel needs another peer, not this node"},
		{ledger.ErrChannelNotFound, http.StatusNotFound, CodeChannelNotFound, "cannot open channel: " + ledger.ErrChannelNotFound.Error()},
		{fmt.Errorf("%w: %s", ledger.ErrChainUnavailable, cause), http.StatusServiceUnavailable, CodeUnknownFailure,
			"the chain provider is unavailable; cannot open channel now, try again later"},
		{redeemed, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot open channel: the contract refused: " + redeemed.Error()},
		{void, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot open channel: the contract refused: " + void.Error()},
		{ledger.ErrClosureTimeNotReached, http.StatusUnprocessableEntity, CodeUnknownFailure,
			"cannot open channel: the contract refused: " + ledger.ErrClosureTimeNotReached.Error()},
		{refused, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot open channel: " + refused.Error()},
		{fmt.Errorf("wait for receipt: %w", context.DeadlineExceeded), http.StatusGatewayTimeout, CodeTimeout, "open channel timed out"},

		// The settings' own sentences, whole.
		{unknownSetting, http.StatusBadRequest, CodeInvalidSetting, unknownSetting.Error()},
		{badMaxChannels, http.StatusBadRequest, CodeInvalidSettingValue, badMaxChannels.Error()},
		{nullStrategy, http.StatusBadRequest, CodeInvalidSettingValue, nullStrategy.Error()},

		// The peers' errors after the operation.
		{unknownName, http.StatusBadRequest, CodeInvalidPeerID, "cannot open channel: " + unknownName.Error()},
		{reserved, http.StatusBadRequest, CodeInvalidInput, "cannot open channel: " + reserved.Error()},
		{notSet, http.StatusNotFound, CodePeerIDNotFound, "cannot open channel: no such alias"},
		{fmt.Errorf("ping %s: %w", cause, identity.ErrNoAddress), http.StatusNotFound, CodePeerIDNotFound,
			"cannot open channel the peer: it is not known (no address for it)"},
		{fmt.Errorf("ping %s: %w", cause, identity.ErrSelf), http.StatusBadRequest, CodeInvalidPeerID, "cannot open channel this node itself"},

		{fmt.Errorf("wrapped: %w", &Error{http.StatusTeapot, CodeInvalidInput, "its own message"}), http.StatusTeapot, CodeInvalidInput, "its own message"},
		{fmt.Errorf("open %s: disk on fire", cause), http.StatusInternalServerError, CodeUnknownFailure,
			"open channel failed because of a fault of the node; its log says more"},
	} {
		status, code, msg := (&Server{}).classify(c.err, "open channel")
		if status != c.status || code != c.code || msg != c.msg {
			t.Errorf("classify(%v) = %d %s %q, want %d %s %q", c.err, status, code, msg, c.status, c.code, c.msg)
		}
		if c.status != http.StatusBadRequest && !strings.Contains(c.msg, cause) && strings.Contains(msg, cause) {
			t.Errorf("classify(%v) tells the client the cause: %q", c.err, msg)
		}
	}
}

// TestInternalErrorStaysInTheLog: a fault of the node is answered 500 UNKNOWN_FAILURE with a
// message that names the operation and not the error, which the node's log gets instead.
func TestInternalErrorStaysInTheLog(t *testing.T) {
	fault := errors.New("open /var/lib/relayd/store.db: input/output error")
	for _, tc := range []struct {
		name, method, path, body, op string
		cfg                          func(n *fakeNode) Config
	}{
		{"alias store", http.MethodGet, "/aliases", "", "list aliases", func(n *fakeNode) Config {
			n.aliases.fail(fault)
			return n.config(false)
		}},
		{"settings store", http.MethodPut, "/settings", `{"strategy":"promiscuous"}`, "update settings", func(n *fakeNode) Config {
			n.settingsStore.fail(fault)
			return n.config(false)
		}},
		{"chain", http.MethodGet, "/account/balances", "", "read balances", func(n *fakeNode) Config { return n.faultyConfig(fault) }},
		{"tickets", http.MethodGet, "/tickets/statistics", "", "ticket statistics", func(n *fakeNode) Config { return n.faultyConfig(fault) }},
		{"messenger", http.MethodPost, "/messages", `{"body":"hi","recipient":"` + newPeerID(t).String() + `"}`, "send message",
			func(n *fakeNode) Config { return n.faultyConfig(fault) }},
		{"signing", http.MethodPost, "/messages/sign", `{"message":"hi"}`, "sign message", func(n *fakeNode) Config { return n.faultyConfig(fault) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testlog.Buffer{}
			cfg := tc.cfg(newFakeNode(t))
			cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
			srv := serveConfig(t, cfg)
			status, _, body := doBody(t, tc.method, srv.URL+Prefix+tc.path, auth, tc.body)
			var e ErrorBody
			want := tc.op + " failed because of a fault of the node; its log says more"
			if status != http.StatusInternalServerError || json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeUnknownFailure || e.Error != want {
				t.Fatalf("got %d %s, want 500 %q", status, body, want)
			}
			if log := logs.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, fault.Error()) {
				t.Fatalf("the log does not have the fault: %q", log)
			}
		})
	}
}

// TestPeersErrors: the peer directory's refusals through the handlers: an alias it cannot take,
// "me" that cannot be removed, an alias that is not set.
func TestPeersErrors(t *testing.T) {
	srv, n := newTestServer(t, false)
	bob := newPeerID(t).String()
	deleteMe := n.dir.DeleteAlias(peers.Me)
	if !errors.Is(deleteMe, peers.ErrInvalidAlias) {
		t.Fatalf("DeleteAlias(me) = %v", deleteMe)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code, msg          string
	}{
		{http.MethodPost, "/aliases", `{"peerId":"` + bob + `","alias":"me"}`, 400, CodeInvalidInput,
			"cannot set alias: " + peers.CheckAlias("me").Error()},
		{http.MethodPost, "/aliases", `{"peerId":"` + bob + `","alias":"` + bob + `"}`, 400, CodeInvalidInput,
			"cannot set alias: " + peers.CheckAlias(bob).Error()},
		{http.MethodDelete, "/aliases/" + peers.Me, "", 400, CodeInvalidInput, `cannot delete alias "me": ` + deleteMe.Error()},
		{http.MethodDelete, "/aliases/never-set", "", 404, CodePeerIDNotFound, `cannot delete alias "never-set": no such alias`},
	} {
		status, _, body := doBody(t, tc.method, srv.URL+Prefix+tc.path, auth, tc.body)
		var e ErrorBody
		if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code || e.Error != tc.msg {
			t.Errorf("%s %s: got %d %s, want %d %s %q", tc.method, tc.path, status, body, tc.status, tc.code, tc.msg)
		}
	}
}
