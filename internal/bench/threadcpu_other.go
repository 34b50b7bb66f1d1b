//go:build !linux

package bench

import "time"

// ThreadCPU has no per-thread clock here: the floor falls back to the wall clock.
func ThreadCPU() (time.Duration, bool) { return 0, false }
