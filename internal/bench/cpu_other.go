//go:build !unix

package bench

import "time"

// selfCPU is unknown here.
func selfCPU() time.Duration { return 0 }
