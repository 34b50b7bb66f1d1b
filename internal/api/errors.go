package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/history"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
)

var (
	// ErrInvalidAddress reports text that is not a chain address (ParseAddress).
	ErrInvalidAddress = errors.New("not a chain address (0x and 40 hexadecimal digits)")

	// ErrAddressChecksum reports a mixed-case chain address whose EIP-55
	// checksum is wrong (ParseAddress): most likely a mistyped address.
	ErrAddressChecksum = errors.New("mixed-case address with a wrong EIP-55 checksum")
)

// errorTable is where the sentinel errors of the node's rooms become a status and a code: the one
// place that decides them (an *Error carries its own). msg is the message, with the operation for
// %s, or "" for the sentinel's own text (every sentinel here is a sentence for clients). With
// detail the error's whole text follows: only for errors whose wrapping is documented to hold
// nothing but amounts, names and the contract's verdicts (the ledger's, the settings', the
// peers'). Any other error's text stays in the node's log.
var errorTable = []struct {
	err    error
	status int
	code   string
	msg    string
	detail bool
}{
	{peers.ErrAliasNotFound, http.StatusNotFound, CodePeerIDNotFound, "cannot %s: no such alias", false},
	{peers.ErrInvalidAlias, http.StatusBadRequest, CodeInvalidInput, "cannot %s", true},
	{peers.ErrUnknownName, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s", true},
	{identity.ErrNoAddress, http.StatusNotFound, CodePeerIDNotFound, "cannot %s the peer: it is not known (no address for it)", false},
	{identity.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s this node itself", false},
	{settings.ErrUnknown, http.StatusBadRequest, CodeInvalidSetting, "", true},
	{settings.ErrInvalid, http.StatusBadRequest, CodeInvalidSettingValue, "", true},
	{router.ErrMessageTooLarge, http.StatusBadRequest, CodeMessageTooLarge, fmt.Sprintf("message is longer than %d bytes", packet.MaxMessageSize), false},
	{router.ErrNoChain, http.StatusUnprocessableEntity, CodePathNotFound, "", false},
	{router.ErrNoPath, http.StatusUnprocessableEntity, CodePathNotFound, "", false},
	{router.ErrNotEnoughBalance, http.StatusUnprocessableEntity, CodeNotEnoughBalance, "", false},
	{router.ErrUnreachable, http.StatusUnprocessableEntity, CodePathNotFound, "", false},
	{router.ErrBadRoute, http.StatusBadRequest, CodeInvalidInput, "", false},
	{router.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "", false},
	{router.ErrBusy, http.StatusServiceUnavailable, CodeUnknownFailure, "", false},
	{router.ErrReplyBlock, http.StatusConflict, CodeNoReplyBlock, "", false},
	// The courier wraps its sentinels with counts only (bytes, packets, reply blocks).
	{courier.ErrEmpty, http.StatusBadRequest, CodeInvalidInput, "cannot %s: the body is empty", false},
	{courier.ErrInvalid, http.StatusBadRequest, CodeInvalidInput, "cannot %s", true},
	{courier.ErrTooLarge, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "cannot %s", true},
	{courier.ErrReplyTooLarge, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "cannot %s", true},
	{courier.ErrNotFound, http.StatusNotFound, CodeMessageNotFound, "cannot %s: no such message", false},
	{courier.ErrNoReplyBlock, http.StatusConflict, CodeNoReplyBlock, "cannot %s: no reply block is left for this message", false},
	{courier.ErrFull, http.StatusInsufficientStorage, CodeStoreFull,
		"cannot %s: the node's message store is full (messages waiting to be sent or read); retry once some are delivered or read", false},
	{ledger.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s: a channel needs another peer, not this node", false},
	{ledger.ErrChannelNotFound, http.StatusNotFound, CodeChannelNotFound, "cannot %s", true},
	{ledger.ErrChannelAlreadyOpen, http.StatusConflict, CodeChannelOpen, "cannot %s", true},
	{ledger.ErrNotEnoughBalance, http.StatusUnprocessableEntity, CodeNotEnoughBalance, "cannot %s", true},
	{ledger.ErrChainUnavailable, http.StatusServiceUnavailable, CodeUnknownFailure, "the chain provider is unavailable; cannot %s now, try again later", false},
	{ledger.ErrAlreadyRedeemed, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrTicketVoid, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrClosureTimeNotReached, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s: the contract refused", true},
	{ledger.ErrContractRefused, http.StatusUnprocessableEntity, CodeUnknownFailure, "cannot %s", true},
	// The gateway wraps ErrBadOpen and ErrListen with the request's own values only (the
	// address, why it cannot be listened on), which the operator gave.
	{gateway.ErrBadOpen, http.StatusBadRequest, CodeInvalidInput, "cannot %s", true},
	{gateway.ErrSelf, http.StatusBadRequest, CodeInvalidPeerID, "cannot %s: the destination is this node itself; a session goes to another node", false},
	{gateway.ErrUnknownSession, http.StatusNotFound, CodeSessionNotFound, "cannot %s: no such session", false},
	// An address in use, or one the node may not listen on: 409, the node's state refuses it
	// (the request is well formed); another listen address, or none, may work.
	{gateway.ErrListen, http.StatusConflict, CodeCannotListen, "cannot %s", true},
	// The node holds as many sessions as it may: 429, retry once one is closed.
	{gateway.ErrLimit, http.StatusTooManyRequests, CodeTooManySessions,
		"cannot %s: the node holds as many sessions as it may; close one first", false},
	{history.ErrUnknownResolution, http.StatusBadRequest, CodeInvalidInput, "resolution must be hour, day or week", false},
	{ErrBackupSpace, http.StatusInsufficientStorage, CodeStoreFull, "cannot %s: the node's disk has no room for the copy", false},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, CodeTimeout, "%s timed out", false},
}

// lookup finds err in errorTable.
func lookup(err error, op string) (status int, code, msg string, ok bool) {
	for _, e := range errorTable {
		if !errors.Is(err, e.err) {
			continue
		}
		switch {
		case e.msg == "" && e.detail:
			msg = err.Error()
		case e.msg == "":
			msg = e.err.Error()
		case !strings.Contains(e.msg, "%s"):
			msg = e.msg
		default:
			msg = fmt.Sprintf(e.msg, op)
			if e.detail {
				msg += ": " + err.Error()
			}
		}
		return e.status, e.code, msg, true
	}
	return 0, "", "", false
}

// classify is what the API answers for err in operation op (e.g. "open channel"): an *Error's
// own status, code and message, the error table's entry, or a 500 whose message keeps the
// error's text out.
func (s *Server) classify(err error, op string) (status int, code, msg string) {
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Status, ae.Code, ae.Msg
	}
	if status, code, msg, ok := lookup(err, op); ok {
		return status, code, msg
	}
	return http.StatusInternalServerError, CodeUnknownFailure, op + " failed because of a fault of the node; its log says more"
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
	// CodePayloadTooLarge: a request body over its operation's limit, or a message body over
	// the node's maxMessageBytes setting, or an answer that needs more reply blocks than are
	// left (HTTP 413).
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// CodeMessageNotFound: no outgoing message has that id, or no inbox message that seq.
	CodeMessageNotFound = "MESSAGE_NOT_FOUND"
	// CodeNoReplyBlock: the inbox message has no reply block left to answer it on (HTTP 409).
	CodeNoReplyBlock = "NO_REPLY_BLOCK"
	// CodeStoreFull: the outbox or the inbox is at its quota, or the disk is full (HTTP 507).
	CodeStoreFull = "STORE_FULL"
	// CodeSessionNotFound: no open session has that id (HTTP 404).
	CodeSessionNotFound = "SESSION_NOT_FOUND"
	// CodeCannotListen: the node cannot listen on a session's local address: in use, or not
	// one it may listen on (HTTP 409).
	CodeCannotListen = "CANNOT_LISTEN"
	// CodeTooManySessions: the node holds as many sessions as it may (HTTP 429).
	CodeTooManySessions = "TOO_MANY_SESSIONS"
	CodeTimeout         = "TIMEOUT"
	CodeNotFound        = "NOT_FOUND"
	CodeUnknownFailure  = "UNKNOWN_FAILURE"
	// CodeInvalidSetting and CodeInvalidSettingValue are the original
	// interface's codes for a setting that does not exist and a value it
	// cannot take.
	CodeInvalidSetting      = "INVALID_SETTING"
	CodeInvalidSettingValue = "INVALID_SETTING_VALUE"
	// CodeInvalidHost: the request names the node by a name it does not answer to (a browser
	// after DNS rebinding); CodeForbiddenOrigin: a page of an origin the node does not allow
	// (origin.Policy).
	CodeInvalidHost     = "INVALID_HOST"
	CodeForbiddenOrigin = "FORBIDDEN_ORIGIN"
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
