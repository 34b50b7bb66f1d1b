package main

import (
	"fmt"
	"os"
)

// runCluster starts a local network; it is being built.
func runCluster(args []string) int {
	fmt.Fprintln(os.Stderr, "relayd cluster: not available yet")
	return 1
}
