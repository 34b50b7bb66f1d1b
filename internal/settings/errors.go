package settings

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of Update and UpdateText, as the Kind of an *Error.
var (
	// ErrUnknown is a setting name that does not exist.
	ErrUnknown = errors.New("no such setting")
	// ErrInvalid is a value a setting cannot take.
	ErrInvalid = errors.New("invalid setting value")
)

// Error is a refused setting. Its text, built from the setting's own rules (never from the
// value a client sent), may be shown to clients and operators as it is.
type Error struct {
	Name   string
	Reason string
	kind   error
}

func (e *Error) Error() string {
	if e.kind == ErrUnknown {
		return fmt.Sprintf("no setting %q (%s)", e.Name, strings.Join(Names(), ", "))
	}
	return e.Name + " " + e.Reason
}

// Unwrap returns ErrUnknown or ErrInvalid.
func (e *Error) Unwrap() error { return e.kind }

func unknown(name string) error {
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return &Error{Name: name, kind: ErrUnknown}
}
