//go:build race

package gateway

// raceEnabled: the race detector is on (it slows the tests and changes what memory they use).
const raceEnabled = true
