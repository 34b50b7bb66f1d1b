package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"slices"
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
	// ErrNoContract means there is no RelayChannels contract at the configured channels address:
	// no code (a wrong address, or a chain other than the one it was deployed on), or code that
	// does not answer the contract's views (another contract, e.g. the token's address).
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
	if _, ok := e.Decoded.(*contracts.RelayTokenERC20InsufficientBalance); ok {
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

// redactor removes what a provider URL may hide secrets in (path, query, fragment, user info:
// API keys such as https://mainnet.infura.io/v3/KEY) from error texts, leaving scheme and host.
// go-ethereum's errors embed the URL (`Post "https://host/v3/KEY": dial tcp ...`), and the
// client's errors reach logs, the admin WebSocket and start-up errors.
type redactor struct {
	display string   // scheme://host, what may be shown of the URL
	forms   []string // the whole URL as it may be printed, longest first
	parts   []string // its secret parts on their own, longest first
}

// redactedMark stands in for a secret part of the provider URL.
const redactedMark = "[redacted]"

func newRedactor(raw string) *redactor {
	r := &redactor{display: ProviderDisplay(raw)}
	r.forms = []string{raw}
	u, err := url.Parse(raw)
	if err != nil {
		// Without a parse nothing is known to be safe: hide the whole string wherever it appears.
		return r
	}
	r.forms = append(r.forms, u.String(), u.Redacted())
	if u.User != nil {
		user := u.User.Username()
		if pw, ok := u.User.Password(); ok {
			r.parts = append(r.parts, pw, url.QueryEscape(pw))
			// net/http prints the URL of a failed request with its password as "***".
			r.forms = append(r.forms, strings.Replace(u.String(), u.User.String()+"@", user+":***@", 1))
		}
		r.parts = append(r.parts, u.User.String(), user, url.QueryEscape(user))
	}
	if u.Path != "" && u.Path != "/" {
		r.parts = append(r.parts, u.EscapedPath(), u.Path)
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 6 { // key-like segments; "v3" or "rpc" alone are no secret
				r.parts = append(r.parts, seg)
			}
		}
	}
	if u.RawQuery != "" {
		r.parts = append(r.parts, u.RawQuery)
		if q, err := url.ParseQuery(u.RawQuery); err == nil {
			for _, vs := range q {
				r.parts = append(r.parts, vs...)
			}
		}
	}
	if u.Fragment != "" {
		r.parts = append(r.parts, u.EscapedFragment(), u.Fragment)
	}
	byLengthDesc := func(a, b string) int { return len(b) - len(a) }
	slices.SortFunc(r.forms, byLengthDesc)
	slices.SortFunc(r.parts, byLengthDesc)
	return r
}

// text returns s with every printed form of the URL replaced by its display form and every
// remaining secret part by redactedMark.
func (r *redactor) text(s string) string {
	for _, f := range r.forms {
		if f != "" {
			s = strings.ReplaceAll(s, f, r.display)
		}
	}
	for _, p := range r.parts {
		if p != "" {
			s = strings.ReplaceAll(s, p, redactedMark)
		}
	}
	return s
}

// err returns err with a redacted text. It still unwraps to err, so errors.Is and errors.As
// see go-ethereum's and the network's error types; only the text changes.
func (r *redactor) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.text(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// redactedError is an error whose text had the provider URL's secrets removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// ProviderDisplay returns what may be shown of a provider URL: its scheme and host
// (https://mainnet.infura.io), never its path, query or user info, which may hold API keys. An
// unparsable URL is shown as "(provider)".
func ProviderDisplay(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(provider)"
	}
	return u.Scheme + "://" + u.Host
}
