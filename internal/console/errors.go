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
)
