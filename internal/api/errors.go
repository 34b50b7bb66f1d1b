package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
)

var (
	// ErrAliasNotFound is what Node.DeleteAlias returns, wrapped, for an
	// alias that is not set.
	ErrAliasNotFound = errors.New("alias not found")

	// ErrInvalidAddress reports text that is not a chain address (ParseAddress).
	ErrInvalidAddress = errors.New("not a chain address (0x and 40 hexadecimal digits)")

	// ErrAddressChecksum reports a mixed-case chain address whose EIP-55
	// checksum is wrong (ParseAddress): most likely a mistyped address.
	ErrAddressChecksum = errors.New("mixed-case address with a wrong EIP-55 checksum")
)

// errorTable is where the sentinel errors of the node's layers become a
// status and a code: the one place that decides them (an *Error carries
// its own). msg is the message, with the operation for %s; with detail
// the error's own text follows it (the ledger's errors say which amounts
// or which contract error).
var errorTable = []struct {
	err    error
	status int
	code   string
	msg    string
	detail bool
}{
	{ErrAliasNotFound, http.StatusNotFound, CodePeerIDNotFound, "cannot %s: no such alias", false},
	{identity.ErrNoAddress, http.StatusNotFound, CodePeerIDNotFound, "cannot %s the peer: it is not known (no address for it)", false},
	{identity.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s this node itself", false},
	{ledger.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s: a channel needs another peer, not this node", false},
	{ledger.ErrChannelNotFound, http.StatusNotFound, CodeChannelNotFound, "cannot %s", true},
	{ledger.ErrChannelAlreadyOpen, http.StatusConflict, CodeChannelOpen, "cannot %s", true},
	{ledger.ErrNotEnoughBalance, http.StatusUnprocessableEntity, CodeNotEnoughBalance, "cannot %s", true},
	{ledger.ErrChainUnavailable, http.StatusServiceUnavailable, CodeUnknownFailure, "the chain provider is unavailable; cannot %s now, try again later", false},
	{ledger.ErrAlreadyRedeemed, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrTicketVoid, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrClosureTimeNotReached, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrContractRefused, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s", true},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, CodeTimeout, "%s timed out", false},
}

// lookup finds err in errorTable.
func lookup(err error, op string) (status int, code, msg string, ok bool) {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			msg := fmt.Sprintf(e.msg, op)
			if e.detail {
				msg += ": " + err.Error()
			}
			return e.status, e.code, msg, true
		}
	}
	return 0, "", "", false
}

// Classify is what the API answers for err in operation op (e.g. "open
// channel"): an *Error's own status, code and message, the error table's
// entry, or a 500 with the error's text.
func Classify(err error, op string) Error {
	var ae *Error
	if errors.As(err, &ae) {
		return *ae
	}
	if status, code, msg, ok := lookup(err, op); ok {
		return Error{Status: status, Code: code, Msg: msg}
	}
	return Error{Status: http.StatusInternalServerError, Code: CodeUnknownFailure, Msg: err.Error()}
}

// Error codes carried in the status field of the error envelope.
const (
	CodeInvalidInput     = "INVALID_INPUT"
	CodeInvalidPeerID    = "INVALID_PEERID"
	CodeInvalidAmount    = "INVALID_AMOUNT"
	CodeInvalidCurrency  = "INVALID_CURRENCY"
	CodeInvalidAddress   = "INVALID_ADDRESS"
	CodePeerIDNotFound   = "PEERID_NOT_FOUND"
	CodeChannelNotFound  = "CHANNEL_NOT_FOUND"
	CodeChannelOpen      = "CHANNEL_ALREADY_OPEN"
	CodeNotEnoughBalance = "NOT_ENOUGH_BALANCE"
	CodeTicketsNotFound  = "TICKETS_NOT_FOUND"
	CodePathNotFound     = "PATH_NOT_FOUND"
	CodeMessageTooLarge  = "MESSAGE_TOO_LARGE"
	CodeTimeout          = "TIMEOUT"
	CodeNotFound         = "NOT_FOUND"
	CodeUnknownFailure   = "UNKNOWN_FAILURE"
	// CodeInvalidSetting and CodeInvalidSettingValue are the original
	// interface's codes for a setting that does not exist and a value it
	// cannot take.
	CodeInvalidSetting      = "INVALID_SETTING"
	CodeInvalidSettingValue = "INVALID_SETTING_VALUE"
)

// ErrorBody is the JSON envelope of every failed operation except the
// authentication failure, which has the seed's own body (AuthFailure).
type ErrorBody struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"status":"UNKNOWN_FAILURE","error":"response encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// writeError writes the error envelope.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Status: code, Error: msg})
}
