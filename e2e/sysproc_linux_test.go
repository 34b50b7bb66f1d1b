package e2e

import "syscall"

// sysProcAttr has the kernel kill a child (geth, a relayd node) when the test process dies
// without stopping it: a test binary that times out or panics runs no cleanup.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
