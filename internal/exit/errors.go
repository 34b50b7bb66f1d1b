package exit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// The errors of the rules' and services' parsers, as the kind of a *RuleError.
var (
	// ErrBadRule is an exitAllow rule the parser refuses.
	ErrBadRule = errors.New("bad exitAllow rule")
	// ErrBadService is a --service the parser refuses.
	ErrBadService = errors.New("bad service")
)

// The refusals of Check, Dial and DialService, as the kind of a *Refusal.
var (
	// ErrNotAllowed: no exitAllow rule allows the destination (or the node is no exit, or it
	// offers no service by that name).
	ErrNotAllowed = errors.New("exit: not allowed")
	// ErrForbiddenAddress: the destination is an address the exit never dials unless a rule
	// names it (loopback, private, link-local, …) or a port of the node itself.
	ErrForbiddenAddress = errors.New("exit: forbidden address")
	// ErrUnresolvable: the destination's name does not resolve (or is not a host name).
	ErrUnresolvable = errors.New("exit: unresolvable")
	// ErrUnreachable: the dial to an allowed address failed; the *Refusal also wraps the
	// dialer's error (syscall.ECONNREFUSED, a timeout, …).
	ErrUnreachable = errors.New("exit: unreachable")
	// ErrLimit: the exit holds as many connections as it may, or opens new ones faster than it
	// may.
	ErrLimit = errors.New("exit: limit")
)

// RuleError is a rule or service the parser refuses. Its Reason is the parser's own words and
// never repeats the input, so that it may be shown to API clients; Error adds the input.
type RuleError struct {
	// Input is the rule or service as written.
	Input string
	// Index is the input's position in its list, from 1 (0: parsed alone).
	Index int
	// Reason says what is wrong with it.
	Reason string
	kind   error // ErrBadRule or ErrBadService
}

func (e *RuleError) Error() string {
	what := "rule"
	if e.kind == ErrBadService {
		what = "service"
	}
	in := e.Input
	if len(in) > 80 {
		in = in[:80] + "…"
	}
	return fmt.Sprintf("%s %q: %s", what, in, e.Reason)
}

// Unwrap returns ErrBadRule or ErrBadService.
func (e *RuleError) Unwrap() error { return e.kind }

// Reason is why a connection was not made, as the exit tells the entry (a session's reset
// carries it; the entry's SOCKS5 reply follows it). Its values are stable: they go on the wire.
type Reason uint8

// The reasons. ErrForbiddenAddress is told as ReasonNotAllowed like ErrNotAllowed: the entry
// learns that the exit's rules refuse the destination, not what the exit's network holds.
const (
	ReasonNone        Reason = 0 // the connection was made
	ReasonNotAllowed  Reason = 1 // ErrNotAllowed, ErrForbiddenAddress
	ReasonRefused     Reason = 2 // the destination refused the connection (ECONNREFUSED)
	ReasonUnreachable Reason = 3 // ErrUnresolvable, ErrUnreachable other than a refusal (no route, a timeout)
	ReasonLimit       Reason = 4 // ErrLimit
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "ok"
	case ReasonNotAllowed:
		return "not allowed"
	case ReasonRefused:
		return "refused"
	case ReasonUnreachable:
		return "unreachable"
	case ReasonLimit:
		return "limit"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// ReasonOf is the reason to tell the entry for an error of Dial or DialService: nil is
// ReasonNone, a *Refusal its Reason, a refused connection ReasonRefused, anything else
// (a context ended, an unknown failure) ReasonUnreachable.
func ReasonOf(err error) Reason {
	if err == nil {
		return ReasonNone
	}
	if r, ok := errors.AsType[*Refusal](err); ok {
		return r.Reason
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return ReasonRefused
	}
	return ReasonUnreachable
}

// Refusal is a connection the exit did not make. It unwraps to its kind (ErrNotAllowed,
// ErrForbiddenAddress, ErrUnresolvable, ErrUnreachable or ErrLimit) and, for ErrUnreachable,
// to the dialer's error. Its text says why without naming the destination (which is the
// session's secret: log it at most at Debug).
type Refusal struct {
	// Reason is what the entry is told.
	Reason Reason
	// Detail says why in words: "loopback", "no exitAllow rule allows it", "connection refused".
	Detail string
	kind   error
	cause  error
}

func (r *Refusal) Error() string { return r.kind.Error() + ": " + r.Detail }

// Unwrap returns the kind and, for ErrUnreachable, the dialer's error.
func (r *Refusal) Unwrap() []error {
	if r.cause != nil {
		return []error{r.kind, r.cause}
	}
	return []error{r.kind}
}

// refuse is a *Refusal of kind (not ErrUnreachable) with its reason.
func refuse(kind error, detail string) *Refusal {
	reason := ReasonNotAllowed
	switch kind {
	case ErrUnresolvable:
		reason = ReasonUnreachable
	case ErrLimit:
		reason = ReasonLimit
	}
	return &Refusal{Reason: reason, Detail: detail, kind: kind}
}

// unreachable is the *Refusal of a failed dial, whose detail is the system's words for it
// (never the address the dialer's error names).
func unreachable(err error) error {
	if r, ok := errors.AsType[*Refusal](err); ok { // the dialer's Control refused the address
		return r
	}
	reason, detail := ReasonUnreachable, "the dial failed"
	var errno syscall.Errno
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason, detail = ReasonRefused, "connection refused"
	case errors.As(err, &errno):
		detail = errno.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		detail = "timed out"
	case errors.Is(err, context.Canceled):
		detail = "canceled"
	}
	return &Refusal{Reason: reason, Detail: detail, kind: ErrUnreachable, cause: err}
}
