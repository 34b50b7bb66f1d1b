package networks

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownNetwork means no shipped entry and no entry of the operator's networks file has
	// the name asked for. The error lists the names that are known.
	ErrUnknownNetwork = errors.New("unknown network")
	// ErrBadNetwork means a networks file or an entry is malformed: not JSON, an unknown or
	// missing field, a value out of range. The error is a *FieldError naming the field.
	ErrBadNetwork = errors.New("bad network definition")
	// ErrMismatch means the chain disagrees with a network's entry: another chain id, no
	// contract at an address, another token, closure period or minimum win probability. The
	// error is a *MismatchError (or several joined) naming the field.
	ErrMismatch = errors.New("the chain disagrees with the network file")
	// ErrExists means Append was asked to add a network whose name the file already holds.
	ErrExists = errors.New("network already defined")
)

// FieldError is a malformed networks file or entry. It matches ErrBadNetwork.
type FieldError struct {
	// File is the networks file's path ("" for shipped entries or bytes without a file).
	File string
	// Network is the entry's name, or "#N" (1-based position) when it has no valid name; ""
	// for the file's top level.
	Network string
	// Field is the JSON field, e.g. "chainId", "closurePeriod"; "" when the JSON itself is
	// broken.
	Field string
	// Msg says what is wrong with it.
	Msg string
}

// Error implements error.
func (e *FieldError) Error() string {
	s := "networks file"
	if e.File != "" {
		s += " " + e.File
	}
	if e.Network != "" {
		s += fmt.Sprintf(": network %q", e.Network)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Unwrap returns ErrBadNetwork.
func (e *FieldError) Unwrap() error { return ErrBadNetwork }

// MismatchError is one field of a network on which the chain disagrees. It matches ErrMismatch,
// and Err when set (chain.ErrNoContract for an address without the contract).
type MismatchError struct {
	// Network is the network's name.
	Network string
	// Field is the network file's field: chainId, startBlock, channels, token, closurePeriod or
	// minWinProb.
	Field string
	// Want is what the network file says; Got what the chain says.
	Want, Got string
	// Hint says how to fix it.
	Hint string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *MismatchError) Error() string {
	s := fmt.Sprintf("network %q: %s: the network file says %s, the chain says %s", e.Network, e.Field, e.Want, e.Got)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is reports whether target is ErrMismatch.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// Unwrap returns Err.
func (e *MismatchError) Unwrap() error { return e.Err }
