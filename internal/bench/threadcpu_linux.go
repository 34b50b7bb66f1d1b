//go:build linux

package bench

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPU is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPU = 3

// ThreadCPU is the CPU time the calling OS thread has used (the caller locks its goroutine to
// the thread with runtime.LockOSThread), in nanoseconds of the kernel's scheduler accounting;
// ok is false where there is no such clock. Benchmarks that compare themselves with the floor
// time themselves with it, as the floor does.
func ThreadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPU, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
