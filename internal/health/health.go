// Package health is the vocabulary of a node's readiness (GET /readyz): each part of the node
// that can be unready (the chain provider, the indexer, the transport, the relay's store) says
// so about itself as Checks, which the REST API adds up. It is pure and imports nothing of
// relayd's.
package health

import "context"

// Check is one part's readiness.
type Check struct {
	// Name names the part ("chain", "indexer", "p2p", "relay").
	Name string `json:"name"`
	// Ready reports whether it can do its work now.
	Ready bool `json:"ready"`
	// Detail says why in a sentence an operator reads (it must not hold secrets such as a
	// provider URL's path).
	Detail string `json:"detail,omitempty"`
}

// Checker reports the readiness of one or more parts.
type Checker interface {
	Checks(ctx context.Context) []Check
}

// Static is a Checker that always reports the same checks (a part the node runs without).
type Static []Check

// Checks implements Checker.
func (s Static) Checks(context.Context) []Check { return s }
