package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/relayd/relayd/internal/ledger"
)

// TestClassifyLedgerErrors: the ledger's sentinels get their status and code from the one table,
// and the message keeps what the ledger said (amounts, the contract's reason) after the
// operation.
func TestClassifyLedgerErrors(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{fmt.Errorf("%w: amount 5 RELAY is more than the token balance 3 RELAY", ledger.ErrNotEnoughBalance),
			http.StatusUnprocessableEntity, CodeNotEnoughBalance,
			"cannot open channel: not enough balance: amount 5 RELAY is more than the token balance 3 RELAY"},
		{fmt.Errorf("%w: the channel is Open", ledger.ErrChannelAlreadyOpen), http.StatusConflict, CodeChannelOpen,
			"cannot open channel: channel already open: the channel is Open"},
		{ledger.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot open channel: a channel needs another peer, not this node"},
		{fmt.Errorf("%w: boom", ledger.ErrChainUnavailable), http.StatusServiceUnavailable, CodeUnknownFailure,
			"the chain provider is unavailable; cannot open channel now, try again later"},
		{errors.New("disk on fire"), http.StatusInternalServerError, CodeUnknownFailure, "disk on fire"},
	} {
		got := Classify(c.err, "open channel")
		if got.Status != c.status || got.Code != c.code || got.Msg != c.msg {
			t.Errorf("Classify(%v) = %+v, want %d %s %q", c.err, got, c.status, c.code, c.msg)
		}
	}
}
