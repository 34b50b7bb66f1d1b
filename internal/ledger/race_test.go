//go:build race

package ledger

// raceEnabled: the race detector slows the settlement test's 100,000 packets tenfold; under it
// the test runs 20,000, and `make test` runs the full count once more without it.
const raceEnabled = true
