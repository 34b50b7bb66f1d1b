package cluster

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// CheckPorts makes sure every port the cluster will listen on is free on
// 127.0.0.1 by binding it for a moment. The first busy port is returned as a
// *FieldError naming the flag that chose it. Another program can still take a
// port between the check and the node's start; the node then fails with its
// own one-line error, which Run reports with its log.
func CheckPorts(c Config) error {
	for _, r := range c.portRanges() {
		for i := range r.count {
			port := r.first + i
			if err := portFree(port, r.udp); err != nil {
				who := r.what
				if r.count > 1 {
					who = fmt.Sprintf("node %d's %s", i+1, r.what)
				}
				return &FieldError{r.flag, fmt.Sprintf("chooses port %d for %s, which is not free on 127.0.0.1 (%v); pick another --%s", port, who, err, r.flag)}
			}
		}
	}
	return nil
}

// portFree binds 127.0.0.1:port over TCP (and UDP when udp) and releases it.
func portFree(port int, udp bool) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return bindError(err)
	}
	l.Close()
	if udp {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return bindError(err)
		}
		pc.Close()
	}
	return nil
}

// bindError shortens a bind failure to its cause ("address already in use").
func bindError(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
