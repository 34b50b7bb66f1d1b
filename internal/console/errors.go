package console

import "errors"

// Errors of Dial, RunOnce and Interactive.
var (
	// ErrAuth means the node refused the token.
	ErrAuth = errors.New("the node refused the API token")
	// ErrClosed means the connection to the node ended while relayctl still
	// needed it: the node stopped, dropped this client or became
	// unreachable. Its wrapper says which.
	ErrClosed = errors.New("the connection to the node ended")
	// ErrCommandFailed means the node ran the command line, or tried to, and it failed: the end
	// of its reply is marked as an error (unknown command, bad arguments, an error of the node).
	ErrCommandFailed = errors.New("the command failed")
)
