package cluster

import "syscall"

// sysProcAttr puts a node in its own process group, so that a Ctrl-C in the
// terminal reaches only `relayd cluster` (which then stops the nodes in
// order), and has the kernel send it SIGTERM if the cluster process dies
// without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
