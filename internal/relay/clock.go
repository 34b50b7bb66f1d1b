package relay

import "time"

// Clock is the relay's time source, injected so that tests control delays and timeouts.
type Clock interface {
	Now() time.Time
	// NewTimer returns a started timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's timer, like time.Timer.
type Timer interface {
	// C returns the channel the timer fires on.
	C() <-chan time.Time
	// Reset re-arms the timer to fire after d; call it only on a stopped or fired and drained
	// timer (Go 1.23 semantics make any call safe).
	Reset(d time.Duration)
	// Stop stops the timer.
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time   { return t.t.C }
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t realTimer) Stop()                 { t.t.Stop() }
