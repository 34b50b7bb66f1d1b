//go:build !linux

package bench

import "time"

// threadCPU has no per-thread clock here: the floor falls back to the wall clock.
func threadCPU() (time.Duration, bool) { return 0, false }
