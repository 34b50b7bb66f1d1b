//go:build !linux

package cluster

import "syscall"

// sysProcAttr leaves the platform's defaults: the nodes share the cluster's
// process group, so a terminal's Ctrl-C reaches them too.
func sysProcAttr() *syscall.SysProcAttr { return nil }
