package api

import (
	"encoding/json"
	"net/http"
)

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
