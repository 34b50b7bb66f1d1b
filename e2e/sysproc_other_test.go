//go:build !linux

package e2e

import "syscall"

// sysProcAttr is nil off Linux, which has no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr { return nil }
