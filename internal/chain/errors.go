package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/relayd/relayd/internal/chain/contracts"
)

var (
	// ErrProviderUnavailable means the JSON-RPC provider could not be reached or did not answer in
	// time (connection refused or reset, a call's timeout, HTTP 5xx). Retrying later may work.
	ErrProviderUnavailable = errors.New("chain provider unavailable")
	// ErrInsufficientFunds means the account cannot pay for a transaction: not enough native
	// currency for value plus gas, or not enough tokens for a transfer or channel funding.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrReverted means the contract rejected a call, at gas estimation (nothing was sent) or in
	// the block. The error is a *RevertError with the reason.
	ErrReverted = errors.New("transaction reverted")
	// ErrNotAnnounced means the account has no announcement on chain (yet).
	ErrNotAnnounced = errors.New("account not announced")
	// ErrNoContract means there is no contract code at the configured channels address: wrong
	// address, or a chain other than the one it was deployed on.
	ErrNoContract = errors.New("no contract at address")
	// ErrBadConfig means a required Config field is missing or invalid.
	ErrBadConfig = errors.New("bad chain config")
	// ErrChainReplaced means the provider serves another chain than the one the indexer's stored
	// state was built on: another chain id, contract or genesis block, or a head far below the
	// blocks indexed (a dev chain restarted fresh). The stored channels do not exist there.
	ErrChainReplaced = errors.New("the provider serves another chain than the one indexed")
)

// RevertError is a contract revert. Reason is the decoded custom error, e.g.
// "ChannelNotOpen" or "EpochMismatch{TicketEpoch:1 ChannelEpoch:2}", or the revert string, or
// "unknown" when the provider gave no data. It matches ErrReverted with errors.Is, and also
// ErrInsufficientFunds when the token reverted for lack of balance.
type RevertError struct {
	// Reason is a human-readable form of the revert.
	Reason string
	// Decoded is the binding's error struct (e.g. *contracts.RelayChannelsChannelNotOpen), or nil.
	Decoded any
	// Data is the raw revert data, if the provider returned it.
	Data []byte
	// Sent is true when the transaction was mined and failed in the block (it cost gas); false
	// when gas estimation caught the revert and nothing was sent.
	Sent bool
}

// Error implements error.
func (e *RevertError) Error() string { return "reverted: " + e.Reason }

// Unwrap returns ErrReverted, and ErrInsufficientFunds for the token's balance errors.
func (e *RevertError) Unwrap() []error {
	if strings.HasPrefix(e.Reason, "ERC20InsufficientBalance") {
		return []error{ErrReverted, ErrInsufficientFunds}
	}
	return []error{ErrReverted}
}

var (
	channelsABI = contracts.NewRelayChannels()
	tokenABI    = contracts.NewRelayToken()
)

// decodeRevert turns revert data into a RevertError, trying the channels contract's errors, the
// token's, then Error(string) and Panic(uint256).
func decodeRevert(data []byte) *RevertError {
	e := &RevertError{Data: data, Reason: "unknown"}
	if len(data) < 4 {
		return e
	}
	for _, unpack := range []func([]byte) (any, error){channelsABI.UnpackError, tokenABI.UnpackError} {
		if v, err := unpack(data); err == nil {
			e.Decoded, e.Reason = v, errorName(v)
			return e
		}
	}
	if s, err := abi.UnpackRevert(data); err == nil {
		e.Reason = s
		return e
	}
	e.Reason = fmt.Sprintf("unknown error 0x%x", data[:4])
	return e
}

// errorName renders a binding error struct as Name{Field:value ...} without the contract prefix.
func errorName(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := strings.TrimPrefix(strings.TrimPrefix(t.Name(), "RelayChannels"), "RelayToken")
	if t.NumField() == 0 {
		return name
	}
	s := fmt.Sprintf("%+v", v)
	return name + strings.TrimPrefix(s, "&")
}

// revertFrom extracts a RevertError from an RPC error, or returns nil when err is not a revert.
func revertFrom(err error) *RevertError {
	if data, ok := ethclient.RevertErrorData(err); ok {
		return decodeRevert(data)
	}
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) && (rpcErr.ErrorCode() == 3 || strings.Contains(err.Error(), "execution reverted")) {
		return decodeRevert(nil)
	}
	return nil
}

// classify wraps provider failures with ErrProviderUnavailable and balance failures with
// ErrInsufficientFunds; other errors are returned as they are. parent is the caller's context:
// a deadline of the caller is the caller's business, a deadline of our own per-call timeout is
// the provider's fault.
func classify(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrProviderUnavailable) || errors.Is(err, ErrInsufficientFunds) {
		return err
	}
	if unavailable(parent, err) {
		return fmt.Errorf("%w: %w", ErrProviderUnavailable, err)
	}
	if strings.Contains(err.Error(), "insufficient funds") {
		return fmt.Errorf("%w: %w", ErrInsufficientFunds, err)
	}
	return err
}

func unavailable(parent context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return parent.Err() == nil
	}
	var httpErr rpc.HTTPError
	if errors.As(err, &httpErr) {
		return httpErr.StatusCode >= 500 || httpErr.StatusCode == 429
	}
	var opErr *net.OpError
	var urlErr *url.Error
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &urlErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, rpc.ErrClientQuit)
}
